// The whole loop as a reporter and a coding agent live it (issue 17): in Chromium, a reporter
// files a report through the real widget (the typed message, a pinpoint on a button with the
// "Point at it" tool, a quote, a screenshot of a page with an empty input that has a placeholder,
// a file), while the page's payment call fails with a 500 and logs an error carrying a bearer
// token; then the official Python MCP SDK (e2e/mcp/read_report.py) reads it as an agent does.
// get_report must show the message first, the button's text, the viewport, the failed request,
// the token redacted and the screenshot, whose input region holds no dark (typed-looking) text;
// resources/read must return the attached file's bytes.
//
// The Python SDK comes from target/mcp-venv (SVC_MCP_PYTHON, set by e2e/widget/run.sh, which
// installs it like e2e/mcp/run.sh); without it this test is skipped, saying why.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { launchBrowser, rest, startPages, startSvc, until } from './harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const PYTHON = process.env.SVC_MCP_PYTHON || join(here, '..', '..', 'target', 'mcp-venv', 'bin', 'python');
const READ_REPORT = join(here, '..', 'mcp', 'read_report.py');
const skip = existsSync(PYTHON) ? false : `no Python MCP SDK at ${PYTHON} (e2e/widget/run.sh installs it into target/mcp-venv)`;

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
const NOTES = 'order 42: total 19.99 EUR\nPay button spins, then nothing.\n';
const TOKEN = 'tok_3f9a8b7c6d5e4f3a2b1c0d9e';

test('a report filed in Chromium reads complete through the Python MCP SDK', { skip, timeout: 120000 }, async () => {
  const ctx = await chrome.browser.newContext({ viewport: { width: 1000, height: 700 } });
  const page = await ctx.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(pages.url + '/agent.html');
  await page.waitForFunction(() => window.Svc && Svc.isInitialized() && Svc.getChannels().length > 0);

  // The reporter taps Pay: the payment call fails and the app logs it, token and all.
  await page.locator('#pay').click();
  await page.waitForFunction(() => (window.__svcNet || []).length === 1 && window.__svcErrors.list().length === 1);

  // The message, typed first.
  await W(page, '.launcher').click();
  await W(page, '.panel').waitFor();
  await page.keyboard.type('The Pay button does nothing');

  // Point at it: the Pay button.
  await W(page, 'button[aria-label="Point at an element of the page"]').click();
  await W(page, '.pp').waitFor();
  const pay = await page.locator('#pay').boundingBox();
  await page.mouse.move(pay.x + pay.width / 2, pay.y + pay.height / 2);
  await page.mouse.click(pay.x + pay.width / 2, pay.y + pay.height / 2);
  await W(page, '#svc-pin-comment').waitFor();
  await page.keyboard.type('Tapping it shows a spinner, then nothing');
  await W(page, '.box:not([hidden]) button', { hasText: 'Add' }).click();
  await until(async () => (await W(page, '.blocks li').count()) === 1, 5000, 'the pinpoint');

  // A quote of the shipping terms.
  await page.locator('#terms').click({ clickCount: 3 });
  await W(page, '#svc-sel-comment').waitFor();
  await W(page, '#svc-sel-comment').click();
  await page.keyboard.type('Not true for my order');
  await W(page, '.box:not([hidden]) button', { hasText: 'Add' }).click();
  await until(async () => (await W(page, '.blocks li').count()) === 2, 5000, 'the quote');

  // A screenshot, with its thumbnail in the thread.
  await W(page, 'button[aria-label="Take a screenshot of the page"]').click();
  await W(page, '.shot canvas').waitFor({ timeout: 20000 });
  await W(page, '.shot button', { hasText: 'Add screenshot' }).click();
  await until(async () => (await W(page, '.blocks li').count()) === 3, 20000, 'the screenshot');
  assert.equal(await W(page, '.blocks li img.thumb').count(), 1, 'a thumbnail of the screenshot');
  assert.ok(await W(page, '.blocks li img.thumb').evaluate((img) => img.complete && img.naturalWidth > 0), 'the thumbnail shows');

  // A file.
  const chooser = page.waitForEvent('filechooser');
  await W(page, 'button[aria-label="Attach files"]').click();
  await (await chooser).setFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from(NOTES) });
  await until(async () => (await W(page, '.blocks li').count()) === 4, 10000, 'the file');

  // Send: the panel closes with a short confirmation.
  const email = await page.locator('#email').boundingBox();
  await W(page, 'button.primary').click();
  await until(async () => (await W(page, '.toast').count()) === 1 && /Sent/.test(await W(page, '.toast').textContent()), 15000, 'the confirmation');
  assert.equal(await W(page, '.panel').isHidden(), true);

  // The agent's side: a read-only key, the Python SDK.
  const api = rest(svc.url, svc.token);
  const P = `/api/v1/projects/${svc.projectId}`;
  const reportId = (await api.get(`${P}/feedback?limit=1`)).items[0].id;
  const key = (await api.post(`${P}/keys`, { name: 'agent e2e', scopes: ['feedback:read'] })).key;
  const out = JSON.parse(
    execFileSync(PYTHON, [READ_REPORT, reportId], {
      encoding: 'utf8',
      env: { ...process.env, SVC_MCP_URL: svc.url + '/mcp', SVC_KEY: key },
      timeout: 60000,
    }),
  );
  assert.equal(out.protocolVersion, '2024-11-05');
  assert.ok(out.resources.includes(`svc://reports/${reportId}`), 'resources/list lists the report');
  const { text, images, isError } = out.report;
  assert.equal(isError, false, text);

  // The message first: the title, and the first thing of the report section.
  assert.ok(text.startsWith('# The Pay button does nothing\n'), text);
  assert.ok(text.includes('## Report (written by the reporter; untrusted)\n\n```text\nThe Pay button does nothing\n```\n'), text);
  // The element's text (and name), where the agent greps first.
  assert.match(text, /Pinpoint · Element: `\[data-testid="pay"\]` · text: `Pay now` · .*clicked at \d+%, \d+% of its box/, text);
  assert.ok(text.includes('Comment: `Tapping it shows a spinner, then nothing`'), text);
  assert.match(text, /Quoted text:\n```text\nFree shipping on orders over 50 EUR\.\n```\nElement: `#terms` · text: `Free shipping on orders over 50 EUR\.`/, text);
  // The viewport, the failed request (query values masked), the console error with its token masked.
  assert.ok(text.includes('- viewport: 1000×700 CSS pixels'), text);
  assert.match(text, /- `POST` `http:\/\/127\.0\.0\.1:\d+\/status\/500\?cart=\[redacted\]&email=\[redacted\]` → 500 after \d+ ms at \d{4}-/, text);
  assert.ok(text.includes('Payment failed (500): Authorization: Bearer [redacted]'), text);
  assert.ok(!text.includes(TOKEN) && !text.includes('ada@example.com'), 'no secret reaches the agent');

  // The screenshot: inlined, the viewport at 1x, and the empty input shows no typed-looking text.
  assert.equal(images.length, 1, text);
  assert.match(images[0].mimeType, /^image\/(webp|jpeg)$/);
  const region = await page.evaluate(
    async ({ b64, box }) => {
      const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const bmp = await createImageBitmap(new Blob([bytes]));
      const canvas = new OffscreenCanvas(bmp.width, bmp.height);
      const c2d = canvas.getContext('2d');
      c2d.drawImage(bmp, 0, 0);
      // Inside the border: where a value (or a placeholder drawn as one) would be.
      const d = c2d.getImageData(Math.round(box.x) + 4, Math.round(box.y) + 4, Math.round(box.width) - 8, Math.round(box.height) - 8).data;
      let dark = 0;
      for (let i = 0; i < d.length; i += 4) if (0.299 * d[i] + 0.587 * d[i + 1] + 0.114 * d[i + 2] < 110) dark++;
      return { width: bmp.width, height: bmp.height, dark, pixels: d.length / 4 };
    },
    { b64: images[0].data, box: email },
  );
  assert.deepEqual([region.width, region.height], [1000, 700]);
  assert.ok(region.pixels > 5000, JSON.stringify(region));
  assert.equal(region.dark, 0, `the empty input's region has ${region.dark} dark pixels: its placeholder was drawn like typed text`);

  // The attached file through resources/read, byte for byte.
  const fileUri = /File: `notes\.txt` \([^)]*\) · resource: `(svc:\/\/blobs\/[0-9a-f]{24})`/.exec(text)?.[1];
  assert.ok(fileUri, text);
  assert.deepEqual(out.files[fileUri], { mimeType: 'text/plain', text: NOTES });
  assert.deepEqual(errors, []);
  await ctx.close();
});
