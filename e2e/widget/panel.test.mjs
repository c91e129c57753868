// Browser tests of the report panel and its capture features: a reporter using only the mouse and
// the keyboard files a report holding every block type, and every check is made through the REST
// API (the screenshot is downloaded and its pixels measured). Also History, the Russian locale,
// the dialog's focus behaviour, narrow screens and 200% zoom.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { launchBrowser, rest, sleep, startPages, startSvc, until } from './harness.mjs';

let svc;
let pages;
let chrome;
let api;
let P;

before(async () => {
  svc = await startSvc();
  pages = await startPages({ SVC: svc.url, KEY: svc.projectKey });
  chrome = await launchBrowser();
  api = rest(svc.url, svc.token);
  P = `/api/v1/projects/${svc.projectId}`;
});

after(async () => {
  await chrome?.close();
  await pages?.close();
  await svc?.stop();
});

async function open(path, { viewport = { width: 1000, height: 700 }, deviceScaleFactor, locale, wait = !/^(shared|look)/.test(path) } = {}) {
  const ctx = await chrome.browser.newContext({ viewport, deviceScaleFactor, locale });
  const page = await ctx.newPage();
  const logs = [];
  page.on('console', (m) => logs.push({ type: m.type(), text: m.text() }));
  page.on('pageerror', (e) => logs.push({ type: 'pageerror', text: String(e) }));
  await page.goto(pages.url + '/' + path);
  if (wait) await page.waitForFunction(() => window.Svc && Svc.isInitialized());
  return { page, ctx, logs };
}

/** A locator inside the widget's shadow root. */
const W = (page, css, options) => page.locator('[data-svc-widget] >> ' + css, options);
/** The id (or tag) of the element focused inside the widget, or `page` when the focus is outside. */
const focused = (page) =>
  page.evaluate(() => {
    const host = document.activeElement;
    if (!host || !host.hasAttribute('data-svc-widget')) return 'page:' + (host && (host.id || host.tagName));
    const a = host.shadowRoot.activeElement;
    return a ? a.id || a.getAttribute('aria-label') || a.textContent.trim() || a.tagName : 'none';
  });
const insidePanel = (page) =>
  page.evaluate(() => {
    const host = document.activeElement;
    const a = host && host.shadowRoot && host.shadowRoot.activeElement;
    return !!a && !!a.closest('.panel');
  });

async function drag(page, from, to) {
  await page.mouse.move(from[0], from[1]);
  await page.mouse.down();
  await page.mouse.move((from[0] + to[0]) / 2, (from[1] + to[1]) / 2, { steps: 4 });
  await page.mouse.move(to[0], to[1], { steps: 4 });
  await page.mouse.up();
}

/** Where a viewport point of the page lands on the annotation canvas (which shows it scaled). */
async function onCanvas(page, x, y) {
  const box = await W(page, '.shot canvas').boundingBox();
  const { w, h } = await page.evaluate(() => ({ w: innerWidth, h: innerHeight }));
  return [box.x + (x * box.width) / w, box.y + (y * box.height) / h];
}

async function latestReport() {
  const list = await api.get(`${P}/feedback?limit=1`);
  return api.get(`${P}/feedback/${list.items[0].id}`);
}

async function blobBytes(blobId) {
  const r = await fetch(`${svc.url}${P}/blobs/${blobId}`, { headers: { authorization: `Bearer ${svc.token}` } });
  assert.equal(r.status, 200, `blob ${blobId}`);
  return { type: r.headers.get('content-type'), bytes: Buffer.from(await r.arrayBuffer()) };
}

// Decision §3's block schemas: the fields each type may carry and those it must.
const SCHEMA = {
  text: [['text'], ['type', 'text']],
  screenshot: [['blobId'], ['type', 'blobId', 'width', 'height', 'mime', 'bytes', 'annotations']],
  audio: [['blobId'], ['type', 'blobId', 'durationMs', 'mime', 'bytes', 'transcript']],
  selection: [['text'], ['type', 'text', 'selector', 'target']],
  quote: [['text', 'selector', 'target', 'comment'], ['type', 'text', 'selector', 'target', 'comment']],
  pinpoint: [['selector', 'target'], ['type', 'selector', 'target', 'comment', 'point', 'rect']],
  file: [['blobId', 'name'], ['type', 'blobId', 'name', 'mime', 'bytes', 'description']],
};
function assertShape(block) {
  const [required, allowed] = SCHEMA[block.type];
  for (const k of required) assert.ok(block[k] !== undefined, `${block.type}.${k} is present`);
  for (const k of Object.keys(block)) assert.ok(allowed.includes(k), `${block.type} has no field ${k}`);
  if (block.target) {
    assert.equal(typeof block.target.css, 'string');
    assert.equal(typeof block.target.xpath, 'string');
    assert.ok(Array.isArray(block.target.testIds));
    assert.equal(block.selector, block.target.css);
  }
}

describe('a report with every block type', () => {
  test('text, quote, selection, annotated screenshot with blur, voice note, file and pinpoint arrive as decisions §3 says', async () => {
    const { page, ctx, logs } = await open('review.html');
    await page.waitForFunction(() => Svc.getChannels().length > 0);
    const noise = await page.evaluate(() => {
      const r = (id) => {
        const b = document.querySelector(`[data-testid="${id}"]`).getBoundingClientRect();
        return [b.left, b.top, b.width, b.height];
      };
      return { left: r('noise-left'), right: r('noise-right'), headline: r('headline'), vw: innerWidth, vh: innerHeight };
    });

    // Open with the mouse; the message box has the focus; type with the keyboard.
    await W(page, '.launcher').click();
    await W(page, '.panel').waitFor();
    assert.equal(await focused(page), 'svc-msg');
    await page.keyboard.type('The total price is wrong\n\nIt should **include** taxes.');
    assert.match(await W(page, '#svc-count').textContent(), /^54 of 10,000 characters$/);

    // Quote: select a paragraph, comment on it.
    await page.locator('#intro').click({ clickCount: 3 });
    await W(page, '#svc-sel-comment').waitFor();
    await W(page, '#svc-sel-comment').click();
    await page.keyboard.type('Taxes are missing here');
    await W(page, '.box:not([hidden]) button', { hasText: 'Add' }).click();
    await until(async () => (await W(page, '.blocks li').count()) === 1, 5000, 'the quote block');

    // Selection: the headline, no comment.
    await page.locator('[data-testid="headline"]').click({ clickCount: 3 });
    await W(page, '#svc-sel-comment').waitFor();
    await W(page, '.box:not([hidden]) button', { hasText: 'Add' }).click();
    await until(async () => (await W(page, '.blocks li').count()) === 2, 5000, 'the selection block');

    // Screenshot, blur over the left noise field, a rectangle and an arrow.
    await W(page, 'button[aria-label="Take a screenshot of the page"]').click();
    await W(page, '.shot canvas').waitFor({ timeout: 20000 });
    assert.equal(await W(page, '.panel').isHidden(), true, 'the panel steps aside while annotating');
    await W(page, '.shot button', { hasText: 'Blur' }).click();
    const [lx, ly, lw, lh] = noise.left;
    await drag(page, await onCanvas(page, lx - 2, ly - 2), await onCanvas(page, lx + lw + 2, ly + lh + 2));
    await W(page, '.shot button', { hasText: 'Rectangle' }).click();
    const [hx, hy, hw, hh] = noise.headline;
    await drag(page, await onCanvas(page, hx - 6, hy - 6), await onCanvas(page, hx + hw + 6, hy + hh + 6));
    await W(page, '.shot button', { hasText: 'Arrow' }).click();
    await drag(page, await onCanvas(page, 700, 300), await onCanvas(page, noise.right[0] + 120, noise.right[1] + 20));
    await W(page, '.shot button', { hasText: 'Add screenshot' }).click();
    await until(async () => (await W(page, '.blocks li').count()) === 3, 20000, 'the screenshot block');
    assert.match(await W(page, '.blocks li').nth(2).textContent(), /Screenshot.*3 marks/);

    // Voice note from the fake microphone.
    await W(page, 'button[aria-label="Record a voice note"]').click();
    await W(page, '.rec:not([hidden])').waitFor();
    await sleep(1600);
    assert.match(await W(page, '.rec [role=timer]').textContent(), /^0:0[1-3] \/ 5:00$/, 'a visible timer');
    await W(page, '.rec button', { hasText: 'Stop and add' }).click();
    await until(async () => (await W(page, '.blocks li').count()) === 4, 20000, 'the voice block');

    // A file, picked with the file chooser.
    const chooser = page.waitForEvent('filechooser');
    await W(page, 'button[aria-label="Attach files"]').click();
    await (await chooser).setFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('order 42: total 19.99') });
    await until(async () => (await W(page, '.blocks li').count()) === 5, 10000, 'the file block');
    assert.match(await W(page, '.blocks li').nth(4).textContent(), /notes\.txt · 21\u00a0B/);

    // Pinpoint: the panel steps aside, hovering outlines, a click picks the element.
    await W(page, 'button[aria-label="Comment on an element of the page"]').click();
    await W(page, '.pp').waitFor();
    assert.equal(await W(page, '.panel').isHidden(), true);
    const buy = await page.locator('#buy').boundingBox();
    await page.mouse.move(buy.x + buy.width * 0.25, buy.y + buy.height * 0.5);
    await until(async () => (await W(page, '.pp .hl').evaluate((e) => getComputedStyle(e).display)) === 'block', 3000, 'the hover outline');
    const clicked = await page.evaluate(() => {
      window.buyClicks = 0;
      document.getElementById('buy').addEventListener('click', () => window.buyClicks++);
    });
    void clicked;
    await page.mouse.click(buy.x + buy.width * 0.25, buy.y + buy.height * 0.5);
    await W(page, '#svc-pin-comment').waitFor();
    assert.equal(await page.evaluate(() => window.buyClicks), 0, 'the page never sees the picking click');
    assert.equal(await focused(page), 'svc-pin-comment');
    await page.keyboard.type('Make this button green');
    await W(page, '.box:not([hidden]) button', { hasText: 'Add' }).click();
    await until(async () => (await W(page, '.blocks li').count()) === 6, 5000, 'the pinpoint block');

    // Send with the keyboard from the message box.
    await W(page, '#svc-msg').focus();
    await page.keyboard.press('Control+Enter');
    await until(async () => /Sent/.test(await W(page, '.status').textContent()), 15000, 'the report to be sent');
    assert.equal(await W(page, '.blocks li').count(), 0, 'the draft is cleared');
    // The panel steps back; a short confirmation with the launcher's mascot stays a moment.
    assert.equal(await W(page, '.panel').isHidden(), true, 'the panel closes after Send');
    await until(async () => (await W(page, '.toast').textContent()) === 'Sent. Thank you!', 3000, 'the confirmation');
    assert.equal(await W(page, '.toast').getAttribute('role'), 'status');
    assert.ok(await W(page, '.toast .av svg').count(), 'the mascot in the confirmation');
    assert.equal(await focused(page), 'Send feedback', 'the focus is back on the launcher');
    await until(async () => (await W(page, '.toast').count()) === 0, 6000, 'the confirmation to go');

    const report = await latestReport();
    assert.equal(report.title, 'The total price is wrong');
    assert.equal(report.context.artifactId, 'pricing-v3');
    const types = report.blocks.map((b) => b.type);
    // The typed message first, then the thread in the order it was made.
    assert.deepEqual(types, ['text', 'quote', 'selection', 'screenshot', 'audio', 'file', 'pinpoint']);
    for (const b of report.blocks) assertShape(b);
    const [text, quote, selection, shot, audio, file, pin] = report.blocks;
    assert.equal(text.text, 'The total price is wrong\n\nIt should **include** taxes.');
    assert.equal(quote.text, 'The total price is shown before taxes. Customers pay when the order ships.');
    assert.equal(quote.comment, 'Taxes are missing here');
    assert.equal(quote.selector, '#intro');
    assert.equal(selection.text, 'Pricing page, draft 3');
    assert.equal(selection.selector, '[data-testid="headline"]');
    assert.deepEqual(selection.target.testIds, ['headline']);
    assert.equal(shot.width, 1000);
    assert.equal(shot.height, 700);
    assert.match(shot.mime, /^image\/(webp|jpeg)$/);
    assert.deepEqual(shot.annotations.map((a) => a.kind), ['blur', 'rect', 'arrow']);
    for (const a of shot.annotations) {
      assert.equal(a.points.length, 2);
      for (const p of a.points) assert.ok(p.length === 2 && p.every(Number.isFinite));
    }
    assert.equal(shot.annotations[1].color, '#e53935');
    assert.match(audio.mime, /^audio\/(webm|mp4)/);
    assert.ok(audio.durationMs >= 1000 && audio.durationMs < 10000, `durationMs ${audio.durationMs}`);
    assert.ok(audio.bytes > 500, `audio bytes ${audio.bytes}`);
    assert.equal(file.name, 'notes.txt');
    assert.equal(file.bytes, 21);
    assert.equal(pin.selector, '[data-testid="buy"]');
    assert.equal(pin.comment, 'Make this button green');
    assert.ok(pin.point.x > 0.1 && pin.point.x < 0.4 && pin.point.y > 0.3 && pin.point.y < 0.7, JSON.stringify(pin.point));
    assert.deepEqual(pin.rect, { x: Math.round(buy.x), y: Math.round(buy.y), width: Math.round(buy.width), height: Math.round(buy.height) });

    // The voice note is a real recording.
    const voice = await blobBytes(audio.blobId);
    assert.ok(voice.bytes.length === audio.bytes);
    assert.deepEqual([...voice.bytes.subarray(0, 4)], [0x1a, 0x45, 0xdf, 0xa3], 'a WebM file');

    // The screenshot is a picture of the viewport, the blurred field blurred, the other one not.
    const picture = await blobBytes(shot.blobId);
    const stats = await page.evaluate(
      async ({ b64, left, right }) => {
        const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
        const bmp = await createImageBitmap(new Blob([bytes]));
        const canvas = new OffscreenCanvas(bmp.width, bmp.height);
        const ctx = canvas.getContext('2d');
        ctx.drawImage(bmp, 0, 0);
        const variance = ([x, y, w, h]) => {
          const d = ctx.getImageData(Math.round(x), Math.round(y), Math.round(w), Math.round(h)).data;
          let sum = 0;
          let sq = 0;
          const n = d.length / 4;
          for (let i = 0; i < d.length; i += 4) {
            const l = 0.299 * d[i] + 0.587 * d[i + 1] + 0.114 * d[i + 2];
            sum += l;
            sq += l * l;
          }
          return sq / n - (sum / n) ** 2;
        };
        const inset = ([x, y, w, h]) => [x + 16, y + 16, w - 32, h - 32];
        return { width: bmp.width, height: bmp.height, whole: variance([0, 0, bmp.width, bmp.height]), left: variance(inset(left)), right: variance(inset(right)) };
      },
      { b64: picture.bytes.toString('base64'), left: noise.left, right: noise.right },
    );
    assert.deepEqual([stats.width, stats.height], [noise.vw, noise.vh], 'the viewport, at 1x');
    assert.ok(stats.whole > 100, `not blank: variance ${stats.whole}`);
    assert.ok(stats.right > 1000, `the control field keeps its noise: ${stats.right}`);
    assert.ok(stats.left < stats.right * 0.15, `the blurred field lost its detail: ${stats.left} vs ${stats.right}`);
    assert.deepEqual(logs.filter((l) => l.type === 'pageerror'), []);
    await ctx.close();
  });

  test('files: the size limit from /ingest/config is checked before uploading, and files can be dropped', async () => {
    const { page, ctx } = await open('review.html');
    await page.evaluate(() => Svc.openForm());
    await page.waitForFunction(() => Svc.getChannels().length > 0);
    const chooser = page.waitForEvent('filechooser');
    await W(page, 'button[aria-label="Attach files"]').click();
    const uploads = [];
    page.on('request', (r) => r.url().endsWith('/ingest/blob') && uploads.push(r.url()));
    await (await chooser).setFiles({ name: 'huge.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(5 * 1024 * 1024 + 1) });
    await until(async () => /huge\.bin is larger than 5\u00a0MB/.test(await W(page, '.status').textContent()), 5000, 'the size message');
    assert.equal(uploads.length, 0, 'nothing uploaded');
    // Drop a file onto the panel.
    const data = await page.evaluateHandle(() => {
      const dt = new DataTransfer();
      dt.items.add(new File(['dropped!'], 'dropped.txt', { type: 'text/plain' }));
      return dt;
    });
    const panel = W(page, '.panel');
    await panel.dispatchEvent('dragenter', { dataTransfer: data });
    assert.equal(await W(page, '.drop').isVisible(), true, 'a drop hint');
    await panel.dispatchEvent('drop', { dataTransfer: data });
    await until(async () => (await W(page, '.blocks li').count()) === 1, 10000, 'the dropped file');
    assert.match(await W(page, '.blocks li').textContent(), /dropped\.txt · 8\u00a0B/);
    // Removing a block from the thread.
    await W(page, '.blocks li button').click();
    assert.equal(await W(page, '.blocks li').count(), 0);
    assert.deepEqual(await page.evaluate(() => Object.keys(localStorage).filter((k) => k.includes(':draft:'))), []);
    await ctx.close();
  });

  test('the thread and the unsent text survive a reload; push-to-talk records while the key is held', async () => {
    const { page, ctx } = await open('shared.html');
    await page.evaluate((key) => Svc.init({ projectKey: key, pushToTalkKey: 'F2' }), svc.projectKey);
    await page.evaluate(() => Svc.openForm());
    await W(page, '#svc-msg').fill('half a thought');
    await page.evaluate(() => Svc.attachFile({ name: 'kept.txt', content: 'kept' }));
    await page.reload();
    await page.evaluate((key) => Svc.init({ projectKey: key, pushToTalkKey: 'F2' }), svc.projectKey);
    await page.evaluate(() => Svc.openForm());
    assert.equal(await W(page, '#svc-msg').inputValue(), 'half a thought');
    assert.equal(await W(page, '.blocks li').count(), 1);
    assert.match(await W(page, '.panel').textContent(), /Hold F2 to talk/);
    await W(page, '#svc-msg').blur();
    await W(page, '.panel h2').click();
    await page.keyboard.down('F2');
    await W(page, '.rec:not([hidden])').waitFor();
    await sleep(1200);
    await page.keyboard.up('F2');
    await until(async () => (await W(page, '.blocks li').count()) === 2, 15000, 'the push-to-talk note');
    await W(page, 'button.primary').click();
    await until(async () => /Sent/.test(await W(page, '.status').textContent()), 10000, 'sent');
    const report = await latestReport();
    assert.deepEqual(report.blocks.map((b) => b.type), ['text', 'file', 'audio']);
    assert.equal(report.blocks[0].text, 'half a thought');
    await ctx.close();
  });
});

describe('history', () => {
  test('shows sent, queued and failed reports from local storage, without a request', async () => {
    const { page, ctx } = await open('shared.html');
    await page.evaluate((key) => Svc.init({ projectKey: key }), svc.projectKey);
    await page.evaluate(() => Svc.openForm());
    await page.waitForFunction(() => Svc.getChannels().length > 0);
    // A sent or queued report closes the panel: each one starts by opening it.
    const send = async (text) => {
      await page.evaluate(() => Svc.openForm());
      await W(page, '#svc-msg').fill(text);
      await W(page, 'button.primary').click();
    };
    await send('history: sent one');
    await until(async () => /Sent/.test(await W(page, '.status').textContent()), 10000, 'sent');

    // Refused by the server: failed.
    await page.route('**/ingest/report', (route) => route.fulfill({ status: 400, contentType: 'application/json', body: '{"error":"blocks_invalid"}' }));
    await send('history: refused one');
    await until(async () => /Could not send the report \(blocks_invalid\)/.test(await W(page, '.status').textContent()), 10000, 'the refusal');
    await page.unroute('**/ingest/report');

    // Offline: queued.
    await ctx.setOffline(true);
    await send('history: queued one');
    await until(async () => /Saved\. It will be sent/.test(await W(page, '.status').textContent()), 10000, 'queued');

    await page.evaluate(() => Svc.openForm());
    const requests = [];
    page.on('request', (r) => requests.push(r.url()));
    await W(page, 'button', { hasText: 'History' }).click();
    assert.equal(await W(page, 'button', { hasText: 'History' }).getAttribute('aria-expanded'), 'true');
    const items = await W(page, '.history li').evaluateAll((lis) =>
      lis.map((li) => ({ title: li.querySelector('.ttl').textContent, state: li.querySelector('.st').textContent, meta: li.querySelector('.meta').textContent })),
    );
    assert.deepEqual(
      items.map((i) => [i.title, i.state]),
      [
        ['history: queued one', 'queued'],
        ['history: refused one', 'failed'],
        ['history: sent one', 'sent'],
      ],
    );
    for (const i of items) assert.match(i.meta, /^Bugs·\d{1,2}\/\d{1,2}\/\d{2}, \d{1,2}:\d{2}\s?[AP]M/, i.meta);
    assert.deepEqual(requests, [], 'History makes no request');
    await ctx.close();
  });
});

describe('dialog behaviour', () => {
  test('keyboard: the launcher is a labelled button with aria-expanded; focus moves in, Tab stays inside, Esc closes and focus returns', async () => {
    const { page, ctx } = await open('look.html');
    await page.evaluate((key) => Svc.init({ projectKey: key }), svc.projectKey);
    const launcher = W(page, '.launcher');
    await launcher.waitFor();
    assert.equal(await launcher.evaluate((b) => b.tagName), 'BUTTON');
    assert.equal(await launcher.getAttribute('aria-label'), 'Send feedback');
    assert.equal(await launcher.getAttribute('aria-expanded'), 'false');
    // Tab from the page's own control to the launcher, Enter opens.
    await page.locator('#near').focus();
    await page.keyboard.press('Tab');
    assert.equal(await focused(page), 'Send feedback');
    await page.keyboard.press('Enter');
    await W(page, '.panel').waitFor();
    const dialog = W(page, '.panel');
    assert.equal(await dialog.getAttribute('role'), 'dialog');
    assert.equal(await page.evaluate(() => {
      const root = document.querySelector('[data-svc-widget]').shadowRoot;
      return root.getElementById(root.querySelector('.panel').getAttribute('aria-labelledby')).textContent;
    }), 'Feedback');
    assert.equal(await launcher.getAttribute('aria-expanded'), 'true');
    assert.equal(await focused(page), 'svc-msg');
    const seen = new Set();
    for (let i = 0; i < 14; i++) {
      await page.keyboard.press('Tab');
      assert.ok(await insidePanel(page), `Tab ${i + 1} stays in the dialog`);
      seen.add(await focused(page));
    }
    for (const name of ['Close', 'svc-channel', 'svc-msg', 'Take a screenshot of the page', 'Record a voice note', 'Attach files', 'History', 'Send']) {
      assert.ok(seen.has(name), `${name} is reachable by Tab (${[...seen].join(', ')})`);
    }
    for (let i = 0; i < 14; i++) {
      await page.keyboard.press('Shift+Tab');
      assert.ok(await insidePanel(page), `Shift+Tab ${i + 1} stays in the dialog`);
    }
    // Status messages go to a live region.
    assert.equal(await W(page, '.status').getAttribute('role'), 'status');
    await W(page, 'button.primary').focus();
    await page.keyboard.press('Enter');
    await until(async () => /Write a message/.test(await W(page, '.status').textContent()), 3000, 'the empty-report message');
    await page.keyboard.press('Escape');
    assert.equal(await dialog.isHidden(), true);
    assert.equal(await launcher.getAttribute('aria-expanded'), 'false');
    assert.equal(await focused(page), 'Send feedback', 'focus is back on the launcher');
    // The launcher toggles the panel; the close button closes it.
    await launcher.click();
    await dialog.waitFor();
    await W(page, 'button[aria-label="Close"]').click();
    assert.equal(await dialog.isHidden(), true);
    assert.equal(await focused(page), 'Send feedback');

    // Headless (triggerVariant none): openForm opens, Esc gives the focus back to where it was.
    await page.evaluate((key) => Svc.init({ projectKey: key, triggerVariant: 'none' }), svc.projectKey);
    await page.locator('#near').focus();
    await page.evaluate(() => Svc.openForm());
    assert.equal(await focused(page), 'svc-msg');
    await page.keyboard.press('Escape');
    assert.equal(await focused(page), 'page:near');
    await ctx.close();
  });

  test("the panel's header shows the launcher's mascot, whatever the channel's", async () => {
    const { page, ctx } = await open('shared.html');
    await page.evaluate((key) => Svc.init({ projectKey: key, mascot: 'robot' }), svc.projectKey);
    await page.waitForFunction(() => Svc.getChannels().length > 0);
    const channelMascot = await page.evaluate(() => Svc.getChannel().mascot);
    assert.notEqual(channelMascot, 'robot', 'the active channel has a mascot of its own');
    await page.evaluate(() => Svc.openForm());
    await until(async () => (await W(page, '.head .av').getAttribute('data-m')) === 'robot', 5000, 'the launcher mascot in the header');
    const launcher = await W(page, '.launcher .m').innerHTML();
    assert.equal(await W(page, '.head .av').innerHTML(), launcher, 'the same picture as the launcher');
    await ctx.close();
  });

  test('the annotation step is a dialog of its own: Tab stays in it, Esc cancels it', async () => {
    const { page, ctx } = await open('review.html');
    await page.evaluate(() => Svc.openForm());
    await W(page, 'button[aria-label="Take a screenshot of the page"]').click();
    const editor = W(page, '.shot');
    await editor.waitFor({ timeout: 20000 });
    assert.equal(await editor.getAttribute('role'), 'dialog');
    assert.equal(await editor.getAttribute('aria-label'), 'Mark up the screenshot');
    for (let i = 0; i < 10; i++) {
      await page.keyboard.press('Tab');
      assert.equal(await page.evaluate(() => !!document.querySelector('[data-svc-widget]').shadowRoot.activeElement?.closest('.shot')), true);
    }
    await page.keyboard.press('Escape');
    assert.equal(await editor.count(), 0);
    assert.equal(await W(page, '.panel').isVisible(), true, 'the panel is back');
    assert.equal(await W(page, '.blocks li').count(), 0, 'nothing added');
    assert.equal(await focused(page), 'Take a screenshot of the page');
    await ctx.close();
  });
});

describe('contrast', () => {
  test('every text of the panel, the annotation step and the pinpoint bar has a contrast of at least 4.5:1', async () => {
    const { page, ctx } = await open('review.html');
    await page.evaluate(() => Svc.openForm());
    await page.evaluate(() => Svc.attachFile({ name: 'contrast.txt', content: 'x' }));
    await page.evaluate(() => Svc.report({ message: 'contrast history' }));
    await page.locator('#intro').click({ clickCount: 3 });
    await W(page, 'button', { hasText: 'History' }).click();
    await W(page, 'button.primary').click(); // a status message, and the confirmation
    await until(async () => (await W(page, '.toast').count()) === 1 && (await W(page, '.toast').textContent()) !== '', 5000, 'the confirmation');
    await page.evaluate(() => Svc.openForm());
    const measure = () =>
      page.evaluate(() => {
        const parse = (c) => {
          const m = c.match(/rgba?\(([^)]+)\)/);
          const [r, g, b, a = 1] = m[1].split(/[,\s/]+/).filter(Boolean).map(Number);
          return { r, g, b, a };
        };
        const lum = ({ r, g, b }) => {
          const f = (v) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
          return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
        };
        const over = (top, under) => ({ r: top.r * top.a + under.r * (1 - top.a), g: top.g * top.a + under.g * (1 - top.a), b: top.b * top.a + under.b * (1 - top.a), a: 1 });
        const background = (el) => {
          const layers = [];
          for (let n = el; n && n.nodeType === 1; n = n.parentElement || n.getRootNode().host) {
            const c = parse(getComputedStyle(n).backgroundColor);
            if (c.a > 0) layers.push(c);
            if (c.a === 1) break;
          }
          return layers.reverse().reduce((under, top) => over(top, under), { r: 255, g: 255, b: 255, a: 1 });
        };
        const ratio = (fg, bg) => {
          const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
          return (a + 0.05) / (b + 0.05);
        };
        const root = document.querySelector('[data-svc-widget]').shadowRoot;
        const low = [];
        let checked = 0;
        for (const el of root.querySelectorAll('*')) {
          const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
          if (!own || !el.getClientRects().length || el.closest('[hidden]') || el.closest('button:disabled') || getComputedStyle(el).visibility === 'hidden') continue;
          const bg = background(el);
          const fg = over(parse(getComputedStyle(el).color), bg);
          const r = ratio(fg, bg);
          checked++;
          if (r < 4.5) low.push(`${el.tagName}.${el.className} "${el.textContent.trim().slice(0, 30)}": ${r.toFixed(2)}`);
        }
        for (const ta of root.querySelectorAll('textarea')) {
          if (!ta.getClientRects().length) continue;
          const r = ratio(parse(getComputedStyle(ta, '::placeholder').color), background(ta));
          checked++;
          if (r < 4.5) low.push(`placeholder of #${ta.id}: ${r.toFixed(2)}`);
        }
        return { low, checked };
      });
    let result = await measure();
    assert.deepEqual(result.low, []);
    assert.ok(result.checked > 25, `checked ${result.checked}`);
    await W(page, 'button[aria-label="Take a screenshot of the page"]').click();
    await W(page, '.shot').waitFor({ timeout: 20000 });
    result = await measure();
    assert.deepEqual(result.low, []);
    await page.keyboard.press('Escape');
    await W(page, 'button[aria-label="Comment on an element of the page"]').click();
    await W(page, '.pp').waitFor();
    result = await measure();
    assert.deepEqual(result.low, []);
    await page.keyboard.press('Escape');
    await ctx.close();
  });
});

describe('words and reach', () => {
  test('the ru locale shows no English string, with Russian plurals', async () => {
    const { page, ctx } = await open('review.html', { locale: 'ru-RU' });
    assert.equal(await page.evaluate(() => navigator.language), 'ru-RU');
    await page.evaluate(() => Svc.openForm());
    await page.waitForFunction(() => Svc.getChannels().length > 0);
    // Something in every state: thread items, a selection box, the recording bar, History.
    for (let i = 0; i < 2; i++) await page.evaluate((n) => Svc.attachFile({ name: `f${n}.txt`, content: 'x' }), i);
    await page.evaluate(() => Svc.report({ message: 'для истории' }));
    await page.locator('#intro').click({ clickCount: 3 });
    await W(page, 'button[aria-label="Записать голосовую заметку"]').click();
    await W(page, '.rec:not([hidden])').waitFor();
    await W(page, 'button', { hasText: 'История' }).click();
    const english = () =>
      page.evaluate(() => {
        const root = document.querySelector('[data-svc-widget]').shadowRoot;
        const found = [];
        const check = (text, where) => {
          for (const word of (text || '').match(/[A-Za-z]{2,}/g) || []) if (word !== 'Esc') found.push(`${where}: ${word} (${text.trim()})`);
        };
        const walk = (node) => {
          if (node.nodeType === 1) {
            if (node.getAttribute('translate') === 'no' || node.tagName === 'STYLE' || node.tagName === 'svg' || node.closest('[hidden]')) return;
            for (const a of ['aria-label', 'title', 'placeholder']) if (node.hasAttribute(a)) check(node.getAttribute(a), a);
          } else if (node.nodeType === 3) check(node.textContent, 'text');
          for (const child of node.childNodes) walk(child);
        };
        walk(root);
        return found;
      });
    assert.deepEqual(await english(), []);
    const thread = await W(page, '#svc-thread').textContent();
    assert.equal(thread, 'В этом отчёте · 2 вложения');
    await page.evaluate(() => Svc.attachFile({ name: 'f3.txt', content: 'x' }));
    await W(page, '.status').click(); // any re-render
    await page.evaluate(() => Svc.attachFile({ name: 'f4.txt', content: 'x' }));
    await page.evaluate(() => Svc.attachFile({ name: 'f5.txt', content: 'x' }));
    await W(page, '.rec button', { hasText: 'Остановить и добавить' }).click();
    await until(async () => /6 вложений/.test(await W(page, '#svc-thread').textContent()), 15000, 'six items');
    assert.match(await W(page, '#svc-count').textContent(), /^\d+ из 10\u00a0000 символов$/);
    // The annotation step in Russian too.
    await W(page, 'button[aria-label="Сделать снимок страницы"]').click();
    await W(page, '.shot').waitFor({ timeout: 20000 });
    assert.deepEqual(await english(), []);
    assert.equal(await W(page, '.shot').getAttribute('aria-label'), 'Разметка снимка');
    await page.keyboard.press('Escape');
    assert.equal(await W(page, '.launcher').getAttribute('aria-label'), 'Отправить отзыв');
    await ctx.close();
  });

  test('320 px wide: a full-width sheet with every control reachable', async () => {
    const { page, ctx } = await open('review.html', { viewport: { width: 320, height: 640 } });
    await page.evaluate(() => Svc.openForm());
    const box = await W(page, '.panel').boundingBox();
    assert.equal(box.x, 0);
    assert.equal(box.width, 320);
    assert.ok(box.y + box.height <= 640.5 && box.y >= 0, JSON.stringify(box));
    const outside = await W(page, '.panel button, .panel textarea, .panel select').evaluateAll((els) =>
      els
        .filter((e) => e.getClientRects().length)
        .map((e) => {
          e.scrollIntoView({ block: 'nearest' });
          const r = e.getBoundingClientRect();
          return r.left >= 0 && r.right <= innerWidth + 0.5 && r.top >= 0 && r.bottom <= innerHeight + 0.5 ? null : e.textContent || e.id;
        })
        .filter(Boolean),
    );
    assert.deepEqual(outside, []);
    await ctx.close();
  });

  test('200% zoom: the panel fits the viewport and scrolls inside', async () => {
    // A 1280x800 window at 200% is a 640x400 CSS viewport with two device pixels per CSS pixel.
    const { page, ctx } = await open('review.html', { viewport: { width: 640, height: 400 }, deviceScaleFactor: 2 });
    await page.evaluate(() => Svc.openForm());
    for (let i = 0; i < 3; i++) await page.evaluate((n) => Svc.attachFile({ name: `zoom${n}.txt`, content: 'x' }), i);
    await W(page, '.status').click();
    const box = await W(page, '.panel').boundingBox();
    assert.ok(box.x >= 0 && box.y >= 0 && box.x + box.width <= 640.5 && box.y + box.height <= 400.5, JSON.stringify(box));
    const send = await W(page, 'button.primary').boundingBox();
    assert.ok(send.y + send.height <= 400.5, 'Send stays in view');
    await W(page, '#svc-msg').fill('zoomed');
    await W(page, 'button.primary').click();
    await until(async () => /Sent/.test(await W(page, '.status').textContent()), 10000, 'sent');
    // The screenshot is taken at the device pixel ratio.
    await page.evaluate(() => Svc.openForm());
    await W(page, 'button[aria-label="Take a screenshot of the page"]').click();
    await W(page, '.shot canvas').waitFor({ timeout: 20000 });
    assert.deepEqual(await W(page, '.shot canvas').evaluate((c) => [c.width, c.height]), [1280, 800]);
    await ctx.close();
  });
});
