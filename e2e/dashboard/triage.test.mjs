// Triage in Chromium: the inbox shows many reports at once (one dense row each, with marks for
// what a report holds), and on a phone an open report's status control is on screen without
// scrolling.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { PASSWORD, callTool, identityToken, ingest, launchChromium, makeScreenshot, rest, signIn, startSvc, watch } from './lib.mjs';

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

test('triage with the keyboard: nothing reloads, the selection survives moves, changes show at once and undo', async () => {
  const api = rest(svc.url, svc.token);
  const report = (id) => api.get(`/api/v1/projects/${svc.projectId}/feedback/${id}`);
  const context = await chrome.browser.newContext({ viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  const seen = watch(page);
  await signIn(page, svc.url, 'ada@example.com');
  await page.goto(`${svc.url}/?view=all`);
  await page.getByRole('navigation', { name: 'Reports' }).waitFor();
  // A page load would lose this mark (and count a load).
  await page.evaluate(() => { window.sameDocument = true; });
  let loads = 0;
  page.on('load', () => { loads += 1; });

  for (let i = 0; i < 9; i++) await page.keyboard.press('j');
  const current = page.locator('.list .item[aria-current="true"]');
  const fullTitle = await current.locator('a.open').getAttribute('title');
  await page.getByRole('heading', { level: 1, name: fullTitle, exact: true }).waitFor();
  const box = await current.boundingBox();
  assert.ok(box && box.y >= 0 && box.y + box.height <= 900, `the current row is at ${box?.y}`);
  assert.equal(await page.locator('.list .item').nth(8).getAttribute('aria-current'), 'true', 'nine moves from the top');
  assert.match(page.url(), new RegExp(`r=${await current.getAttribute('data-id')}`), 'the address follows');

  // Three selected across moves, then their status set with s and a letter.
  await page.keyboard.press('x');
  await page.keyboard.press('j');
  await page.keyboard.press('x');
  await page.keyboard.press('j');
  await page.keyboard.press('j');
  await page.keyboard.press('x');
  const picked = await page.locator('.list .pick:checked').evaluateAll((boxes) => boxes.map((b) => b.value));
  assert.equal(picked.length, 3, 'the selection is kept across moves');
  await page.keyboard.press('s');
  await page.getByRole('dialog', { name: 'Set status of 3 reports' }).waitFor();
  await page.keyboard.press('f');
  // Each row shows it (repainted before the server answers; the live list may swap rows meanwhile).
  for (const id of picked) await page.locator(`.list .item[data-id="${id}"] [data-status="fixed"]`).waitFor();
  await page.getByRole('status').filter({ hasText: '3 reports are fixed.' }).waitFor();
  for (const id of picked) assert.equal((await report(id)).status, 'fixed', 'the REST API agrees');

  // z undoes it.
  await page.keyboard.press('z');
  await page.getByRole('status').filter({ hasText: 'Undone.' }).waitFor();
  for (const id of picked) {
    await page.locator(`.list .item[data-id="${id}"] [data-status="new"]`).waitFor();
    assert.equal((await report(id)).status, 'new');
  }
  await page.keyboard.press('Escape');
  assert.equal(await page.locator('.list .pick:checked').count(), 0, 'Esc clears the selection');

  // An agent's draft, published with p where the person is.
  const target = await current.getAttribute('data-id');
  await callTool(svc, svc.token, 'add_comment', { report_id: target, text: 'The coupon is applied twice: **fixed** in #12.' });
  // The live list marks the row once it has repainted; only then are positions settled, and the
  // report is opened again by moving away and back (up and down, or down and up at the top).
  const targetRow = page.locator(`.list .item[data-id="${target}"]`);
  await targetRow.locator('.mark-draft').waitFor();
  const atTop = (await page.locator('.list .item').first().getAttribute('data-id')) === target;
  await page.keyboard.press(atTop ? 'j' : 'k');
  await page.keyboard.press(atTop ? 'k' : 'j');
  await page.locator('.list .item[aria-current="true"]').and(targetRow).waitFor();
  await page.locator('#report .comment.draft').waitFor();
  await page.keyboard.press('p');
  await page.locator('#report .comment').filter({ hasText: 'published' }).waitFor();
  const comments = await api.get(`/api/v1/projects/${svc.projectId}/feedback/${target}/comments`);
  assert.equal(comments.items.at(-1).draft, false, 'published');

  // Marked as a duplicate of the first report with d: canceled, linked, in REST and for agents.
  await page.keyboard.press('d');
  await page.getByRole('dialog', { name: /Duplicate of/ }).waitFor();
  await page.keyboard.type(firstId);
  await page.keyboard.press('Enter');
  await page.getByRole('note').filter({ hasText: 'Duplicate of' }).waitFor();
  const duplicate = await report(target);
  assert.equal(duplicate.duplicateOf, firstId);
  assert.equal(duplicate.status, 'canceled');
  const doc = await callTool(svc, svc.token, 'get_report', { id: target });
  assert.match(doc, new RegExp(`Duplicate of: \`${firstId}\``));

  assert.equal(await page.evaluate(() => window.sameDocument), true, 'no page load');
  assert.equal(loads, 0, 'no page load');
  assert.deepEqual(seen.errors, []);
  await context.close();
});

test('the report view shows the failed request, the element, the reporter and what they drew', async () => {
  const secret = 'a-long-identity-secret-for-triage';
  svc.setIdentitySecret(svc.projectId, secret);
  const token = identityToken({ sub: 'u-9', email: 'grace@example.com', name: 'Grace Hopper' }, secret);
  const shot = await makeScreenshot(chrome);
  const filer = ingest(svc);
  const image = await filer.blob('screenshot', shot.png, { type: 'image/png', name: 'shot.png' });
  const id = await filer.report({
    blocks: [
      { type: 'text', text: 'Apply coupon does nothing' },
      { type: 'screenshot', blobId: image.blobId, annotations: [{ kind: 'rect', points: [[10, 20], [110, 70]], color: '#00ff00' }] },
      { type: 'pinpoint', selector: '#apply', target: { css: 'form > button#apply', text: 'Apply coupon', accessibleName: 'Apply the coupon code' } },
    ],
    context: { network: [{ method: 'POST', url: 'https://shop.example/api/coupons', status: 422, durationMs: 84, time: '2026-11-28T10:00:00.000Z' }] },
  }, { 'x-svc-identity': token });
  const context = await chrome.browser.newContext({ viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  await signIn(page, svc.url, 'ada@example.com');
  await page.goto(`${svc.url}/?r=${id}`);
  const failed = page.getByRole('table');
  await failed.getByRole('row').filter({ hasText: 'https://shop.example/api/coupons' }).waitFor();
  assert.match(await failed.textContent(), /422/);
  const pane = page.locator('#report');
  for (const text of ['Apply coupon', 'Apply the coupon code', 'Grace Hopper', 'grace@example.com']) {
    assert.ok((await pane.textContent()).includes(text), `the view shows ${text}`);
  }
  assert.equal(await pane.locator('svg rect.drawn').getAttribute('stroke'), '#00ff00', 'what the reporter drew');
  // The moment the request failed, in the reader's time zone.
  assert.match(await failed.locator('time').getAttribute('title'), /2026/);
  await context.close();
});
