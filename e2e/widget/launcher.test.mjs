// Browser tests of the launcher (mascots, shapes, anchors, size, offsets, trigger variants, the
// project's settings under the init options, reduced motion, prefetch), isolation (strict CSP,
// hostile page CSS) and the size budgets measured on what the server sends.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { NONCE, launchBrowser, rest, startPages, startSvc, until } from './harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const distMascot = (name) => readFileSync(join(here, '..', '..', 'widget', 'dist', 'mascots', name + '.svg'), 'utf8').trim();

let svc;
let pages;
let chrome;
let api;
let P;
let look; // a second project with its own widgetConfig

before(async () => {
  svc = await startSvc();
  look = svc.createProject('Launcher look');
  const lookApi = rest(svc.url, look.setupToken);
  await lookApi.patch(`/api/v1/projects/${look.projectId}`, { widgetConfig: { mascot: 'robot', shape: 'pill', anchor: 'top-left', offsetX: 10, offsetY: 20, size: 40 } });
  pages = await startPages({ SVC: svc.url, KEY: svc.projectKey, KEY2: look.projectKey });
  chrome = await launchBrowser();
  api = rest(svc.url, svc.token);
  P = `/api/v1/projects/${svc.projectId}`;
});

after(async () => {
  await chrome?.close();
  await pages?.close();
  await svc?.stop();
});

async function open(path, { viewport = { width: 1000, height: 700 }, reducedMotion } = {}) {
  const ctx = await chrome.browser.newContext({ viewport, reducedMotion });
  const page = await ctx.newPage();
  const logs = [];
  const requests = [];
  page.on('console', (m) => logs.push({ type: m.type(), text: m.text() }));
  page.on('pageerror', (e) => logs.push({ type: 'pageerror', text: String(e) }));
  page.on('request', (r) => requests.push(r.url()));
  await page.goto(pages.url + '/' + path);
  return { page, ctx, logs, requests };
}

const W = (page, css, options) => page.locator('[data-svc-widget] >> ' + css, options);
const init = (page, options) => page.evaluate(([key, o]) => Svc.init({ projectKey: key, ...o }), [svc.projectKey, options]);
const launcherBox = (page) =>
  W(page, '.launcher').evaluate((b) => {
    const r = b.getBoundingClientRect();
    const cs = getComputedStyle(b);
    return { left: r.left, top: r.top, right: innerWidth - r.right, bottom: innerHeight - r.bottom, width: r.width, height: r.height, cx: r.left + r.width / 2, cy: r.top + r.height / 2, radius: cs.borderRadius, text: b.textContent };
  });

describe('launcher', () => {
  test('the per-project loader carries the configured mascot: no extra request for it', async () => {
    const { page, ctx, requests } = await open('look-project.html');
    await page.waitForFunction(() => window.Svc && Svc.isInitialized());
    await W(page, '.launcher .m svg').waitFor();
    const drawn = await W(page, '.launcher .m svg').evaluate((svg) => [svg.getAttribute('viewBox'), svg.querySelectorAll('*').length]);
    const robot = distMascot('robot');
    assert.deepEqual(drawn, ['0 0 48 48', (robot.match(/<(path|circle|rect|ellipse)/g) || []).length], 'the robot of widget/dist/mascots');
    assert.ok(!requests.some((u) => /\/v1\/parts\/mascots\./.test(u)), 'the mascots part is not fetched');
    // The project's appearance: a pill at the top left, 40 px, offsets inward.
    const box = await launcherBox(page);
    assert.deepEqual([box.left, box.top, box.height], [26, 36, 40]);
    assert.ok(box.width > box.height && box.text === 'Feedback', 'a pill with a label');
    const loader = await (await fetch(`${svc.url}/v1/svc/${look.projectKey}.js`)).text();
    assert.ok(loader.includes('"mascotSvg":'), 'baked into the loader');
    assert.ok(!loader.includes('#8d6e63'), 'and only that one (no owl colours)');
    await ctx.close();
  });

  test('init options win over the project widgetConfig; other mascots come from the mascots part', async () => {
    const { page, ctx, requests } = await open('shared.html');
    await page.evaluate((key) => Svc.init({ projectKey: key, anchor: 'bottom-right', mascot: 'owl' }), look.projectKey);
    // The shared bundle fetches the project's settings: shape, size and offsets from the project.
    await until(async () => (await launcherBox(page)).height === 40, 5000, 'the project settings');
    const box = await launcherBox(page);
    assert.deepEqual([box.right, box.bottom], [26, 36], 'bottom-right (init) with the project offsets, inward');
    assert.equal(box.text, 'Feedback', 'pill (project)');
    await W(page, '.launcher .m svg').waitFor();
    assert.ok((await W(page, '.launcher .m').innerHTML()).includes('#8d6e63'), 'the owl');
    assert.ok(requests.some((u) => /\/v1\/parts\/mascots\.[0-9a-f]{10}\.js$/.test(u)));
    await ctx.close();
  });

  test('eight anchors, offsets inward, five shapes, size clamped to 32..64', async () => {
    const { page, ctx } = await open('look.html');
    const vw = 1000;
    const vh = 700;
    const expect = {
      'top-left': (b) => [b.left, b.top],
      'top-center': (b) => [b.cx - vw / 2, b.top],
      'top-right': (b) => [b.right, b.top],
      'middle-left': (b) => [b.left, b.cy - vh / 2],
      'middle-right': (b) => [b.right, b.cy - vh / 2],
      'bottom-left': (b) => [b.left, b.bottom],
      'bottom-center': (b) => [b.cx - vw / 2, b.bottom],
      'bottom-right': (b) => [b.right, b.bottom],
    };
    for (const [anchor, measure] of Object.entries(expect)) {
      await init(page, { anchor, offsetX: 8, offsetY: 12, shape: 'bubble' });
      const b = await launcherBox(page);
      const [x, y] = measure(b);
      const [h, v] = [anchor.split('-')[1], anchor.split('-')[0]];
      assert.equal(Math.round(x), h === 'center' ? 8 : 16 + 8, `${anchor} x`);
      assert.equal(Math.round(y), v === 'middle' ? 12 : 16 + 12, `${anchor} y`);
      assert.deepEqual([b.width, b.height], [44, 44]);
    }
    const shapes = {};
    for (const shape of ['bubble', 'pill', 'tab', 'blob', 'frame-tab']) {
      await init(page, { shape, anchor: 'middle-right' });
      shapes[shape] = await launcherBox(page);
    }
    assert.equal(shapes.bubble.radius, '50%');
    assert.ok(shapes.pill.width > 80 && shapes.pill.text === 'Feedback');
    assert.ok(shapes.tab.text === 'Feedback' && shapes.tab.radius === '10px');
    assert.match(shapes.blob.radius, /60% 40% 55% 45%/);
    assert.equal(shapes['frame-tab'].right, 0, 'a frame tab sits flush with the edge');
    assert.equal(shapes['frame-tab'].radius, '12px 0px 0px 12px');
    await init(page, { shape: 'frame-tab', anchor: 'bottom-center' });
    assert.equal((await launcherBox(page)).bottom, 0);
    assert.equal((await launcherBox(page)).radius, '12px 12px 0px 0px');
    for (const [size, want] of [[10, 32], [50, 50], [100, 64]]) {
      await init(page, { size });
      assert.equal((await launcherBox(page)).height, want, `size ${size}`);
    }
    await ctx.close();
  });

  test('triggerVariant: devwidget draws a labelled developer button, none draws nothing', async () => {
    const { page, ctx } = await open('look.html');
    await init(page, { triggerVariant: 'devwidget', anchor: 'bottom-left' });
    const dev = await launcherBox(page);
    assert.equal(dev.text, 'Feedback');
    assert.equal(dev.height, 30);
    assert.equal(await W(page, '.launcher').evaluate((b) => getComputedStyle(b).backgroundColor), 'rgb(29, 29, 31)');
    await init(page, { triggerVariant: 'none' });
    assert.equal(await W(page, '.launcher').count(), 0);
    await page.evaluate(() => Svc.openForm());
    assert.equal(await W(page, '.panel').isVisible(), true, 'openForm still opens the panel');
    await ctx.close();
  });

  test('it covers no more of the page than its own size, respects reduced motion and prefetches on hover', async () => {
    const { page, ctx, requests } = await open('look.html', { reducedMotion: 'reduce' });
    await init(page, { anchor: 'top-left', offsetX: 0, offsetY: 0 });
    const host = await page.evaluate(() => {
      const r = document.querySelector('[data-svc-widget]').getBoundingClientRect();
      return [r.width, r.height];
    });
    assert.deepEqual(host, [0, 0], 'the host element is an empty box');
    const b = await launcherBox(page);
    // Just outside the launcher the page gets the pointer; inside, the launcher does.
    const hit = await page.evaluate(
      ([x, y, cx, cy]) => [document.elementFromPoint(x, y)?.closest('[data-svc-widget]'), document.elementFromPoint(cx, cy)?.hasAttribute('data-svc-widget')],
      [b.left + b.width + 2, b.top + 5, b.cx, b.cy],
    );
    assert.deepEqual(hit, [null, true]);
    assert.equal(await W(page, '.launcher').evaluate((l) => getComputedStyle(l).transitionDuration), '0s', 'no motion when reduced');
    assert.ok(!requests.some((u) => u.includes('/v1/parts/panel.')), 'the panel is not loaded up front');
    await W(page, '.launcher').hover();
    await until(() => requests.some((u) => /\/v1\/parts\/panel\.[0-9a-f]{10}\.js$/.test(u)), 5000, 'the panel prefetch on hover');
    assert.equal(await W(page, '.panel').count(), 0, 'prefetched, not opened');
    await ctx.close();
    const moving = await open('look.html', { reducedMotion: 'no-preference' });
    await init(moving.page, {});
    assert.notEqual(await W(moving.page, '.launcher').evaluate((l) => getComputedStyle(l).transitionDuration), '0s');
    await moving.ctx.close();
  });
});

describe('isolation', () => {
  test('the strict-CSP page of decisions §10 works: nonce parts, no style attributes, screenshot and send', async () => {
    const { page, ctx, logs } = await open('csp.html');
    await page.waitForFunction(() => window.Svc && Svc.isInitialized());
    // The policy is really in force: an inline script without the nonce is refused.
    await page.evaluate(() => {
      const s = document.createElement('script');
      s.textContent = 'window.inlineRan = true';
      document.body.appendChild(s);
    });
    await until(() => page.evaluate(() => window.violations.length > 0), 3000, 'the sanity violation');
    assert.equal(await page.evaluate(() => window.inlineRan), undefined);
    await page.evaluate(() => (window.violations = []));

    await W(page, '.launcher').click();
    await W(page, '.panel').waitFor();
    await W(page, 'button[aria-label="Take a screenshot of the page"]').click();
    await W(page, '.shot canvas').waitFor({ timeout: 20000 });
    await W(page, '.shot button', { hasText: 'Add screenshot' }).click();
    await until(async () => (await W(page, '.blocks li').count()) === 1, 20000, 'the screenshot block');
    await W(page, '#svc-msg').fill('from the strict-CSP page');
    await W(page, 'button.primary').click();
    await until(async () => /Sent/.test(await W(page, '.status').textContent()), 10000, 'sent');
    const report = await (async () => {
      const list = await api.get(`${P}/feedback?limit=1`);
      return api.get(`${P}/feedback/${list.items[0].id}`);
    })();
    assert.deepEqual(report.blocks.map((b) => b.type), ['text', 'screenshot'], 'the message first');

    const state = await page.evaluate((nonce) => {
      const root = document.querySelector('[data-svc-widget]').shadowRoot;
      const parts = [...document.querySelectorAll('script[src*="/v1/parts/"]')];
      return {
        violations: window.violations,
        parts: parts.map((s) => s.src.replace(/.*\/v1\/parts\//, '')),
        partNonces: parts.every((s) => s.nonce === nonce),
        shadowRoots: document.querySelectorAll('[data-svc-widget]').length,
        mode: root.mode,
        sheets: root.adoptedStyleSheets.length,
        styleElements: root.querySelectorAll('style').length,
        styleAttributes: root.querySelectorAll('[style]').length + document.querySelectorAll('[data-svc-widget][style]').length,
      };
    }, NONCE);
    assert.deepEqual(state.violations, []);
    assert.ok(state.parts.some((p) => p.startsWith('panel.')) && state.parts.some((p) => p.startsWith('screenshot.')), state.parts.join());
    assert.equal(state.partNonces, true, 'every part carries the page nonce');
    assert.equal(state.shadowRoots, 1);
    assert.equal(state.mode, 'open');
    assert.ok(state.sheets >= 2);
    assert.equal(state.styleElements, 0);
    assert.equal(state.styleAttributes, 0);
    // (the sanity check's own refusal aside)
    assert.deepEqual(logs.filter((l) => /Refused|Content Security Policy/.test(l.text) && !l.text.startsWith('Executing inline script')), []);
    await ctx.close();
  });

  test('hostile page CSS does not break it', async () => {
    const { page, ctx } = await open('hostile.html');
    await page.waitForFunction(() => window.Svc && Svc.isInitialized());
    const b = await launcherBox(page);
    assert.deepEqual([b.width, b.height, b.right, Math.round(b.cy)], [44, 44, 16, 350]);
    assert.equal(await page.evaluate(([x, y]) => document.elementFromPoint(x, y).hasAttribute('data-svc-widget'), [b.cx, b.cy]), true, 'on top of z-index 2147483647');
    await W(page, '.launcher').click();
    const panel = W(page, '.panel');
    await panel.waitFor();
    const look = await panel.evaluate((p) => {
      const r = p.getBoundingClientRect();
      const h2 = p.querySelector('h2');
      const cs = getComputedStyle(p);
      return {
        width: r.width,
        font: cs.fontSize,
        family: cs.fontFamily,
        transform: getComputedStyle(h2).textTransform,
        h2: getComputedStyle(h2).fontSize,
        send: getComputedStyle(p.querySelector('button.primary')).backgroundColor,
        top: document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2).hasAttribute('data-svc-widget'),
      };
    });
    assert.deepEqual(look, { width: 380, font: '14px', family: look.family, transform: 'none', h2: '16px', send: 'rgb(26, 86, 219)', top: true });
    assert.ok(!/Comic/.test(look.family));
    await W(page, '#svc-msg').fill('from the hostile page');
    await W(page, 'button.primary').click();
    await until(async () => /Sent/.test(await W(page, '.status').textContent()), 10000, 'sent');
    await ctx.close();
  });
});

describe('budgets', () => {
  test('every file within its gzip budget, measured on what the server sends', async () => {
    const loader = await (await fetch(`${svc.url}/v1/svc/${svc.projectKey}.js`)).text();
    const gz = (text) => gzipSync(Buffer.from(text), { level: 9 }).length;
    const files = [...new Set(loader.match(/[a-z]+\.[0-9a-f]{10}\.js/g))];
    const sizes = { loader: gz(loader) };
    for (const file of files) sizes[file.split('.')[0]] = gz(await (await fetch(`${svc.url}/v1/parts/${file}`)).text());
    const total = Object.values(sizes).reduce((a, b) => a + b, 0);
    const budgets = { loader: 8, panel: 20, pinpoint: 4, screenshot: 14, voice: 3, recorder: 2 };
    console.log('widget sizes as served (gzip):');
    for (const [name, size] of Object.entries(sizes)) console.log(`  ${name.padEnd(12)} ${(size / 1024).toFixed(2)} KB${budgets[name] ? ` (budget ${budgets[name]} KB)` : ''}`);
    console.log(`  ${'all'.padEnd(12)} ${(total / 1024).toFixed(2)} KB (budget 47 KB)`);
    assert.deepEqual(Object.keys(sizes).sort(), ['core', 'loader', 'mascots', 'panel', 'pinpoint', 'recorder', 'screenshot', 'selector', 'voice']);
    for (const [name, kb] of Object.entries(budgets)) assert.ok(sizes[name] <= kb * 1024, `${name}: ${sizes[name]} bytes > ${kb} KB`);
    assert.ok(total <= 47 * 1024, `all together: ${total}`);
  });
});
