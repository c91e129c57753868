// Reporters in Chromium, on a shop page of another origin that embeds the widget, against a real
// `svc serve` that mails through a real SMTP server (aiosmtpd) and signs reporters in through a real
// OpenID Connect provider (oidc-provider):
//
// - email mode, required: the panel asks for an address, the code arrives by SMTP, the reporter
//   signs in and files a report that carries her verified identity; an agent answers through the
//   tool endpoint; a mark on the launcher says so; she reads the answer in History and replies; the
//   agent marks the report fixed, she is told by mail, and "Works now" makes it verified as her act;
// - provider mode: the same sign-in through the provider's popup, and a page of an origin the
//   project does not allow gets nothing, neither from the popup it opens nor from a popup it lies
//   about.
//
// Wrong, expired and overused codes, forged tokens and tokens of another project are refused in
// crates/svc-server/tests/server/reporters.rs.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ROOT, callTool, launchChromium, rest, startSvc, until, watch } from './lib.mjs';

const SMTP_PYTHON = process.env.SVC_TEST_SMTP_PYTHON || join(ROOT, 'target', 'mail-venv', 'bin', 'python');
const PROVIDER = join(ROOT, 'e2e', 'oidc', 'provider.mjs');
const missing = [
  !existsSync(SMTP_PYTHON) && `no Python with aiosmtpd at ${SMTP_PYTHON} (e2e/dashboard/run.sh installs it)`,
  !existsSync(join(ROOT, 'e2e', 'oidc', 'node_modules', 'oidc-provider')) && 'e2e/oidc has no node_modules (e2e/dashboard/run.sh installs them)',
].filter(Boolean);

/** A child process that prints `<WORD> <value>` once it is ready; resolves {value, child}. */
function startChild(command, args, word) {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${command} did not start:\n${out}`)), 30000);
    const read = (d) => {
      out += d;
      const m = new RegExp(`^${word} (\\S+)`, 'm').exec(out);
      if (m) clearTimeout(timer), resolve({ value: m[1], child });
    };
    child.stdout.on('data', read);
    child.stderr.on('data', (d) => (out += d));
    child.on('exit', (code) => reject(new Error(`${command} exited with ${code}:\n${out}`)));
  });
}

/** A page of another origin embedding the per-project loader (and listening for messages). */
async function startSite(embed) {
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Acme shop</title></head>
<body><h1>Checkout</h1><button id="pay">Pay now</button>
<script>window.received = []; addEventListener('message', (e) => received.push({origin: e.origin, type: e.data && e.data.type}));</script>
${embed()}
</body></html>`);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((r) => server.close(r)) };
}

let svc;
let chrome;
let smtp; // {child, folder}
let provider; // {child, issuer}
let site;
let foreign;
let api;
let agentKey;

before(async () => {
  if (missing.length) return;
  const folder = mkdtempSync(join(tmpdir(), 'svc-smtp-'));
  const sink = await startChild(SMTP_PYTHON, [join(ROOT, 'crates', 'svc-server', 'tests', 'smtp', 'smtp_sink.py'), folder], 'PORT');
  smtp = { child: sink.child, folder };
  svc = await startSvc({ env: { SVC_SMTP_URL: `smtp://127.0.0.1:${sink.value}?tls=none` } });
  const started = await startChild('node', [PROVIDER, '--redirect-uri', svc.url + '/auth/reporter/oidc/callback'], 'ISSUER');
  provider = { child: started.child, issuer: started.value };
  const embed = () => `<script src="${svc.url}/v1/svc/${svc.projectKey}.js"></script>`;
  site = await startSite(embed);
  foreign = await startSite(() => '');
  api = rest(svc.url, svc.token);
  agentKey = (await api.post(`/api/v1/projects/${svc.projectId}/keys`, { name: 'triage agent', scopes: ['feedback:read', 'feedback:write'] })).key;
  chrome = await launchChromium();
});

after(async () => {
  await chrome?.close();
  await site?.close();
  await foreign?.close();
  provider?.child.kill();
  smtp?.child.kill();
  await svc?.stop();
});

/** The mails the SMTP server accepted, oldest first. */
function mails() {
  return readdirSync(smtp.folder)
    .filter((f) => /^\d+\.json$/.test(f))
    .sort((a, b) => parseInt(a) - parseInt(b))
    .map((f) => JSON.parse(readFileSync(join(smtp.folder, f), 'utf8')));
}

async function mailTo(address, subjectPart) {
  let found;
  await until(() => (found = mails().find((m) => m.rcpt_tos.includes(address) && m.subject.includes(subjectPart))), 30000, `mail "${subjectPart}" to ${address}`);
  return found;
}

const report = (id) => api.get(`/api/v1/projects/${svc.projectId}/feedback/${id}`);

const panel = (page) => page.getByRole('dialog', { name: 'Feedback' });

async function openPanel(page) {
  await page.getByRole('button', { name: /Send feedback/ }).click();
  await panel(page).waitFor();
}

/**
 * The panel's line that says who is signed in (beside its Sign out button). Not `getByText`: the
 * panel's status line announces the same words for a while after signing in, and two matches break
 * Playwright's strict mode.
 */
const signedInLine = (page, who) =>
  panel(page).locator('p', { has: page.getByRole('button', { name: 'Sign out' }) }).filter({ hasText: `Signed in as ${who}` });

/**
 * Signs in at the provider in its popup (its login page, then its consent page), as `login`;
 * resolves once the popup has closed itself. The popup may close as soon as the consent's answer
 * loads, before `click` returns, so the wait for its close starts before that click.
 */
async function signInAtProvider(popup, login, password) {
  await popup.locator('input[name=login]').fill(login);
  await popup.locator('input[name=password]').fill(password);
  await popup.getByRole('button', { name: 'Sign-in' }).click();
  const closed = popup.waitForEvent('close');
  await popup.getByRole('button', { name: 'Continue' }).click(); // the provider's consent
  await closed;
}

/** What the panel's status line (its live region) says. */
const panelStatus = (page, text) => panel(page).getByRole('status').filter({ hasText: text });

describe('reporter sign-in by email', { skip: missing.length ? missing.join('; ') : false }, () => {
  let context;
  let page;
  let reportId;

  test('a required sign-in: the code comes by SMTP, and the report carries the verified reporter', async () => {
    await api.patch(`/api/v1/projects/${svc.projectId}`, { reporterAuth: { mode: 'email', required: true } });
    context = await chrome.browser.newContext();
    page = await context.newPage();
    const seen = watch(page);
    await page.goto(site.url);
    await openPanel(page);
    await page.getByText('Sign in to send: we answer you here.').waitFor();
    await page.getByLabel('Message').fill('The Pay now button does nothing');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    // Refused: the status line says so (the sign-in step already showed these words before Send).
    await panelStatus(page, 'Sign in to send: we answer you here.').waitFor();
    assert.equal((await api.get(`/api/v1/projects/${svc.projectId}/feedback`)).items.length, 0, 'nothing is sent before signing in');

    await page.getByLabel('Your email').fill('Ada@Example.com');
    await page.getByRole('button', { name: 'Send code' }).click();
    await page.getByText('Code sent to ada@example.com').waitFor();
    const mail = await mailTo('ada@example.com', 'Your sign-in code');
    const code = /^\s+(\d{3}) (\d{3})$/m.exec(mail.body);
    assert.ok(code, mail.body);
    await page.getByLabel('Code from the mail').fill(code[1] + code[2]);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await signedInLine(page, 'ada@example.com').waitFor();

    await page.getByRole('button', { name: 'Send', exact: true }).click();
    // The widget is done with the report when its panel steps back. The server has it a moment
    // earlier; the next test reloads the page, and a reload before the widget heard the answer
    // sends the report again from its delivery queue while it fetches her thread without it.
    await panel(page).waitFor({ state: 'hidden' });
    await until(async () => (await api.get(`/api/v1/projects/${svc.projectId}/feedback`)).items.length === 1, 10000, 'the report');
    reportId = (await api.get(`/api/v1/projects/${svc.projectId}/feedback`)).items[0].id;
    const filed = await report(reportId);
    assert.equal(filed.identity.userId, 'email:ada@example.com');
    assert.equal(filed.identity.verified, true);
    assert.equal(filed.identity.method, 'email');
    assert.deepEqual(seen.errors, []);
  });

  test('an agent answers through the tool endpoint; she sees it in History and replies', async () => {
    const answer = 'Fixed the click handler <img src=x onerror="alert(1)">. Could you try again?';
    await callTool(svc, agentKey, 'add_comment', { report_id: reportId, text: answer, draft: false });
    await callTool(svc, agentKey, 'add_comment', { report_id: reportId, text: 'A draft she must never see', draft: true });
    const seen = watch(page);
    await page.reload();
    // The launcher says there is news.
    const launcher = page.getByRole('button', { name: /Send feedback \(new answers\)/ });
    await launcher.waitFor();
    await launcher.click();
    await page.getByRole('button', { name: 'History' }).click();
    const item = page.locator('#svc-history li', { hasText: 'The Pay now button does nothing' });
    await item.getByText(answer).waitFor(); // as text: the markup in it is not markup
    assert.equal(await item.locator('img').count(), 0);
    assert.ok(await item.getByText('new answer').isVisible());
    assert.equal(await page.getByText('A draft she must never see').count(), 0);
    // Seen: the mark goes.
    await until(async () => (await page.getByRole('button', { name: 'Send feedback', exact: true }).count()) === 1, 5000, 'the mark to go');

    await item.getByRole('button', { name: 'Reply' }).click();
    await page.getByLabel('Your reply').fill('Thanks! I will check tonight.');
    await item.getByRole('button', { name: 'Send', exact: true }).click();
    // History shows her reply once it is stored (and counts what she has seen).
    await item.getByText('Thanks! I will check tonight.').waitFor();
    await until(async () => {
      const comments = (await api.get(`/api/v1/projects/${svc.projectId}/feedback/${reportId}/comments`)).items;
      return comments.some((c) => c.authorKind === 'reporter' && c.text === 'Thanks! I will check tonight.');
    }, 10000, 'her reply');
    const document = await callTool(svc, agentKey, 'get_report', { id: reportId });
    assert.match(document, /Thanks! I will check tonight\./);
    assert.deepEqual([seen.dialogs, seen.errors], [[], []]);
  });

  test('marked fixed, she is told by mail and in the widget, and "Works now" verifies it as her act', async () => {
    await callTool(svc, agentKey, 'set_status', { id: reportId, status: 'fixed' });
    const told = await mailTo('ada@example.com', 'Fixed: The Pay now button does nothing');
    assert.match(told.body, /\/reporter\/confirm\?token=/);
    await page.reload();
    await page.getByRole('button', { name: /Send feedback \(new answers\)/ }).click();
    await page.getByRole('button', { name: 'History' }).click();
    const item = page.locator('#svc-history li', { hasText: 'The Pay now button does nothing' });
    await item.getByText('Fixed. Does it work now?').waitFor();
    await item.getByRole('button', { name: 'Works now' }).click();
    await until(async () => (await report(reportId)).status === 'verified', 10000, 'verified');
    const last = (await report(reportId)).statusHistory.at(-1);
    assert.deepEqual([last.from, last.to, last.by.kind, last.by.id], ['fixed', 'verified', 'reporter', 'email:ada@example.com']);
    const listed = await callTool(svc, agentKey, 'list_reports', { status: 'verified' });
    assert.equal(listed[0].id, reportId);

    // Signing out ends the session: the panel asks again.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Your email').waitFor();
    await context.close();
  });
});

describe('reporter sign-in with the project\'s provider', { skip: missing.length ? missing.join('; ') : false }, () => {
  test('the popup signs her in and the report carries the provider\'s identity', async () => {
    await api.patch(`/api/v1/projects/${svc.projectId}`, {
      allowedOrigins: [site.url],
      reporterAuth: { mode: 'oidc', required: false, oidc: { issuer: provider.issuer, clientId: 'svc-widget', clientSecret: 'svc-widget-secret' } },
    });
    const context = await chrome.browser.newContext();
    const page = await context.newPage();
    await page.goto(site.url);
    await openPanel(page);
    await page.getByText('Sign in to get our answers here.').waitFor();
    const popupOpened = page.waitForEvent('popup');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    const popup = await popupOpened;
    await signInAtProvider(popup, 'grace', 'any password');
    await signedInLine(page, 'Grace').waitFor();
    await page.getByLabel('Message').fill('Coupon field rejects SAVE10');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    let filed;
    await until(async () => {
      const items = (await api.get(`/api/v1/projects/${svc.projectId}/feedback`)).items;
      filed = items.find((r) => r.title === 'Coupon field rejects SAVE10');
      return filed;
    }, 10000, 'the report');
    const stored = await report(filed.id);
    assert.deepEqual([stored.identity.userId, stored.identity.email, stored.identity.method], [`oidc:${provider.issuer}#grace`, 'grace@example.com', 'oidc']);
    await context.close();
  });

  test('a page of an origin the project does not allow gets no sign-in', async () => {
    const context = await chrome.browser.newContext();
    const page = await context.newPage();
    await page.goto(foreign.url);
    const start = (origin) => `${svc.url}/auth/reporter/oidc/start?projectKey=${svc.projectKey}&origin=${encodeURIComponent(origin)}`;
    // The page opens the sign-in popup as the widget does (window name `svc-sign-in`).
    const openSignIn = (url) => page.evaluate((u) => void (window.signIn = window.open(u, 'svc-sign-in', 'popup')), url);
    // Asking for itself: refused on the spot.
    let popupOpened = page.waitForEvent('popup');
    await openSignIn(start(foreign.url));
    let popup = await popupOpened;
    await popup.getByText('allowedOrigins').waitFor();
    await popup.close();
    // The page learns of the close a moment after Playwright does; until then, window.open with the
    // same name reuses the closing window and no new popup opens.
    await page.waitForFunction(() => window.signIn.closed);
    // Claiming the shop's origin: the provider signs her in, but the result is posted to the shop's
    // origin only, so this page receives nothing.
    popupOpened = page.waitForEvent('popup');
    await openSignIn(start(site.url));
    popup = await popupOpened;
    await signInAtProvider(popup, 'mallory', 'x');
    assert.deepEqual(await page.evaluate(() => window.received), [], 'no message reached the foreign page');
    await context.close();
  });
});
