// The OAuth consent page in Chromium against a real `svc serve`: an application registers with a
// hostile `client_name`, a signed-in owner opens its authorization request, and nothing of the name
// becomes markup or runs (no dialog, no console message, no CSP report) there, on the Keys tab or on
// the account page. Keyboard only: Tab reaches the choices, Allow and Deny; Enter on Allow leads on
// to the application's loopback redirect URI (the page's policy lets the form go there) with a code
// the token endpoint trades for the key; Deny sends access_denied; Disconnect on the account page
// revokes the key.

import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { after, before, test } from 'node:test';
import { cspViolations, launchChromium, ownerPage, startSvc, unsafeMarkup, until, watch } from './lib.mjs';

// Every payload logs "XSS ..." and opens a dialog if it ever runs; 100 characters at most.
const HOSTILE = `"><img src=x onerror=alert('XSS')><svg onload=console.log('XSS')><script>alert(1)</script>`;

let svc;
let chrome;
let owner; // {context, page, seen}
let callback; // {url, hits: [URLSearchParams]}

before(async () => {
  svc = await startSvc();
  chrome = await launchChromium();
  const { context, page } = await ownerPage(svc, chrome, { email: 'olivia@example.com', name: 'Olivia Owner' });
  owner = { context, page, seen: watch(page) };
  // The application's loopback redirect URI (RFC 8252): a listener on another port.
  const hits = [];
  const server = createServer((request, response) => {
    const url = new URL(request.url, 'http://127.0.0.1');
    if (url.pathname === '/callback') hits.push(url.searchParams); // not the browser's /favicon.ico
    response.writeHead(200, { 'content-type': 'text/plain' }).end('You can close this window.');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  callback = { url: `http://127.0.0.1:${server.address().port}/callback`, hits, server };
});

after(async () => {
  callback?.server.close();
  await chrome?.close();
  await svc?.stop();
});

const verifier = randomBytes(32).toString('base64url');
const challenge = createHash('sha256').update(verifier).digest('base64url');

async function register() {
  const r = await fetch(svc.url + '/register', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: HOSTILE, redirect_uris: [callback.url] }),
  });
  const body = await r.json();
  assert.equal(r.status, 201, JSON.stringify(body));
  assert.equal(body.client_name, HOSTILE, 'stored as given (it is text)');
  return body.client_id;
}

function authorizeUrl(clientId, state) {
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: callback.url,
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    resource: `${svc.url}/mcp`,
    scope: 'feedback:read',
  });
  return `${svc.url}/authorize?${query}`;
}

/** Presses Tab until `target` has focus (at most 40 times); resolves with what had focus on the way. */
async function tabTo(page, target) {
  const passed = [];
  for (let i = 0; i < 40; i++) {
    await page.keyboard.press('Tab');
    const here = await page.evaluate(() => {
      const el = document.activeElement;
      return `${el.tagName.toLowerCase()}${el.name ? `[name=${el.name}]` : ''}${el.value ? `=${el.value}` : ''}|${el.textContent.trim()}`;
    });
    passed.push(here);
    if (await target.evaluate((el) => el === document.activeElement)) return passed;
  }
  assert.fail(`Tab never reached the control; passed ${passed.join(', ')}`);
}

async function assertSafe(page, what) {
  assert.deepEqual(await unsafeMarkup(page), [], what);
  assert.ok(!owner.seen.console.some((line) => line.includes('XSS')), `${what}: ${owner.seen.console}`);
  assert.deepEqual(owner.seen.dialogs, [], what);
  assert.deepEqual(owner.seen.errors, [], what);
}

test('a hostile client name stays text on the consent page; the keyboard allows, and the code becomes the key', async () => {
  const { page } = owner;
  const clientId = await register();
  await page.goto(authorizeUrl(clientId, 'state-1'));
  const heading = page.getByRole('heading', { level: 1 });
  assert.equal((await heading.textContent()).trim(), `Connect ${HOSTILE}`, 'the name, as text');
  assert.ok(await page.getByText(new URL(callback.url).host, { exact: true }).isVisible(), 'names the redirect host');
  await assertSafe(page, 'consent page');

  // Keyboard only: from the top, Tab reaches a project, the access level, Allow and Deny.
  await page.locator('body').focus();
  const passed = await tabTo(page, page.getByRole('button', { name: 'Deny' }));
  assert.ok(passed.some((s) => s.startsWith('input[name=grant]=project:')), passed.join(', '));
  assert.ok(passed.some((s) => s.startsWith('input[name=access]=read')), 'the scope hint preselects read-only');
  assert.ok(passed.some((s) => s.startsWith('button[name=decision]=approve|Allow')), passed.join(', '));
  await page.keyboard.press('Shift+Tab');
  assert.equal(await page.evaluate(() => document.activeElement.textContent.trim()), 'Allow');
  await page.keyboard.press('Enter');

  await until(() => callback.hits.length === 1, 10000, 'the redirect reaches the application');
  await page.waitForURL((url) => url.href.startsWith(callback.url));
  const answer = callback.hits[0];
  assert.equal(answer.get('state'), 'state-1');
  assert.equal(answer.get('iss'), svc.url);
  assert.ok(answer.get('code'));
  assert.deepEqual(cspViolations(svc), [], 'the form was allowed to lead on to the redirect URI');

  const r = await fetch(svc.url + '/token', {
    method: 'POST',
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: answer.get('code'),
      redirect_uri: callback.url,
      client_id: clientId,
      code_verifier: verifier,
      resource: `${svc.url}/mcp`,
    }),
  });
  const token = await r.json();
  assert.equal(r.status, 200, JSON.stringify(token));
  assert.equal(token.scope, 'feedback:read');
  owner.token = token.access_token;
  owner.clientId = clientId;

  // The key as listed: its hostile name is text on the Keys tab and on the account page.
  await page.goto(`${svc.url}/projects/${svc.projectId}/keys`);
  const row = page.locator('tr', { hasText: 'OAuth client' });
  assert.equal(await row.count(), 1);
  assert.ok((await row.textContent()).includes(`OAuth: ${HOSTILE}`.slice(0, 100)));
  assert.ok((await row.textContent()).includes('connected by Olivia Owner'));
  await assertSafe(page, 'keys tab');

  await page.getByRole('link', { name: 'Olivia Owner' }).click();
  await page.getByRole('heading', { name: 'Connected agents' }).waitFor();
  await assertSafe(page, 'account page');
});

test('Deny by keyboard sends access_denied; Disconnect on the account page revokes the key', async () => {
  const { page } = owner;
  await page.goto(authorizeUrl(owner.clientId, 'state-2'));
  await page.locator('body').focus();
  await tabTo(page, page.getByRole('button', { name: 'Deny' }));
  await page.keyboard.press('Enter');
  await until(() => callback.hits.length === 2, 10000, 'the denial reaches the application');
  await page.waitForURL((url) => url.href.startsWith(callback.url));
  assert.equal(callback.hits[1].get('error'), 'access_denied');
  assert.equal(callback.hits[1].get('state'), 'state-2');
  assert.equal(callback.hits[1].get('code'), null);

  const ping = () =>
    fetch(svc.url + '/mcp', {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
  assert.equal((await ping()).status, 200);
  await page.goto(`${svc.url}/account`);
  await page.getByRole('button', { name: `Disconnect ${HOSTILE}` }).click();
  await page.getByText(/^Disconnected /).waitFor();
  const refused = await ping();
  assert.equal(refused.status, 401);
  assert.match(refused.headers.get('www-authenticate'), /^Bearer resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp"$/);
  await assertSafe(page, 'account page after disconnecting');
  assert.deepEqual(cspViolations(svc), []);
});
