// A newcomer following the README on a phone-sized screen, in Chromium against a real `svc serve`:
// the sign-in page says where the first account comes from, the printed link makes it, the empty
// inbox points to the demo page, a report sent from /demo at 375 px (its launcher on the screen,
// the page no wider than it, nothing missing) arrives in the inbox, and the person changes their
// password on Your account. Then the two redirects an attacker would use: the browser stays on Svc.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PASSWORD, launchChromium, rest, startSvc, until, watch } from './lib.mjs';

let svc;
let chrome;

before(async () => {
  svc = await startSvc({ firstAccount: true });
  chrome = await launchChromium();
});

after(async () => {
  await chrome?.close();
  await svc?.stop();
});

const PHONE = { viewport: { width: 375, height: 812 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 };

/** Responses of 400 and more a page got (a missing favicon included). */
function failures(page) {
  const failed = [];
  page.on('response', (response) => {
    if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`);
  });
  return failed;
}

describe('a newcomer on a phone', () => {
  let context;
  let page;

  test('the sign-in page says where the first account comes from, and the printed link makes it', async () => {
    context = await chrome.browser.newContext(PHONE);
    page = await context.newPage();
    const seen = watch(page);
    await page.goto(svc.url + '/');
    await page.getByRole('heading', { name: 'No account exists yet' }).waitFor();
    await page.goto(svc.firstAccount);
    await page.getByLabel('Name').fill('Nina Newcomer');
    await page.getByLabel('Email').fill('nina@example.com');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForURL(svc.url + '/');
    const start = page.getByRole('region', { name: 'No reports yet' });
    await start.waitFor();
    assert.equal(await start.getByRole('link', { name: 'demo page' }).getAttribute('href'), '/demo');
    assert.match(await start.getByRole('link', { name: 'Install tab' }).getAttribute('href'), /^\/projects\/\w+\/install$/);
    assert.deepEqual(seen.errors, []);
  });

  test('a report sent from /demo at 375 px arrives in the inbox', async () => {
    const demo = await context.newPage();
    const failed = failures(demo);
    const seen = watch(demo);
    await demo.goto(svc.url + '/demo');
    const launcher = demo.getByRole('button', { name: /Send feedback/ });
    await launcher.waitFor();
    const width = await demo.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= 375, `the page is ${width} px wide on a 375 px screen`);
    const box = await launcher.boundingBox();
    assert.ok(box && box.x >= 0 && box.y >= 0 && box.x + box.width <= 375 && box.y + box.height <= 812, `launcher at ${JSON.stringify(box)}`);
    await launcher.tap();
    const panel = demo.getByRole('dialog', { name: 'Feedback' });
    await panel.waitFor();
    await panel.getByLabel('Message').fill('The Pay button is cut off on my phone');
    await panel.getByRole('button', { name: 'Send', exact: true }).tap();
    const api = rest(svc.url, svc.token);
    await until(async () => (await api.get(`/api/v1/projects/${svc.projectId}/feedback`)).items.length === 1, 10000, 'the report');
    assert.deepEqual(failed, [], 'every request of the demo page succeeded');
    assert.deepEqual(seen.errors, []);
    await demo.close();

    await page.reload();
    await page.getByRole('link', { name: /The Pay button is cut off on my phone/ }).waitFor();
  });

  test('Your account changes the password; the old one no longer signs in', async () => {
    await page.goto(svc.url + '/account');
    const section = page.getByRole('region', { name: 'Password' });
    await section.getByLabel('Current password').fill(PASSWORD);
    await section.getByLabel('New password').fill('a brand new passphrase');
    await section.getByRole('button', { name: 'Change password' }).click();
    await page.getByRole('status').getByText('Your password is changed.').waitFor();
    await context.close();

    const other = await chrome.browser.newContext();
    const again = await other.newPage();
    await again.goto(svc.url + '/sign-in');
    await again.getByLabel('Email').fill('nina@example.com');
    await again.getByLabel('Password').fill(PASSWORD);
    await again.getByRole('button', { name: 'Sign in' }).click();
    await again.getByRole('alert').getByText('That email and password do not match an account.').waitFor();
    await again.getByLabel('Password').fill('a brand new passphrase');
    await again.getByRole('button', { name: 'Sign in' }).click();
    await again.waitForURL(svc.url + '/');
    await other.close();
  });
});

describe('redirects an attacker would use', () => {
  test('a sign-in link whose next hides a tab leads to the inbox, not off-site', async () => {
    const context = await chrome.browser.newContext();
    const page = await context.newPage();
    const offsite = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(svc.url)) offsite.push(request.url());
    });
    await page.goto(svc.url + '/sign-in?next=%2F%09%2Fevil.example%2Fx');
    await page.getByLabel('Email').fill('nina@example.com');
    await page.getByLabel('Password').fill('a brand new passphrase');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(svc.url + '/');
    assert.deepEqual(offsite, [], 'the browser stayed on Svc');
    await context.close();
  });

  test('an authorization request from a client anyone could register is refused on a page of Svc', async () => {
    const registered = await fetch(svc.url + '/register', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Redirector', redirect_uris: ['https://evil.example/land'] }),
    });
    assert.equal(registered.status, 201);
    const { client_id: clientId } = await registered.json();
    const context = await chrome.browser.newContext();
    const page = await context.newPage();
    const offsite = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(svc.url)) offsite.push(request.url());
    });
    const query = new URLSearchParams({ response_type: 'token', client_id: clientId, redirect_uri: 'https://evil.example/land', state: 'x' });
    await page.goto(`${svc.url}/authorize?${query}`);
    await page.getByRole('heading', { name: 'The connection was refused' }).waitFor();
    assert.equal(new URL(page.url()).origin, svc.url, 'still on Svc');
    assert.ok(await page.getByRole('link', { name: 'Return to evil.example' }).isVisible(), 'a person decides whether to go back');
    assert.deepEqual(offsite, [], 'nothing was requested off-site');
    await context.close();
  });
});
