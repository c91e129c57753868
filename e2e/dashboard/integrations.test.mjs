// GitHub issues in Chromium, against a real `svc serve` that talks to a server built from GitHub's
// published REST API description (crates/svc-server/tests/github/server.mjs: every request checked
// against `@octokit/openapi`, answered with its examples) and mails through a real SMTP server:
// an owner connects a repository on the Integrations tab (token path), a signed-in reporter files
// a report from a shop page, the owner pushes it from the report view and sees the link, then
// GitHub's "closed as completed" delivery (an `@octokit/webhooks-examples` payload signed with
// `@octokit/webhooks-methods`) makes the report fixed, and the reporter's widget asks "does it
// work now?".

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ROOT, cspViolations, launchChromium, ownerPage, rest, startSvc, until, watch } from './lib.mjs';

const GITHUB = join(ROOT, 'crates', 'svc-server', 'tests', 'github');
const SMTP_PYTHON = process.env.SVC_TEST_SMTP_PYTHON || join(ROOT, 'target', 'mail-venv', 'bin', 'python');
const missing = [
  !existsSync(join(GITHUB, 'node_modules', '@octokit', 'openapi')) && `${GITHUB} has no node_modules (scripts/test runs npm ci there)`,
  !existsSync(SMTP_PYTHON) && `no Python with aiosmtpd at ${SMTP_PYTHON} (e2e/dashboard/run.sh installs it)`,
].filter(Boolean);
const REPOSITORY = 'octo-org/shop';

/** A child process that prints `PORT <n>` once it is ready; resolves {port, child}. */
function startChild(command, args) {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${command} did not start:\n${out}`)), 30000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = /^PORT (\d+)/m.exec(out);
      if (m) clearTimeout(timer), resolve({ port: Number(m[1]), child });
    });
    child.stderr.on('data', (d) => (out += d));
    child.on('exit', (code) => reject(new Error(`${command} exited with ${code}:\n${out}`)));
  });
}

let svc;
let chrome;
let github; // {child, url}
let smtp; // {child, folder}
let shop;
let api;

before(async () => {
  if (missing.length) return;
  github = await startChild('node', [join(GITHUB, 'server.mjs'), '--records', mkdtempSync(join(tmpdir(), 'svc-github-'))]);
  github.url = `http://127.0.0.1:${github.port}`;
  const folder = mkdtempSync(join(tmpdir(), 'svc-smtp-'));
  const sink = await startChild(SMTP_PYTHON, [join(ROOT, 'crates', 'svc-server', 'tests', 'smtp', 'smtp_sink.py'), folder]);
  smtp = { child: sink.child, folder };
  // The GitHub server is on loopback: the outbound rule must allow private addresses.
  svc = await startSvc({ env: { SVC_SMTP_URL: `smtp://127.0.0.1:${sink.port}?tls=none`, SVC_WEBHOOK_ALLOW_PRIVATE: 'true' } });
  api = rest(svc.url, svc.token);
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Acme shop</title></head>
<body><h1>Checkout</h1><script src="${svc.url}/v1/svc/${svc.projectKey}.js"></script></body></html>`);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  shop = { url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((r) => server.close(r)) };
  chrome = await launchChromium();
});

after(async () => {
  await chrome?.close();
  await shop?.close();
  github?.child.kill();
  smtp?.child.kill();
  await svc?.stop();
});

/** The sign-in code mailed to `address`. */
async function codeFor(address) {
  let mail;
  await until(() => {
    const files = readdirSync(smtp.folder).filter((f) => /^\d+\.json$/.test(f));
    mail = files.map((f) => JSON.parse(readFileSync(join(smtp.folder, f), 'utf8'))).find((m) => m.rcpt_tos.includes(address) && m.subject.includes('Your sign-in code'));
    return mail;
  }, 30000, `the sign-in code for ${address}`);
  const code = /^\s+(\d{3}) (\d{3})$/m.exec(mail.body);
  assert.ok(code, mail.body);
  return code[1] + code[2];
}

/** A control call to the GitHub server. */
async function control(path, body) {
  const r = await fetch(github.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await r.text();
  assert.equal(r.status, 200, text);
  return JSON.parse(text);
}

test('connect a repository, push a report, and GitHub closing the issue asks the reporter "does it work now?"', { skip: missing.length ? missing.join('; ') : false }, async () => {
  // The owner connects the repository with a token.
  const owner = await ownerPage(svc, chrome);
  const seen = watch(owner.page);
  const page = owner.page;
  await page.goto(`${svc.url}/projects/${svc.projectId}/integrations`);
  await page.getByRole('heading', { name: 'Connect a repository' }).waitFor();
  await page.getByLabel('Repository', { exact: true }).fill(REPOSITORY);
  await page.getByLabel('Access token', { exact: true }).fill('github_pat_11AAAAAAA0browser0test');
  await page.getByLabel('API address', { exact: true }).fill(github.url);
  await page.getByRole('button', { name: 'Connect repository' }).click();
  await page.getByRole('heading', { name: 'Repository connected' }).waitFor();
  const secret = (await page.locator('#github-webhook-secret').innerText()).trim();
  assert.match(secret, /^[0-9a-f]{48}$/);
  await page.goto(`${svc.url}/projects/${svc.projectId}/integrations`);
  await page.getByRole('button', { name: 'Check connection' }).click();
  await page.getByText('The connection works.').waitFor();

  // A reporter signs in on the shop's page and files a report.
  await api.patch(`/api/v1/projects/${svc.projectId}`, { reporterAuth: { mode: 'email', required: true } });
  const reporter = await chrome.browser.newContext();
  const shopPage = await reporter.newPage();
  await shopPage.goto(shop.url);
  const panel = shopPage.getByRole('dialog', { name: 'Feedback' });
  await shopPage.getByRole('button', { name: /Send feedback/ }).click();
  await panel.waitFor();
  await shopPage.getByLabel('Your email').fill('ada@example.com');
  await shopPage.getByRole('button', { name: 'Send code' }).click();
  await shopPage.getByLabel('Code from the mail').fill(await codeFor('ada@example.com'));
  await shopPage.getByRole('button', { name: 'Sign in', exact: true }).click();
  await panel.locator('p', { has: shopPage.getByRole('button', { name: 'Sign out' }) }).filter({ hasText: 'Signed in as ada@example.com' }).waitFor();
  await shopPage.getByLabel('Message').fill('The coupon field rejects SAVE10');
  await shopPage.getByRole('button', { name: 'Send', exact: true }).click();
  await panel.waitFor({ state: 'hidden' });
  let reportId;
  await until(async () => (reportId = (await api.get(`/api/v1/projects/${svc.projectId}/feedback`)).items[0]?.id), 10000, 'the report');

  // The owner pushes it from the report view and sees the link.
  await page.goto(`${svc.url}/?r=${reportId}`);
  await page.getByRole('button', { name: 'Create GitHub issue' }).click();
  const link = page.getByRole('link', { name: `${REPOSITORY}#1347`, exact: true });
  await link.waitFor();
  assert.equal(await link.getAttribute('href'), 'https://github.com/octocat/Hello-World/issues/1347');
  assert.equal(await page.getByRole('button', { name: 'Create GitHub issue' }).count(), 0, 'one report, one issue');

  // GitHub: the issue is closed as completed.
  const hook = await control('/_control/webhook', {
    event: 'issues', action: 'closed', secret,
    patch: { repository: { full_name: REPOSITORY }, issue: { number: 1347, state: 'closed', state_reason: 'completed' }, sender: { login: 'hubot' } },
  });
  const delivered = await fetch(`${svc.url}/api/v1/integrations/github/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-github-event': 'issues', 'x-github-delivery': hook.deliveryId, 'x-hub-signature-256': hook.signature },
    body: hook.body,
  });
  assert.deepEqual(await delivered.json(), { outcome: 'applied', reports: 1 });
  const report = await api.get(`/api/v1/projects/${svc.projectId}/feedback/${reportId}`);
  assert.equal(report.status, 'fixed');
  assert.equal(report.statusHistory.at(-1).by.label, 'hubot on GitHub');

  // The reporter's widget asks.
  await shopPage.reload();
  await shopPage.getByRole('button', { name: /Send feedback/ }).click();
  await shopPage.getByRole('button', { name: 'History' }).click();
  const item = shopPage.locator('#svc-history li', { hasText: 'The coupon field rejects SAVE10' });
  await item.getByText('Fixed. Does it work now?').waitFor();
  await reporter.close();

  // Every request Svc sent matched GitHub's description.
  const records = readdirSync(github.child.spawnargs.at(-1)).filter((f) => f.endsWith('.json'));
  const violations = records.map((f) => JSON.parse(readFileSync(join(github.child.spawnargs.at(-1), f), 'utf8'))).filter((r) => !r.valid);
  assert.deepEqual(violations, []);
  assert.deepEqual(seen.errors, []);
  assert.deepEqual(cspViolations(svc), []);
});
