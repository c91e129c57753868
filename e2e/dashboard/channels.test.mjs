// The Channels tab in Chromium against a real `svc serve`: an owner adds a channel with a URL
// matcher through the forms, the tester names it for a matching page, and the real widget (the
// per-project loader on a shop of another origin) files a report from a checkout page into it,
// while a report from another page goes to the default channel. A live hint then wins in the
// tester and in the widget alike.

import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, before, test } from 'node:test';
import { cspViolations, launchChromium, ownerPage, rest, startSvc, unsafeMarkup, until, watch } from './lib.mjs';

let svc;
let chrome;
let api;
let P; // `/api/v1/projects/<id>`
let shop; // {url, close}: pages of another origin that embed the widget
let owner; // {context, page}
let seen;

before(async () => {
  svc = await startSvc();
  chrome = await launchChromium();
  api = rest(svc.url, svc.token);
  P = `/api/v1/projects/${svc.projectId}`;
  // Every path of the shop is a page with the per-project loader (no caching, so each visit
  // gets the configuration as it is now).
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(`<!doctype html><html><head><title>Shop</title></head><body><h1>Acme shop</h1>
      <script src="${svc.url}/v1/svc/${svc.projectKey}.js"></script></body></html>`);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  shop = { url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((r) => server.close(r)) };
  owner = await ownerPage(svc, chrome);
  seen = watch(owner.page);
});

after(async () => {
  await chrome?.close();
  await shop?.close();
  await svc?.stop();
});

/**
 * Opens a shop page in a fresh context, waits until the widget's active channel is `expected`
 * (hints arrive a moment after the baked-in channels), then files a report through `Svc.report`.
 */
async function reportFrom(path, message, expected) {
  const context = await chrome.browser.newContext();
  const page = await context.newPage();
  await page.goto(shop.url + path);
  await page.waitForFunction(() => window.Svc && window.Svc.isInitialized() && window.Svc.getChannels().length > 0);
  await page
    .waitForFunction((key) => window.Svc.getChannel()?.key === key, expected, { timeout: 5000 })
    .catch(() => {}); // the assertions below say what it chose instead
  const channel = await page.evaluate(() => window.Svc.getChannel()?.key ?? null);
  const { reportId } = await page.evaluate((text) => window.Svc.report({ message: text }), message);
  await context.close();
  const report = await api.get(`${P}/feedback/${reportId}`);
  return { channel, report };
}

test('an owner adds a channel with a URL matcher; the tester and the widget both send checkout pages to it', async () => {
  const { page } = owner;
  await page.goto(`${svc.url}/projects/${svc.projectId}/channels`);
  await page.getByRole('heading', { name: 'Channels', exact: true }).waitFor();

  // Create the channel.
  const form = page.locator('form[action$="/channels"]');
  await form.getByLabel('Key').fill('checkout');
  await form.getByLabel('Name').fill('Checkout');
  await form.getByLabel('Colour').fill('#0f766e');
  await form.getByLabel('Mascot').selectOption('otter');
  await form.getByRole('button', { name: 'Create channel' }).click();
  await page.getByText('Created the channel checkout.').waitFor();

  // Its editor is open: one matcher, url contains /checkout, weight 10.
  await page.getByRole('button', { name: 'Add matcher' }).click();
  await page.getByText('not saved yet').waitFor();
  const matcher = page.getByRole('group', { name: 'Matcher 1', exact: true });
  await matcher.getByLabel('Weight', { exact: true }).fill('10');
  await matcher.getByLabel('Note').fill('checkout pages');
  const condition = page.getByRole('group', { name: 'Matcher 1, condition 1' });
  await condition.getByLabel('Field', { exact: true }).selectOption('url');
  await condition.getByLabel('Operator').selectOption('contains');
  await condition.getByLabel('Value', { exact: true }).fill('/checkout');
  await page.getByRole('button', { name: 'Save matchers' }).click();
  await page.getByText('Saved the matchers of checkout.').waitFor();

  const listed = await api.get(`${P}/channels`);
  const made = listed.items.find((c) => c.key === 'checkout');
  assert.deepEqual([made.name, made.color, made.mascot, made.archived], ['Checkout', '#0f766e', 'otter', false]);
  const offered = await (await fetch(`${svc.url}/ingest/channels`, { headers: { 'x-svc-project-key': svc.projectKey } })).json();
  assert.deepEqual(offered.channels.find((c) => c.key === 'checkout').matchers, [
    { conditions: [{ field: 'url', op: 'contains', value: '/checkout' }], weight: 10, note: 'checkout pages' },
  ]);
  const row = page.locator('#channel-checkout');
  assert.match(await row.innerText(), /\+10 when url contains “?\/checkout”?/);
  assert.equal(await row.locator('svg rect').getAttribute('fill'), '#0f766e', 'the colour swatch is an SVG fill');

  // The tester: a checkout page of the shop goes to Checkout, and why.
  await page.getByLabel('Page URL').fill(`${shop.url}/checkout/pay`);
  await page.getByRole('button', { name: 'Test', exact: true }).click();
  const result = page.locator('#test-result');
  await result.waitFor();
  const text = await result.innerText();
  assert.match(text, /Reports from this page go to Checkout \(checkout\), chosen by its matchers/);
  assert.match(text, /checkout has the highest positive score, 10\./);
  assert.match(text, /✓ url contains/);

  // The real widget on the shop's checkout page picks the channel and files the report into it.
  const paid = await reportFrom('/checkout/pay', 'The pay button does nothing', 'checkout');
  assert.equal(paid.channel, 'checkout', 'the widget chose the channel the tester named');
  assert.equal(paid.report.channelKey, 'checkout');
  assert.equal(paid.report.context.channelSource, 'rules');
  // Another page of the shop goes to the default channel, in the tester and in the widget.
  const home = await reportFrom('/home', 'The logo is blurry', 'bug');
  assert.deepEqual([home.channel, home.report.channelKey], ['bug', 'bug']);
  await page.getByLabel('Page URL').fill(`${shop.url}/home`);
  await page.getByRole('button', { name: 'Test', exact: true }).click();
  await until(async () => /the default channel, bug\./.test(await page.locator('#test-result').innerText()), 5000, 'the default');

  assert.deepEqual(await unsafeMarkup(page), []);
  assert.deepEqual(seen.errors, []);
  assert.deepEqual(cspViolations(svc), [], 'the page needs no inline style for its swatches');
});

test('a live hint with weight max wins in the tester and in the widget; archiving takes the channel away', async () => {
  const { page } = owner;
  await api.post(`${P}/hints`, { channelKey: 'idea', weight: 'max' });
  await page.goto(`${svc.url}/projects/${svc.projectId}/channels?url=${encodeURIComponent(shop.url + '/checkout/pay')}#tester`);
  const hints = page.locator('table.hints');
  assert.match(await hints.innerText(), /idea\s+max\s+everyone\s+in 5 min/);
  assert.match(await page.locator('#test-result').innerText(), /A hint with weight max for idea wins over every score\./);
  const hinted = await reportFrom('/checkout/pay', 'Hinted', 'idea');
  assert.deepEqual([hinted.channel, hinted.report.channelKey, hinted.report.context.channelSource], ['idea', 'idea', 'hint']);

  // Archive the checkout channel from its row: REST and ingest no longer list it, the page marks it.
  await page.locator('#channel-checkout').getByRole('button', { name: 'Archive checkout' }).click();
  await page.getByText('Archived the channel checkout').waitFor();
  assert.match(await page.locator('#channel-checkout').innerText(), /archived/);
  const listed = await api.get(`${P}/channels`);
  assert.ok(!listed.items.some((c) => c.key === 'checkout'));
  const all = await api.get(`${P}/channels?archived=true`);
  assert.equal(all.items.find((c) => c.key === 'checkout').archived, true);
  assert.deepEqual(seen.errors, []);
});
