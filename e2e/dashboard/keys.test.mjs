// Keys and members in Chromium against a real `svc serve`: an owner mints a key on the project's
// Keys tab (shown once, gone after a reload), uses it with curl, revokes it in the page and curl
// gets 401; the owner invites a second person, who opens the link in a fresh browser, creates an
// account and lands in the inbox with the organization's reports.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { PASSWORD, cspViolations, ingest, launchChromium, ownerPage, startSvc, unsafeMarkup, watch } from './lib.mjs';

const run = promisify(execFile);

let svc;
let chrome;
let owner; // {context, page, seen}

before(async () => {
  svc = await startSvc();
  chrome = await launchChromium();
  const { context, page } = await ownerPage(svc, chrome, { email: 'olivia@example.com', name: 'Olivia Owner' });
  owner = { context, page, seen: watch(page) };
});

after(async () => {
  await chrome?.close();
  await svc?.stop();
});

/** `curl` against `/api/v1/me` with a bearer key; resolves with the HTTP status. */
async function curlMe(key) {
  const { stdout } = await run('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code}', '-H', `Authorization: Bearer ${key}`, `${svc.url}/api/v1/me`]);
  return Number(stdout.trim());
}

test('an owner mints a key (shown once), uses it with curl, revokes it in the page and curl gets 401', async () => {
  const { page, seen } = owner;
  await owner.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: svc.url });
  await page.goto(`${svc.url}/projects/${svc.projectId}/keys`);
  await page.getByRole('heading', { name: 'Secret keys' }).waitFor();
  assert.equal(await page.getByRole('link', { name: 'Keys' }).getAttribute('aria-current'), 'page');

  // Keyboard only: name, scopes and lifetime, then the button.
  await page.getByLabel('Name').fill('curl check');
  await page.getByRole('checkbox', { name: /project:read/ }).check();
  await page.getByLabel('Expires').selectOption({ label: '1 day' });
  await page.getByRole('button', { name: 'Mint key' }).focus();
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Key “curl check” minted' }).waitFor();
  const secret = (await page.locator('#minted-key').textContent()).trim();
  assert.match(secret, /^pr_sk_[A-Za-z0-9]{40}$/);
  assert.ok(!page.url().includes(secret), 'the secret is not in the address');

  await page.getByRole('button', { name: 'Copy', exact: true }).click();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), secret, 'the copy button copies the key');

  // A reload shows the page afresh: no secret, and no second key minted by posting again.
  await page.reload();
  await page.getByRole('heading', { name: 'Secret keys' }).waitFor();
  assert.equal(await page.locator('#minted-key').count(), 0, 'the key is not shown again');
  assert.ok(!(await page.content()).includes(secret));
  const row = page.locator('tr', { hasText: 'curl check' });
  assert.equal(await row.count(), 1, 'the reload did not mint another key');
  assert.ok(await row.getByText('Dashboard').isVisible(), 'the key says it was made in the dashboard');
  assert.ok(await row.getByText('in 23 h').or(row.getByText('in 1 d')).first().isVisible(), 'it expires in a day');

  assert.equal(await curlMe(secret), 200, 'curl with the new key');
  assert.equal(await curlMe('pr_sk_' + 'x'.repeat(40)), 401, 'and without a valid one');

  // Revoke with confirmation.
  await row.getByText('Revoke…').click();
  await row.getByRole('button', { name: 'Revoke “curl check”' }).click();
  await page.getByText('Revoked the key curl check.').waitFor();
  assert.ok(await page.locator('tr', { hasText: 'curl check' }).getByText('Revoked', { exact: true }).isVisible());
  assert.equal(await curlMe(secret), 401, 'curl with the revoked key');

  assert.deepEqual(await unsafeMarkup(page), []);
  assert.deepEqual(seen.errors, []);
});

test('an owner invites a second person, who creates an account from the link and lands in the inbox', async () => {
  const { page, seen } = owner;
  await ingest(svc).report({ blocks: [{ type: 'text', text: 'The invoice total is wrong' }] });

  await page.goto(`${svc.url}/members`);
  await page.getByRole('heading', { name: 'Members', exact: true }).waitFor();
  await page.getByLabel('Role', { exact: true }).selectOption('member');
  await page.getByRole('button', { name: 'Create invitation link' }).click();
  const link = (await page.locator('code[id^="invite-link-"]').textContent()).trim();
  assert.match(link, new RegExp(`^${svc.url}/invite\\?token=svl_\\S+$`));
  await page.getByText('Svc mails invitations for you').waitFor();

  // The invited person, in a browser of their own.
  const context = await chrome.browser.newContext();
  const guest = await context.newPage();
  const guestSeen = watch(guest);
  await guest.goto(link);
  await guest.getByRole('heading', { name: 'Join Default' }).waitFor();
  await guest.getByLabel('Name').fill('Nina Newcomer');
  await guest.getByLabel('Email').fill('nina@example.com');
  await guest.getByLabel('Password').fill(PASSWORD);
  await guest.getByRole('button', { name: 'Create account and join' }).click();
  await guest.waitForURL(svc.url + '/');
  assert.ok(await guest.locator('.topbar .me').getByText('Nina Newcomer').isVisible(), 'signed in as the new person');
  await guest.getByText('The invoice total is wrong').first().waitFor();

  // The link worked once.
  const again = await (await chrome.browser.newContext()).newPage();
  assert.equal((await again.goto(link)).status(), 404);

  // The owner sees the new member and the log.
  await page.goto(`${svc.url}/members`);
  const member = page.locator('tr', { hasText: 'nina@example.com' });
  assert.equal((await member.locator('.badge').first().textContent()).trim(), 'member');
  await page.getByText('added Nina Newcomer as member').waitFor();

  assert.deepEqual(await unsafeMarkup(guest), []);
  assert.deepEqual(guestSeen.errors, []);
  assert.deepEqual(seen.errors, []);
  assert.deepEqual(cspViolations(svc), []);
  await context.close();
});
