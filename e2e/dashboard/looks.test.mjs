// How the dashboard looks: the sign-in page, the inbox with a report open and the rooms page at
// 1440 and 375 CSS pixels wide, light and dark, with a few realistic reports. Each view is checked
// for what would look broken (content wider than the screen, text cut off in buttons, an image that
// did not load) and photographed into target/dashboard-screenshots/; with SVC_DOCS_IMAGES=1
// (`e2e/dashboard/run.sh --docs-images`) also into docs/images/dashboard-*.png for the docs.

import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import {
  PASSWORD, ROOT, callTool, ingest, launchChromium, makeScreenshot, makeVoice, rest, signIn, startSvc,
} from './lib.mjs';

const WIDTHS = { 1440: { width: 1440, height: 900 }, 375: { width: 375, height: 760 } };
const THEMES = ['light', 'dark'];
const OUT = join(ROOT, 'target', 'dashboard-screenshots');
const DOCS = process.env.SVC_DOCS_IMAGES === '1' ? join(ROOT, 'docs', 'images') : null;
/** The most a docs image may weigh. */
const DOCS_IMAGE_MAX = 200 * 1024;

let svc;
let chrome;
let featured; // the report shown open

before(async () => {
  svc = await startSvc();
  chrome = await launchChromium();
  svc.createUser({ email: 'ada@example.com', password: PASSWORD, name: 'Ada Lovelace', role: 'owner' });
  featured = await seed();
  mkdirSync(OUT, { recursive: true });
});

after(async () => {
  await chrome?.close();
  await svc?.stop();
});

/** A few reports of the kinds people file, in a room or not, triaged to various statuses. */
async function seed() {
  const api = rest(svc.url, svc.token);
  const P = `/api/v1/projects/${svc.projectId}`;
  const filer = ingest(svc);
  const ua = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36';
  const file = async (status, body) => {
    const id = await filer.report(body);
    if (status !== 'new') await api.patch(`${P}/feedback/${id}`, { status });
    return id;
  };
  await callTool(svc, svc.token, 'create_room', { artifact_id: 'preview-482', title: 'Checkout redesign (preview #482)', goal: 'One-page checkout' });
  await file('fixed', { channelKey: 'question', blocks: [{ type: 'text', text: 'How do I change the billing email?\nI cannot find it in the settings.' }], context: { url: 'https://shop.example.com/settings/billing', userId: 'u_2231', userAgent: ua } });
  await file('in-progress', {
    blocks: [{ type: 'text', text: 'Search results flicker while typing\nEvery keystroke redraws the whole list.' }],
    context: { url: 'https://shop.example.com/search?q=mug', userAgent: ua, consoleErrors: ['TypeError: Cannot read properties of undefined (reading "items")'] },
  });
  await file('new', { channelKey: 'idea', blocks: [{ type: 'text', text: 'Export invoices as PDF\nOur accountant asks for PDFs every month.' }], context: { url: 'https://shop.example.com/invoices', userId: 'u_1190' } });
  await file('triaged', {
    blocks: [
      { type: 'quote', text: 'Billed anually', selector: '.plan .period', target: { css: '.plan .period' }, comment: 'Typo: "annually".' },
    ],
    context: { url: 'https://preview-482.shop.example.com/checkout', artifactId: 'preview-482', userAgent: ua },
  });
  const shot = await makeScreenshot(chrome);
  const voice = await makeVoice(chrome);
  const image = await filer.blob('screenshot', shot.png, { type: 'image/png', name: 'shot.png' });
  const note = await filer.blob('audio', voice.bytes, { type: voice.type, name: 'voice.webm', fields: { durationMs: voice.durationMs } });
  const id = await file('new', {
    blocks: [
      { type: 'text', text: 'Pay now does nothing\nThe total shows $0.00 and clicking the button has no effect. Happens on every try.' },
      { type: 'screenshot', blobId: image.blobId },
      { type: 'audio', blobId: note.blobId, transcript: 'So I add two mugs, go to the cart, press pay, and nothing happens.' },
      {
        type: 'pinpoint', selector: '#pay', comment: 'This button',
        target: { css: 'main > button#pay', xpath: '/html/body/main/button', testIds: ['pay-button'] },
        rect: shot.rect, point: { x: 0.5, y: 0.5 },
      },
    ],
    context: { url: 'https://preview-482.shop.example.com/cart', artifactId: 'preview-482', userId: 'u_1842', userAgent: ua, viewport: shot.viewport },
  });
  await callTool(svc, svc.token, 'add_comment', { report_id: id, text: 'The pay handler awaits a promise that never settles when the total is 0. Fix drafted in #512.', kind: 'fix' });
  return id;
}

/** Photographs a view and checks it for what would look broken (added to `problems`). */
async function shoot(page, name, width, theme, problems) {
  const found = await page.evaluate(() => {
    const found = [];
    const root = document.scrollingElement;
    if (root.scrollWidth > window.innerWidth + 1) found.push(`the page scrolls sideways: ${root.scrollWidth} > ${window.innerWidth}`);
    for (const el of document.querySelectorAll('button, .button, .badge, h1, label')) {
      const style = getComputedStyle(el);
      if (el.offsetParent === null || style.visibility === 'hidden' || el.classList.contains('visually-hidden')) continue;
      if (el.scrollWidth > el.clientWidth + 1 && style.overflow !== 'visible') found.push(`cut off: ${el.outerHTML.slice(0, 80)}`);
      const box = el.getBoundingClientRect();
      if (box.right > window.innerWidth + 1 && !el.closest('.list, .detail, .table')) found.push(`off screen: ${el.outerHTML.slice(0, 80)}`);
    }
    for (const img of document.images) if (img.complete && img.naturalWidth === 0 && img.getAttribute('src') !== '') found.push(`broken image ${img.src}`);
    return found;
  });
  for (const problem of found) problems.push(`${name} at ${width}px, ${theme}: ${problem}`);
  const png = await page.screenshot({ type: 'png' });
  const file = `dashboard-${name}-${width}-${theme}.png`;
  writeFileSync(join(OUT, file), png);
  if (DOCS) {
    assert.ok(png.length <= DOCS_IMAGE_MAX, `${file} is ${Math.round(png.length / 1024)} KB (at most ${DOCS_IMAGE_MAX / 1024} KB for docs)`);
    writeFileSync(join(DOCS, file), png);
  }
  return png.length;
}

for (const [width, viewport] of Object.entries(WIDTHS)) {
  test(`sign-in, inbox with a report open, and rooms at ${width}px, light and dark`, async () => {
    const context = await chrome.browser.newContext({ viewport, deviceScaleFactor: 1 });
    const page = await context.newPage();
    const sizes = {};
    const problems = [];
    await page.goto(svc.url + '/sign-in');
    for (const theme of THEMES) {
      await page.emulateMedia({ colorScheme: theme });
      sizes[`sign-in ${theme}`] = await shoot(page, 'sign-in', width, theme, problems);
    }
    await signIn(page, svc.url, 'ada@example.com');
    await page.goto(`${svc.url}/?r=${featured}`);
    await page.locator('#report img').evaluate((img) => img.decode());
    await page.locator('#report audio').evaluate((audio) => audio.readyState >= 1 || new Promise((loaded) => audio.addEventListener('loadedmetadata', loaded, { once: true })));
    for (const theme of THEMES) {
      await page.emulateMedia({ colorScheme: theme });
      sizes[`inbox ${theme}`] = await shoot(page, 'inbox', width, theme, problems);
    }
    await page.goto(`${svc.url}/rooms`);
    for (const theme of THEMES) {
      await page.emulateMedia({ colorScheme: theme });
      sizes[`rooms ${theme}`] = await shoot(page, 'rooms', width, theme, problems);
    }
    console.log(`screenshots at ${width}px (KB): ${Object.entries(sizes).map(([k, v]) => `${k} ${Math.round(v / 1024)}`).join(', ')}`);
    await context.close();
    assert.deepEqual(problems, [], 'nothing looks broken');
  });
}
