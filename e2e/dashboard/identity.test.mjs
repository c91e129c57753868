// The Identity tab in Chromium against a real `svc serve`: an owner generates the identity secret
// (shown once, copied with the button), a token is signed in Node with the page's own Node example
// (node:crypto), a page of another origin built from the page's own embed snippet hands it to the
// real widget, and the report arrives with a verified identity. Rotating the secret in the browser
// stops the old token at once.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';
import { cspViolations, launchChromium, ownerPage, rest, startSvc, watch } from './lib.mjs';

let svc;
let chrome;
let api;
let P;
let shop; // serves `shop.html` (set by the test) on another origin
let owner;
let seen;
const scratch = mkdtempSync(join(tmpdir(), 'svc-identity-'));

before(async () => {
  svc = await startSvc();
  chrome = await launchChromium();
  api = rest(svc.url, svc.token);
  P = `/api/v1/projects/${svc.projectId}`;
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(shop.html);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  shop = { url: `http://127.0.0.1:${server.address().port}`, html: '', close: () => new Promise((r) => server.close(r)) };
  owner = await ownerPage(svc, chrome);
  seen = watch(owner.page);
});

after(async () => {
  await chrome?.close();
  await shop?.close();
  await svc?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

/** The page's Node example, as a module of its own: `svcIdentityToken(user, secret)`. */
async function nodeExample(page, name) {
  const code = await page.locator('#example-node').innerText();
  const file = join(scratch, `${name}.mjs`);
  writeFileSync(file, code);
  return (await import(pathToFileURL(file).href)).svcIdentityToken;
}

/** Serves the page's embed snippet with `token` in it and files a report through the widget there. */
async function reportWithSnippet(snippet, token, message) {
  shop.html = `<!doctype html><html><head><title>App</title></head><body><h1>Signed-in app</h1>
    ${snippet.replace('TOKEN_FROM_YOUR_SERVER', token)}</body></html>`;
  const context = await chrome.browser.newContext();
  const page = await context.newPage();
  await page.goto(shop.url + '/account');
  await page.waitForFunction(() => window.Svc && window.Svc.isInitialized() && window.Svc.getChannels().length > 0);
  const { reportId } = await page.evaluate((text) => window.Svc.report({ message: text }), message);
  await context.close();
  return api.get(`${P}/feedback/${reportId}`);
}

test('a secret generated in the dashboard signs, with the page own Node example, a token the widget gets verified', async () => {
  const { page, context } = owner;
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: svc.url });
  await page.goto(`${svc.url}/projects/${svc.projectId}/identity`);
  assert.ok(await page.getByText('Not set', { exact: true }).isVisible());

  await page.getByRole('button', { name: 'Generate a secret' }).click();
  await page.getByRole('heading', { name: 'Your new identity secret' }).waitFor();
  const secret = (await page.locator('#new-secret').innerText()).trim();
  assert.match(secret, /^[A-Za-z0-9]{48}$/);
  await page.getByRole('button', { name: 'Copy', exact: true }).click();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), secret, 'the copy button copies the secret');

  const sign = await nodeExample(page, 'first');
  const snippet = await page.locator('#example-page').innerText();
  assert.match(snippet, new RegExp(`/v1/svc/${svc.projectKey}\\.js`));
  const token = sign({ id: 'u-42', email: 'ada@example.com', name: 'Ada Lovelace' }, secret);
  const report = await reportWithSnippet(snippet, token, 'My invoice is missing');
  assert.deepEqual(report.identity, {
    userId: 'u-42', email: 'ada@example.com', name: 'Ada Lovelace', avatarUrl: null, verified: true,
  });
  assert.equal(report.context.reporter.name, 'Ada Lovelace', 'the profile travels as context.reporter');

  // Never shown again: reloading the answer fetches the tab afresh and generates nothing (a token
  // signed with the secret still verifies).
  await page.reload();
  assert.equal(new URL(page.url()).pathname, `/projects/${svc.projectId}/identity`);
  assert.ok(!(await page.content()).includes(secret), 'a reload does not show the secret');
  assert.equal((await reportWithSnippet(snippet, token, 'Still me after a reload')).identity?.verified, true, 'a reload did not rotate it');
  await page.goto(`${svc.url}/projects/${svc.projectId}/identity`);
  assert.ok(!(await page.content()).includes(secret));
  assert.ok(await page.getByText('Set', { exact: true }).isVisible());

  // Rotate: the old token stops verifying at once; the new secret's token verifies.
  await page.getByRole('button', { name: 'Rotate: generate a new secret' }).click();
  const rotated = (await page.locator('#new-secret').innerText()).trim();
  assert.notEqual(rotated, secret);
  const stale = await reportWithSnippet(snippet, token, 'Signed with the old secret');
  assert.deepEqual([stale.identity, stale.identityError], [null, 'invalid_signature']);
  const fresh = await reportWithSnippet(snippet, (await nodeExample(page, 'second'))({ id: 'u-43', email: 'b@example.com', name: 'Bo' }, rotated), 'New secret');
  assert.equal(fresh.identity.userId, 'u-43');

  // Clear (confirmed): the header is ignored.
  await page.getByLabel(/I understand/).check();
  await page.getByRole('button', { name: 'Clear the identity secret' }).click();
  await page.getByText('The identity secret is cleared').waitFor();
  assert.equal((await api.get(P)).identitySecretSet, false);
  const ignored = await reportWithSnippet(snippet, token, 'No secret any more');
  assert.equal(ignored.identity, null);
  assert.equal(ignored.identityError ?? null, null);

  assert.deepEqual(seen.errors, []);
  assert.deepEqual(cspViolations(svc), []);
});
