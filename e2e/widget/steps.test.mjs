// Steps and reproductions (issue 28), as a shopper and a coding agent live them: in Chromium a
// person opens a tea in a small shop (a pushState view), reloads, picks a quantity, buys (a full
// load of the checkout page), types a card number and, inside an area the shop marks private, a
// security code, accepts the terms and presses Pay, whose call answers 500 while the shop's bug is
// on; then files a report through the widget. The steps must be in order, with their selectors,
// and no typed digit anywhere: REST, the agent's document, the reproduction, the database files.
// The agent (the official Python MCP SDK) reads the reproduction with resources/read; Playwright
// runs it against the shop: it fails at its final assertion with the bug on and passes with it off.
// A page that turns recording off sends no steps.

import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { CHROMIUM, launchBrowser, rest, startPages, startSvc, until } from './harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const PYTHON = process.env.SVC_MCP_PYTHON || join(root, 'target', 'mcp-venv', 'bin', 'python');
const READ_REPORT = join(root, 'e2e', 'mcp', 'read_report.py');
const PLAYWRIGHT_CLI = join(root, 'widget', 'node_modules', '@playwright', 'test', 'cli.js');
const skip = !existsSync(PYTHON)
  ? `no Python MCP SDK at ${PYTHON} (e2e/widget/run.sh installs it into target/mcp-venv)`
  : !existsSync(PLAYWRIGHT_CLI)
    ? `no @playwright/test in widget/node_modules (npm ci in widget/ installs it)`
    : false;

const CARD = '4242424242424242';
const CVC = '8675309';

let svc;
let pages;
let chrome;

before(async () => {
  svc = await startSvc();
  pages = await startPages({ SVC: svc.url, KEY: svc.projectKey });
  chrome = await launchBrowser();
});

after(async () => {
  await chrome?.close();
  await pages?.close();
  await svc?.stop();
});

const W = (page, css, options) => page.locator('[data-svc-widget] >> ' + css, options);

/** Resolves once the recorder runs on this page: its own load is among the kept steps. */
function recording(page) {
  return page.waitForFunction(() =>
    Object.keys(sessionStorage).some(
      (key) => key.endsWith(':steps') && JSON.parse(sessionStorage.getItem(key)).some((s) => s.via === 'load' && s.at === Math.round(performance.timeOrigin)),
    ),
  );
}

/** Sends a report through the widget's panel, as a person does. */
async function fileThroughPanel(page, message) {
  await W(page, '.launcher').click();
  await W(page, '.panel').waitFor();
  await page.keyboard.type(message);
  await W(page, 'button.primary').click();
  await until(async () => (await W(page, '.toast').count()) === 1 && /Sent/.test(await W(page, '.toast').textContent()), 15000, 'the confirmation');
}

/** Every file under `dir`, read as bytes. */
function filesUnder(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path));
    else out.push([path, readFileSync(path)]);
  }
  return out;
}

/**
 * Runs a reproduction with Playwright against the shop; {status, output}. Asynchronously: the shop's
 * server runs in this process.
 */
async function runReproduction(spec, name) {
  const dir = join(root, 'target', 'steps-e2e', name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  // The spec imports @playwright/test: resolved from widget/ through this link.
  symlinkSync(join(root, 'widget', 'node_modules'), join(dir, 'node_modules'));
  writeFileSync(join(dir, 'report.spec.ts'), spec);
  writeFileSync(
    join(dir, 'playwright.config.mjs'),
    `export default { testDir: '.', timeout: 60000, workers: 1, reporter: 'line', outputDir: 'results',
  use: { browserName: 'chromium', headless: true, launchOptions: { executablePath: ${JSON.stringify(CHROMIUM)},
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run'] } } };\n`,
  );
  const child = spawn(process.execPath, [PLAYWRIGHT_CLI, 'test', '--config', join(dir, 'playwright.config.mjs')], {
    cwd: dir,
    env: { ...process.env, BASE_URL: pages.url, CI: '1', FORCE_COLOR: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const status = await new Promise((resolve) => child.on('close', resolve));
  return { status, output };
}

test('a shopper\'s steps reach the agent, and the reproduction fails with the bug and passes without', { skip, timeout: 300000 }, async () => {
  pages.setBug(true);
  const ctx = await chrome.browser.newContext({ viewport: { width: 1100, height: 760 } });
  const page = await ctx.newPage();

  await page.goto(pages.url + '/shop.html');
  await recording(page);
  await page.getByRole('link', { name: 'Sencha' }).click();
  await page.getByRole('heading', { name: 'Sencha' }).waitFor();
  // A reload between two actions keeps what came before.
  await page.reload();
  await recording(page);
  // As a person picks from a closed select with the keyboard (selectOption's events are scripted).
  await page.locator('#qty').focus();
  await page.keyboard.press('ArrowDown');
  await page.getByRole('button', { name: 'Buy now' }).click();
  await page.waitForURL(/shop-checkout\.html/);
  await recording(page);
  await page.locator('#card').click();
  await page.keyboard.type(CARD);
  await page.locator('#cvc').click();
  await page.keyboard.type(CVC);
  await page.locator('#terms').check();
  await page.getByRole('button', { name: 'Pay' }).click();
  await page.getByText('Payment failed.').waitFor();
  await fileThroughPanel(page, 'Pay fails for my tea order');

  // REST: the steps in order, with their elements, and no value typed.
  const api = rest(svc.url, svc.token);
  const P = `/api/v1/projects/${svc.projectId}`;
  const reportId = (await api.get(`${P}/feedback?limit=1`)).items[0].id;
  const report = await api.get(`${P}/feedback/${reportId}`);
  const steps = report.context.steps;
  const seen = steps.map((s) => [s.kind, s.via || s.target?.css || s.value || s.method || s.message || ''].join(' '));
  const pathOf = (s) => new URL(s.url).pathname;
  assert.deepEqual(
    steps.map((s) => s.kind),
    ['navigate', 'click', 'navigate', 'navigate', 'change', 'click', 'navigate', 'input', 'private', 'change', 'click', 'request', 'console'],
    seen.join('\n'),
  );
  const [load, link, push, reload, qty, buy, checkout, card, secret, terms, pay, request, consoleError] = steps;
  assert.deepEqual([load.via, pathOf(load)], ['load', '/shop.html']);
  assert.match(link.target.css, /tea=sencha|a\.tea/, JSON.stringify(link));
  assert.equal(link.target.text, 'Sencha');
  assert.deepEqual([push.via, reload.via, checkout.via], ['push', 'load', 'load']);
  assert.equal(pathOf(checkout), '/shop-checkout.html');
  assert.ok(!push.url.includes('sencha') && push.url.includes('tea=[redacted]'), 'query values are redacted like failed requests: ' + push.url);
  assert.deepEqual([qty.target.css, qty.value], ['#qty', '2']);
  assert.deepEqual([buy.target.css, buy.target.testIds], ['[data-testid="buy"]', ['buy']]);
  assert.deepEqual({ css: card.target.css, type: card.inputType, length: card.length, changed: card.changed }, { css: '[data-testid="card"]', type: 'text', length: 16, changed: true });
  assert.equal(card.value, undefined);
  assert.deepEqual(Object.keys(secret).sort(), ['beforeMs', 'kind'], 'a private area records that something happened there, nothing else');
  assert.deepEqual([terms.target.css, terms.value], ['#terms', 'checked']);
  assert.equal(pay.target.accessibleName, 'Pay');
  assert.deepEqual([request.method, new URL(request.url).pathname, request.status], ['POST', '/shop/pay', 500]);
  assert.equal(consoleError.message, 'Payment failed: total is undefined');
  for (let i = 1; i < steps.length; i++) assert.ok(steps[i].beforeMs <= steps[i - 1].beforeMs, 'oldest first: ' + seen.join('\n'));

  // The agent's side: a read-only key, the Python SDK: the document and the reproduction.
  const key = (await api.post(`${P}/keys`, { name: 'steps e2e', scopes: ['feedback:read'] })).key;
  const read = JSON.parse(
    execFileSync(PYTHON, [READ_REPORT, reportId], {
      encoding: 'utf8',
      env: { ...process.env, SVC_MCP_URL: svc.url + '/mcp', SVC_KEY: key },
      timeout: 60000,
    }),
  );
  const text = read.report.text;
  assert.ok(text.includes('Steps before the report'), text);
  assert.ok(text.includes('`[data-testid="card"]`') && text.includes('`[data-testid="buy"]`'), text);
  assert.ok(read.reproduction, 'resources/read returns the reproduction');
  const spec = read.reproduction.text;
  assert.match(spec, /^\/\/ Reproduction of Svc report/);
  for (const [where, value] of [['REST', JSON.stringify(report)], ['the document', text], ['the reproduction', spec]]) {
    assert.ok(!value.includes(CARD) && !value.includes(CVC), `no typed value in ${where}`);
  }
  // Nor in anything Svc stored: the database (and its write-ahead log) and the blob folder.
  for (const [path, bytes] of filesUnder(svc.dataDir)) {
    assert.equal(bytes.indexOf(CARD), -1, `the card number is in ${path}`);
    assert.equal(bytes.indexOf(CVC), -1, `the security code is in ${path}`);
  }

  // The reproduction, run as the agent would: it fails at its final assertion while the bug is on...
  const failing = await runReproduction(spec, 'bug-on');
  assert.notEqual(failing.status, 0, failing.output);
  assert.match(failing.output, /POST \/shop\/pay answers/, failing.output);
  assert.match(failing.output, /toBeLessThan/, failing.output);
  // ...and passes once the bug is fixed.
  pages.setBug(false);
  const passing = await runReproduction(spec, 'bug-off');
  assert.equal(passing.status, 0, passing.output);
  assert.match(passing.output, /1 passed/, passing.output);
  await ctx.close();
});

test('recordSteps: false sends no steps', { timeout: 120000 }, async () => {
  pages.setBug(true);
  const ctx = await chrome.browser.newContext({ viewport: { width: 1000, height: 700 } });
  const page = await ctx.newPage();
  await page.goto(pages.url + '/shop-quiet.html');
  await page.waitForFunction(() => window.Svc && Svc.isInitialized());
  await page.getByRole('button', { name: 'Pay' }).click();
  await page.getByText('Payment failed.').waitFor();
  // Past the moment the recorder would have started: the page has been idle twice since, or two
  // seconds have passed twice. Chromium may hold idle callbacks back for as long as it likes (it
  // held them past this test's two minutes once, with the other core busy), so each has a timeout.
  await page.evaluate(
    () => new Promise((done) => requestIdleCallback(() => requestIdleCallback(done, { timeout: 2000 }), { timeout: 2000 })),
  );
  await fileThroughPanel(page, 'Pay fails, quietly');
  const api = rest(svc.url, svc.token);
  const P = `/api/v1/projects/${svc.projectId}`;
  const report = await api.get(`${P}/feedback/${(await api.get(`${P}/feedback?limit=1`)).items[0].id}`);
  assert.equal(report.context.steps, undefined, JSON.stringify(report.context));
  // The failed request still travels, as before.
  assert.equal(report.context.network.length, 1);
  const recorderFetched = await page.evaluate(() => performance.getEntriesByType('resource').some((e) => /\/v1\/parts\/recorder\./.test(e.name)));
  assert.equal(recorderFetched, false, 'the recorder is not even loaded');
  assert.deepEqual(await page.evaluate(() => Object.keys(sessionStorage).filter((k) => k.endsWith(':steps'))), []);
  await ctx.close();
});
