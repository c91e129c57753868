// Triage in Chromium: the inbox shows many reports at once (one dense row each, with marks for
// what a report holds), and on a phone an open report's status control is on screen without
// scrolling.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { PASSWORD, ingest, launchChromium, signIn, startSvc, watch } from './lib.mjs';

let svc;
let chrome;
let firstId;

before(async () => {
  svc = await startSvc();
  chrome = await launchChromium();
  svc.createUser({ email: 'ada@example.com', password: PASSWORD, name: 'Ada Lovelace', role: 'owner' });
  const filer = ingest(svc);
  for (let i = 1; i <= 30; i++) {
    const id = await filer.report({
      blocks: [{ type: 'text', text: `Report number ${i}: the checkout page misbehaves after a coupon is applied twice in a row` }],
      context: i % 3 === 0
        ? { consoleErrors: ['TypeError: total is undefined'], network: [{ method: 'POST', url: 'https://shop.example/api/pay', status: 502, durationMs: 80, time: '2026-11-28T10:00:00.000Z' }] }
        : {},
    });
    firstId ??= id;
  }
});

after(async () => {
  await chrome?.close();
  await svc?.stop();
});

/** How many report rows are wholly inside the window. */
const visibleRows = (page) =>
  page.locator('.list .item').evaluateAll((rows) =>
    rows.filter((row) => {
      const box = row.getBoundingClientRect();
      return box.height > 0 && box.top >= 0 && box.bottom <= window.innerHeight;
    }).length);

test('the inbox shows at least 15 reports on a laptop and 8 on a phone, with marks for their evidence', async () => {
  const context = await chrome.browser.newContext({ viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  const seen = watch(page);
  await signIn(page, svc.url, 'ada@example.com');
  await page.getByRole('navigation', { name: 'Reports' }).waitFor();
  const wide = await visibleRows(page);
  assert.ok(wide >= 15, `${wide} rows visible at 1440×900`);
  const marked = page.locator('.list .item').filter({ hasText: 'Report number 30:' });
  assert.equal(await marked.locator('.mark-console').getAttribute('title'), '1 console error');
  assert.equal(await marked.locator('.mark-network').getAttribute('title'), '1 failed request');
  await page.setViewportSize({ width: 375, height: 812 });
  const narrow = await visibleRows(page);
  assert.ok(narrow >= 8, `${narrow} rows visible at 375×812`);
  assert.deepEqual(seen.errors, []);
  await context.close();
});

test('on a phone, an open report shows its status control without scrolling', async () => {
  const context = await chrome.browser.newContext({ viewport: { width: 375, height: 812 } });
  const page = await context.newPage();
  await signIn(page, svc.url, 'ada@example.com');
  await page.goto(`${svc.url}/?r=${firstId}`);
  const status = page.getByLabel('Status', { exact: true });
  await status.waitFor();
  const box = await status.boundingBox();
  assert.ok(box && box.y + box.height <= 812, `the status control ends at ${box?.y + box?.height} px`);
  await context.close();
});
