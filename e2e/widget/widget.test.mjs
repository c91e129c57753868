// Browser tests of the widget core: Chromium loads test pages from a second origin, the widget
// talks to a real `svc serve`, and every check is made through the REST API.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { launchBrowser, rest, sleep, startPages, startSvc, until } from './harness.mjs';

let svc;
let pages;
let chrome;
let api;
let P; // `/api/v1/projects/<id>`

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

/** A fresh browser context (own local storage) and a page that records console messages. */
async function open(path, { context } = {}) {
  const ctx = context || (await chrome.browser.newContext());
  const page = await ctx.newPage();
  const logs = [];
  page.on('console', (m) => logs.push({ type: m.type(), text: m.text() }));
  page.on('pageerror', (e) => logs.push({ type: 'pageerror', text: String(e) }));
  await page.goto(pages.url + '/' + path);
  return { page, ctx, logs };
}

const ready = (page) => page.waitForFunction(() => window.Svc && window.Svc.isInitialized && window.Svc.isInitialized());
const getReport = (id, base = P, client = api) => client.get(`${base}/feedback/${id}`);
const texts = (report) => report.blocks.filter((b) => b.type === 'text').map((b) => b.text);

describe('loading', () => {
  test('the per-project loader initializes itself with the baked-in project', async () => {
    const { page, ctx } = await open('project.html');
    await ready(page);
    const state = await page.evaluate(() => ({
      channels: Svc.getChannels().map((c) => c.key),
      channel: Svc.getChannel(),
      host: !!document.querySelector('[data-svc-widget]')?.shadowRoot,
      launcher: !!document.querySelector('[data-svc-widget]')?.shadowRoot.querySelector('.launcher'),
    }));
    assert.deepEqual(state.channels, ['bug', 'idea', 'question']);
    assert.equal(state.channel.key, 'bug');
    assert.ok(state.host && state.launcher, 'the launcher is drawn in a shadow root');
    const { reportId } = await page.evaluate(() => Svc.report({ message: 'from the per-project loader' }));
    const report = await getReport(reportId);
    assert.deepEqual(texts(report), ['from the per-project loader']);
    assert.equal(report.channelKey, 'bug');
    assert.equal(report.context.channelSource, 'default');
    await ctx.close();
  });

  test('the shared bundle waits for Svc.init and loads the project itself', async () => {
    const { page, ctx } = await open('shared.html');
    assert.equal(await page.evaluate(() => typeof Svc.init), 'function');
    assert.equal(await page.evaluate(() => Svc.isInitialized()), false);
    await page.evaluate((key) => Svc.init({ projectKey: key }), svc.projectKey);
    await page.waitForFunction(() => Svc.getChannels().length === 3);
    const { reportId } = await page.evaluate(() => Svc.report({ message: 'from the shared bundle' }));
    const report = await getReport(reportId);
    assert.equal(report.channelKey, 'bug');
    assert.equal(report.context.url, pages.url + '/shared.html');
    await ctx.close();
  });

  test('the shared bundle with data-project-key initializes itself from the tag', async () => {
    const { page, ctx } = await open('auto.html');
    await ready(page);
    const { reportId } = await page.evaluate(() => Svc.report({ message: 'artifact review' }));
    const report = await getReport(reportId);
    assert.equal(report.context.artifactId, 'design-v7');
    assert.deepEqual(report.context.artifact, { id: 'design-v7' });
    const info = await page.evaluate(() => Svc.selectorFor(document.querySelector('[data-hook]')));
    assert.equal(info.css, '[data-hook="title"]', 'data-testid-attrs is honoured');
    // The draft thread is kept under the artifact id.
    await page.evaluate(() => Svc.attachFile({ name: 'a.txt', content: 'x' }));
    const keys = await page.evaluate(() => Object.keys(localStorage));
    assert.ok(keys.some((k) => k.endsWith(':draft:design-v7')), keys.join(', '));
    await ctx.close();
  });

  test('an unknown key logs once and does nothing', async () => {
    const { page, ctx, logs } = await open('unknown.html');
    await sleep(300);
    const messages = logs.filter((l) => l.text.includes('[Svc] unknown project key: pr_000000000000000000000000'));
    assert.equal(messages.length, 1, JSON.stringify(logs));
    assert.equal(await page.evaluate(() => typeof window.Svc), 'undefined');
    await ctx.close();
  });

  test('calls made through an early stub are replayed', async () => {
    const { page, ctx } = await open('stub.html');
    await ready(page);
    const { reportId } = await page.evaluate(() => Svc.report({ message: 'after the stub' }));
    const report = await getReport(reportId);
    assert.equal(report.context.userId, 'stub-user');
    assert.deepEqual(report.context.custom, { plan: 'early' });
    await ctx.close();
  });
});

describe('methods', () => {
  test('every method but init and destroy throws before init', async () => {
    const { page, ctx } = await open('shared.html');
    const result = await page.evaluate(() => {
      const calls = {
        report: () => Svc.report({ message: 'x' }),
        attachFile: () => Svc.attachFile(new Blob(['x'])),
        alpha: () => Svc.alpha('beta'),
        show: () => Svc.show(),
        hide: () => Svc.hide(),
        openForm: () => Svc.openForm(),
        setAttribute: () => Svc.setAttribute('a', 1),
        setAttributes: () => Svc.setAttributes({ a: 1 }),
        setChannel: () => Svc.setChannel('bug'),
        clearChannel: () => Svc.clearChannel(),
        getChannel: () => Svc.getChannel(),
        getChannels: () => Svc.getChannels(),
        destroy: () => Svc.destroy(),
      };
      const out = {};
      for (const [name, call] of Object.entries(calls)) {
        try {
          call();
          out[name] = 'returned';
        } catch (e) {
          out[name] = 'threw: ' + e.message;
        }
      }
      return out;
    });
    for (const [name, outcome] of Object.entries(result)) {
      if (name === 'destroy') assert.equal(outcome, 'returned', 'destroy is a no-op before init');
      else assert.match(outcome, /^threw: \[Svc\] .*Svc\.init/, `${name}: ${outcome}`);
    }
    await ctx.close();
  });

  test('wrong options warn and fall back; init is idempotent', async () => {
    const { page, ctx, logs } = await open('shared.html');
    await page.evaluate((key) => {
      Svc.init({ projectKey: key, size: 100, mascot: 'dragon', anchor: 'nowhere', captureConsoleErrors: 'yes', extra: 5, onChannelChange: 'no' });
    }, svc.projectKey);
    const warnings = () => logs.filter((l) => l.type === 'warning').map((l) => l.text).join('\n');
    // What the loader uses at once warns at once; what only the lazy parts use (extra) warns
    // when the core part starts, a moment later.
    for (const option of ['size', 'mascot', 'anchor', 'captureConsoleErrors', 'onChannelChange']) {
      assert.ok(warnings().includes(option), `warned about ${option}: ${warnings()}`);
    }
    await until(() => warnings().includes('extra'), 5000, 'the warning about extra');
    // The clamped size reaches the launcher.
    const width = await page.evaluate(() => document.querySelector('[data-svc-widget]').shadowRoot.querySelector('.launcher').getBoundingClientRect().height);
    assert.equal(width, 64);
    // A second init tears down and rebuilds: one host element, the new options.
    await page.evaluate((key) => Svc.init({ projectKey: key, userId: 'second-init', triggerVariant: 'none' }), svc.projectKey);
    assert.equal(await page.evaluate(() => document.querySelectorAll('[data-svc-widget]').length), 1);
    assert.equal(await page.evaluate(() => !!document.querySelector('[data-svc-widget]').shadowRoot.querySelector('.launcher')), false);
    const { reportId } = await page.evaluate(() => Svc.report({ message: 'after re-init' }));
    assert.equal((await getReport(reportId)).context.userId, 'second-init');
    // A missing projectKey never breaks the page.
    await page.evaluate(() => Svc.init({}));
    assert.equal(await page.evaluate(() => Svc.isInitialized()), false);
    await ctx.close();
  });

  test('report uploads files first and rejects on a failed upload', async () => {
    const { page, ctx } = await open('project.html');
    await ready(page);
    const { reportId } = await page.evaluate(() =>
      Svc.report({
        message: 'with files',
        extra: { order: 42 },
        files: [new File(['hello'], 'hello.txt', { type: 'text/plain' }), { name: 'data.json', content: '{"a":1}', mime: 'application/json', description: 'the data' }],
      }),
    );
    const report = await getReport(reportId);
    assert.deepEqual(report.blocks.map((b) => b.type), ['text', 'file', 'file']);
    assert.equal(report.blocks[1].name, 'hello.txt');
    assert.equal(report.blocks[1].bytes, 5);
    assert.equal(report.blocks[2].name, 'data.json');
    assert.equal(report.blocks[2].description, 'the data');
    assert.equal(report.context.extra.order, 42);

    await page.route('**/ingest/blob', (route) => route.abort());
    const failed = await page.evaluate(() =>
      Svc.report({ message: 'never sent', files: [new Blob(['x'])] }).then(
        () => 'resolved',
        (e) => 'rejected: ' + e.code,
      ),
    );
    assert.equal(failed, 'rejected: network_error');
    const all = await api.get(`${P}/feedback?limit=100`);
    assert.ok(!all.items.some((r) => r.title === 'never sent'), 'no report without its files');
    await ctx.close();
  });

  test('attachFile takes File, Blob and {name, content}, adds to the draft thread, rejects on failure', async () => {
    const { page, ctx } = await open('project.html');
    await ready(page);
    const blocks = await page.evaluate(async () => [
      await Svc.attachFile(new File(['one'], 'one.txt', { type: 'text/plain' })),
      await Svc.attachFile(new Blob(['two'], { type: 'text/plain' })),
      await Svc.attachFile({ name: 'three.csv', content: 'a,b', mime: 'text/csv', description: 'a table' }),
      await Svc.attachFile({ name: 'four.bin', content: new Blob([new Uint8Array([1, 2, 3])]), mime: 'application/octet-stream' }),
    ]);
    assert.deepEqual(blocks.map((b) => b.name), ['one.txt', 'file', 'three.csv', 'four.bin']);
    assert.equal(blocks[2].description, 'a table');
    assert.ok(blocks.every((b) => b.type === 'file' && /^[0-9a-f]{24}$/.test(b.blobId)));

    // Too large for the server: rejected (checked against the limits from /ingest/config).
    const tooLarge = await page.evaluate(() => Svc.attachFile(new Blob([new Uint8Array(5 * 1024 * 1024 + 1)])).then(() => 'resolved', (e) => 'rejected: ' + e.code));
    assert.equal(tooLarge, 'rejected: block_too_large');
    await page.route('**/ingest/blob', (route) => route.fulfill({ status: 500, contentType: 'application/json', body: '{"error":"internal"}' }));
    const failed = await page.evaluate(() => Svc.attachFile(new Blob(['x'])).then(() => 'resolved', (e) => 'rejected: ' + e.code));
    assert.equal(failed, 'rejected: internal');
    await page.unroute('**/ingest/blob');

    // openForm loads the panel part, which shows the draft and sends it with the text.
    await page.evaluate(() => Svc.openForm());
    const panel = page.locator('[data-svc-widget] >> .panel');
    await panel.waitFor();
    assert.equal(await panel.locator('.blocks li').count(), 4);
    await panel.locator('textarea#svc-msg').fill('The draft thread, sent from the panel');
    await panel.locator('button.primary').click();
    await until(async () => (await panel.locator('.status').textContent()).includes('Thank you'), 10000, 'the panel to send');
    const list = await api.get(`${P}/feedback?limit=5`);
    const sent = await getReport(list.items[0].id);
    assert.deepEqual(sent.blocks.map((b) => b.type), ['text', 'file', 'file', 'file', 'file'], 'the message first');
    assert.equal(sent.blocks[0].text, 'The draft thread, sent from the panel');
    assert.equal(await panel.locator('.blocks li').count(), 0, 'the draft is cleared once sent');
    const scripts = await page.evaluate(() => [...document.scripts].map((s) => s.src).filter((s) => s.includes('/v1/parts/')));
    assert.ok(scripts.some((s) => /\/v1\/parts\/panel\.[0-9a-f]{10}\.js$/.test(s)), scripts.join(', '));
    await ctx.close();
  });

  test('show, hide, destroy and re-init with another project', async () => {
    const { page, ctx } = await open('project.html');
    await ready(page);
    const hidden = () => page.evaluate(() => document.querySelector('[data-svc-widget]').hidden);
    await page.evaluate(() => Svc.hide());
    assert.equal(await hidden(), true);
    await page.evaluate(() => Svc.show());
    assert.equal(await hidden(), false);
    await page.evaluate(() => Svc.destroy());
    assert.equal(await page.evaluate(() => document.querySelectorAll('[data-svc-widget]').length), 0);
    assert.equal(await page.evaluate(() => { try { Svc.getChannel(); return 'no'; } catch { return 'threw'; } }), 'threw');
    await page.evaluate(() => Svc.destroy()); // a no-op now

    const second = svc.createProject('Second for re-init');
    await page.evaluate((key) => Svc.init({ projectKey: key }), second.projectKey);
    const { reportId } = await page.evaluate(() => Svc.report({ message: 'to the second project' }));
    const secondApi = rest(svc.url, second.setupToken);
    const report = await getReport(reportId, `/api/v1/projects/${second.projectId}`, secondApi);
    assert.deepEqual(texts(report), ['to the second project']);
    await ctx.close();
  });

  test('alpha marks enabled flags on later reports', async () => {
    await api.put(`${P}/flags/beta-ui`, { enabled: true });
    await api.put(`${P}/flags/off-flag`, { enabled: false });
    const { page, ctx } = await open('project.html');
    await ready(page);
    const result = await page.evaluate(async () => [await Svc.alpha('beta-ui'), await Svc.alpha('off-flag'), await Svc.alpha('unknown-flag')]);
    assert.deepEqual(result, [true, false, false]);
    const { reportId } = await page.evaluate(() => Svc.report({ message: 'with flags' }));
    assert.deepEqual((await getReport(reportId)).context.flags, ['beta-ui']);
    await ctx.close();
  });
});

describe('context', () => {
  test('the context fields and console errors arrive', async () => {
    const { page, ctx } = await open('shared.html');
    await page.setViewportSize({ width: 1100, height: 700 });
    await page.evaluate(() => {
      // Logged before init: captured from the moment the script runs.
      console.error('early error', { code: 7 });
    });
    await page.evaluate((key) => {
      Svc.init({
        projectKey: key,
        userId: 'user-42',
        extra: { app: 'shop', build: 7 },
        attributes: { plan: 'pro' },
        reporter: { token: 'not-a-jwt', profile: { email: 'ada@example.com', name: 'Ada' } },
      });
    }, svc.projectKey);
    await page.evaluate(() => {
      setTimeout(() => {
        throw new Error('uncaught boom');
      });
      Promise.reject(new Error('rejected boom'));
      console.error('long ' + 'x'.repeat(3000));
    });
    await sleep(200);
    const identity = page.waitForRequest((r) => r.url().endsWith('/ingest/report'));
    await page.evaluate(() => Svc.setAttributes({ seats: 3 }));
    const { reportId } = await page.evaluate(() => Svc.report({ message: 'context check', extra: { step: 'pay' } }));
    assert.equal((await identity).headers()['x-svc-identity'], 'not-a-jwt');
    const c = (await getReport(reportId)).context;
    assert.equal(c.url, pages.url + '/shared.html');
    assert.equal(c.pathname, '/shared.html');
    assert.equal(c.host, new URL(pages.url).host);
    assert.match(c.userAgent, /Chrome/);
    assert.equal(typeof c.language, 'string');
    assert.deepEqual(c.viewport, { width: 1100, height: 700 });
    assert.equal(c.device, 'desktop');
    assert.ok(!Number.isNaN(Date.parse(c.timestamp)));
    assert.equal(c.userId, 'user-42');
    assert.deepEqual(c.extra, { app: 'shop', build: 7, step: 'pay' });
    assert.deepEqual(c.custom, { plan: 'pro', seats: 3 });
    assert.deepEqual(c.reporter, { email: 'ada@example.com', name: 'Ada' });
    assert.equal(c.channelSource, 'default');
    const errors = c.consoleErrors;
    assert.ok(errors.some((e) => e.startsWith('early error {"code":7}')), JSON.stringify(errors));
    assert.ok(errors.some((e) => e.includes('uncaught boom')), JSON.stringify(errors));
    assert.ok(errors.some((e) => e.includes('rejected boom')), JSON.stringify(errors));
    const long = errors.find((e) => e.startsWith('long '));
    assert.equal(long.length, 2000);

    // Only the last 10 travel.
    await page.evaluate(() => {
      for (let i = 0; i < 15; i++) console.error('numbered ' + i);
    });
    const second = await page.evaluate(() => Svc.report({ message: 'ten errors' }));
    const last = (await getReport(second.reportId)).context.consoleErrors;
    assert.equal(last.length, 10);
    assert.equal(last[0], 'numbered 5');
    assert.equal(last[9], 'numbered 14');
    await ctx.close();
  });

  test('failed requests travel in context.network, redacted; secrets in the URL and console errors are masked', async () => {
    const { page, ctx } = await open('shared.html?token=s3cr3t&tab=2');
    await page.evaluate((key) => Svc.init({ projectKey: key }), svc.projectKey);
    await page.evaluate(async () => {
      await fetch('/status/503?user=ada@example.com&page=2', { method: 'PUT' });
      await fetch('/status/200');
      await fetch('http://127.0.0.1:9/unreachable').catch(() => undefined);
      await new Promise((done) => {
        const x = new XMLHttpRequest();
        x.open('GET', '/status/404?q=shoes');
        x.addEventListener('loadend', done);
        x.send();
      });
      console.error('checkout: Bearer abc.def.ghi-123 refused for card 4111 1111 1111 1111');
    });
    // A refused report of the widget's own is not the page's failure.
    await page.route('**/ingest/report', (route) => route.fulfill({ status: 400, contentType: 'application/json', body: '{"error":"blocks_invalid"}' }), { times: 1 });
    await page.evaluate(() => Svc.report({ message: 'refused' }).catch(() => undefined));
    const { reportId } = await page.evaluate(() => Svc.report({ message: 'failed requests' }));
    const c = (await getReport(reportId)).context;
    assert.equal(c.url, pages.url + '/shared.html?token=[redacted]&tab=2');
    const page_ = pages.url;
    assert.deepEqual(
      c.network.map(({ method, url, status }) => [method, url, status]),
      [
        ['PUT', page_ + '/status/503?user=[redacted]&page=[redacted]', 503],
        ['GET', 'http://127.0.0.1:9/unreachable', 0],
        ['GET', page_ + '/status/404?q=[redacted]', 404],
      ],
    );
    for (const entry of c.network) {
      assert.deepEqual(Object.keys(entry).sort(), ['durationMs', 'method', 'status', 'time', 'url']);
      assert.ok(entry.durationMs >= 0 && !Number.isNaN(Date.parse(entry.time)), JSON.stringify(entry));
    }
    assert.ok(c.consoleErrors.includes('checkout: Bearer [redacted] refused for card [redacted]'), JSON.stringify(c.consoleErrors));
    await ctx.close();
  });

  test('captureNetworkErrors: false sends no failed requests', async () => {
    const { page, ctx } = await open('shared.html');
    await page.evaluate((key) => Svc.init({ projectKey: key, captureNetworkErrors: false }), svc.projectKey);
    await page.evaluate(() => fetch('/status/500'));
    const { reportId } = await page.evaluate(() => Svc.report({ message: 'no requests' }));
    assert.equal((await getReport(reportId)).context.network, undefined);
    await ctx.close();
  });

  test('captureConsoleErrors: false sends none', async () => {
    const { page, ctx } = await open('shared.html');
    await page.evaluate((key) => Svc.init({ projectKey: key, captureConsoleErrors: false }), svc.projectKey);
    await page.evaluate(() => console.error('not sent'));
    const { reportId } = await page.evaluate(() => Svc.report({ message: 'no errors' }));
    assert.equal((await getReport(reportId)).context.consoleErrors, undefined);
    await ctx.close();
  });

  test('an invalid artifact is refused with a warning', async () => {
    const { page, ctx, logs } = await open('shared.html');
    await page.evaluate((key) => Svc.init({ projectKey: key, mode: 'artifact-review', artifact: { id: 'x'.repeat(201) } }), svc.projectKey);
    await until(() => logs.some((l) => l.type === 'warning' && l.text.includes('artifact')), 5000, 'the warning about the artifact');
    const { reportId } = await page.evaluate(() => Svc.report({ message: 'no artifact' }));
    assert.equal((await getReport(reportId)).context.artifactId, undefined);
    await page.evaluate((key) => Svc.init({ projectKey: key, mode: 'artifact-review', artifact: { id: 'ok-1', title: 'Mock', url: 'https://example.com/mock' } }), svc.projectKey);
    const second = await page.evaluate(() => Svc.report({ message: 'with artifact' }));
    const c = (await getReport(second.reportId)).context;
    assert.equal(c.artifactId, 'ok-1');
    assert.deepEqual(c.artifact, { id: 'ok-1', title: 'Mock', url: 'https://example.com/mock' });
    await ctx.close();
  });
});

describe('routing', () => {
  test('the channel the rules say, with onChannelChange on every change', async () => {
    await api.post(`${P}/channels`, {
      key: 'checkout', name: 'Checkout', color: '#12a594', mascot: 'otter',
      matchers: [{ conditions: [{ field: 'path', op: 'prefix', value: '/checkout' }], weight: 5, note: 'checkout pages' }],
    });
    await api.post(`${P}/channels`, {
      key: 'vip', name: 'VIP', color: '#aa00ff', mascot: 'cat',
      matchers: [{ conditions: [{ field: 'attr.plan', op: 'eq', value: 'vip' }, { field: 'userId', op: 'exists' }], weight: 10, note: 'vip customers' }],
    });
    const { page, ctx } = await open('checkout/index.html');
    await page.evaluate((key) => {
      window.changes = [];
      Svc.init({ projectKey: key, userId: 'u-1', onChannelChange: (next, prev) => window.changes.push([next, prev]) });
    }, svc.projectKey);
    await page.waitForFunction(() => Svc.getChannel()?.key === 'checkout');
    const send = async (message) => getReport((await page.evaluate((m) => Svc.report({ message: m }), message)).reportId);
    let r = await send('on the checkout page');
    assert.equal(r.channelKey, 'checkout');
    assert.equal(r.context.channelSource, 'rules');

    await page.evaluate(() => Svc.setAttribute('plan', 'vip'));
    assert.equal(await page.evaluate(() => Svc.getChannel().key), 'vip');
    await page.evaluate(() => Svc.setChannel('idea'));
    r = await send('forced to ideas');
    assert.equal(r.channelKey, 'idea');
    assert.equal(r.context.channelSource, 'setChannel');
    await page.evaluate(() => Svc.setChannel('question', { weight: 'suggest' }));
    assert.equal(await page.evaluate(() => Svc.getChannel().key), 'vip', 'suggest only wins when nothing scores');
    await page.evaluate(() => Svc.clearChannel());
    await page.evaluate(() => Svc.setAttribute('plan', 'free'));
    assert.equal(await page.evaluate(() => Svc.getChannel().key), 'checkout');
    await sleep(50);
    const changes = await page.evaluate(() => window.changes.map(([n, p]) => [n && n.key, p && p.key]));
    assert.deepEqual(changes, [
      ['checkout', null],
      ['vip', 'checkout'],
      ['idea', 'vip'],
      ['vip', 'idea'],
      ['checkout', 'vip'],
    ]);
    await ctx.close();
  });

  test('hints from the REST API steer the widget', async () => {
    await api.post(`${P}/hints`, { channelKey: 'question', weight: 'max', userId: 'hinted-user' });
    const { page, ctx } = await open('shared.html');
    await page.evaluate((key) => Svc.init({ projectKey: key, userId: 'hinted-user' }), svc.projectKey);
    await page.waitForFunction(() => Svc.getChannel()?.key === 'question');
    const { reportId } = await page.evaluate(() => Svc.report({ message: 'hinted' }));
    const r = await getReport(reportId);
    assert.equal(r.channelKey, 'question');
    assert.equal(r.context.channelSource, 'hint');
    // Another user is not steered.
    await page.evaluate((key) => Svc.init({ projectKey: key, userId: 'someone-else' }), svc.projectKey);
    await page.waitForFunction(() => Svc.getChannels().length > 0);
    await sleep(300);
    assert.equal(await page.evaluate(() => Svc.getChannel().key), 'bug');
    await ctx.close();
  });

  test('onChannelChange fires with null when no channel resolves', async () => {
    const other = svc.createProject('Routing to null');
    const otherApi = rest(svc.url, other.setupToken);
    const base = `/api/v1/projects/${other.projectId}`;
    await otherApi.post(`${base}/channels`, {
      key: 'special', name: 'Special', color: '#112233', mascot: 'owl',
      matchers: [{ conditions: [{ field: 'attr.kind', op: 'eq', value: 'special' }], weight: 1, note: '' }],
    });
    await otherApi.patch(`${base}/channels/bug`, { archived: true });
    const { page, ctx } = await open('shared.html');
    await page.evaluate((key) => {
      window.changes = [];
      Svc.init({ projectKey: key, attributes: { kind: 'special' }, onChannelChange: (n, p) => window.changes.push([n && n.key, p && p.key]) });
    }, other.projectKey);
    await page.waitForFunction(() => Svc.getChannel()?.key === 'special');
    await page.evaluate(() => Svc.setAttribute('kind', 'plain'));
    assert.equal(await page.evaluate(() => Svc.getChannel()), null);
    await sleep(50);
    assert.deepEqual(await page.evaluate(() => window.changes), [
      ['special', null],
      [null, 'special'],
    ]);
    await ctx.close();
  });
});

describe('beforeReport', () => {
  test('its result lands in the report, once per report, fail-open', async () => {
    const { page, ctx } = await open('project.html');
    await ready(page);
    await page.evaluate((key) => {
      window.hookCalls = 0;
      Svc.init({
        projectKey: key,
        extra: { base: 1, shared: 'init' },
        beforeReport: async () => {
          window.hookCalls++;
          const target = await Svc.selectorFor(document.querySelector('[data-testid="pay"]'));
          return {
            extra: { shared: 'hook', hook: true },
            messages: ['hook message one', 'hook message two'],
            blocks: [{ type: 'pinpoint', selector: target.css, target, comment: 'this button' }],
            channelKey: 'idea',
          };
        },
      });
    }, svc.projectKey);
    const { reportId } = await page.evaluate(() => Svc.report({ message: 'main message' }));
    const r = await getReport(reportId);
    assert.deepEqual(texts(r), ['main message', 'hook message one', 'hook message two']);
    assert.equal(r.blocks[3].type, 'pinpoint');
    assert.equal(r.blocks[3].target.css, '[data-testid="pay"]');
    assert.deepEqual(r.blocks[3].target.testIds, ['pay']);
    assert.equal(r.blocks[3].target.xpath, '/html/body/main/form/button[1]');
    assert.equal(r.channelKey, 'idea');
    assert.equal(r.context.channelSource, 'beforeReport');
    assert.deepEqual(r.context.extra, { base: 1, shared: 'hook', hook: true });
    assert.equal(await page.evaluate(() => window.hookCalls), 1);

    await page.evaluate((key) => Svc.init({ projectKey: key, beforeReport: () => { throw new Error('hook broke'); } }), svc.projectKey);
    const second = await page.evaluate(() => Svc.report({ message: 'hook threw' }));
    const r2 = await getReport(second.reportId);
    assert.deepEqual(texts(r2), ['hook threw']);
    assert.equal(r2.channelKey, 'bug');
    await ctx.close();
  });
});

describe('delivery', () => {
  test('a report made offline is delivered exactly once after a reload', async () => {
    const ctx = await chrome.browser.newContext();
    const { page } = await open('project.html', { context: ctx });
    await ready(page);
    await page.evaluate(() => {
      window.hookCalls = 0;
    });
    // The sending engine is loaded while online.
    await page.evaluate(() => Svc.report({ message: 'warm up' }));
    const message = 'made offline ' + Date.now();
    await ctx.setOffline(true);
    const outcome = await page.evaluate((m) => Svc.report({ message: m, extra: { offline: true } }).then(() => 'resolved', (e) => ({ code: e.code, queued: e.queued })), message);
    assert.deepEqual(outcome, { code: 'offline', queued: true });
    const history = await page.evaluate(() => Svc.getHistory());
    assert.equal(history[0].status, 'queued');
    assert.equal(history[0].title, message);

    // Back online, but the service is still out of reach (the widget's own flush on `online`
    // fails); then the page reloads and the queue is flushed. The first delivery's answer is lost
    // on the way back, so the widget retries with the same Idempotency-Key.
    const keys = [];
    let reachable = false;
    let dropped = false;
    await page.route('**/ingest/report', async (route) => {
      if (!reachable) return route.abort();
      keys.push(route.request().headers()['idempotency-key']);
      const response = await route.fetch();
      if (!dropped) {
        dropped = true;
        await route.abort();
      } else await route.fulfill({ response });
    });
    await ctx.setOffline(false);
    await sleep(500);
    assert.equal((await page.evaluate(() => Svc.getHistory()))[0].status, 'queued');
    reachable = true;
    await page.reload();
    const count = async () => (await api.get(`${P}/feedback?limit=100`)).items.filter((r) => r.title === message).length;
    await until(async () => (await page.evaluate(() => Svc.getHistory()[0]?.status)) === 'sent', 30000, 'the queued report to be sent');
    assert.equal(await count(), 1);
    assert.ok(keys.length >= 2, `retried: ${keys.length}`);
    assert.equal(new Set(keys).size, 1, 'one Idempotency-Key for every attempt');
    await page.reload();
    await ready(page);
    await sleep(1500);
    assert.equal(await count(), 1, 'delivered exactly once');
    const sent = (await api.get(`${P}/feedback?limit=100`)).items.find((r) => r.title === message);
    const full = await getReport(sent.id);
    assert.equal(full.context.extra.offline, true);
    const historyAfter = await page.evaluate(() => Svc.getHistory());
    assert.equal(historyAfter.filter((h) => h.status === 'queued').length, 0);
    assert.equal(historyAfter.find((h) => h.title === message).reportId, sent.id);
    await ctx.close();
  });
});

describe('selectors', () => {
  test('every element of the test page resolves back to itself', async () => {
    const { page, ctx } = await open('project.html');
    await ready(page);
    await page.waitForFunction(() => document.getElementById('inner-frame').contentDocument?.querySelector('frame-host')?.shadowRoot);
    const result = await page.evaluate(async () => {
      const elements = [];
      const walk = (root) => {
        for (const el of root.querySelectorAll('*')) {
          if (el.hasAttribute('data-svc-widget')) continue;
          elements.push(el);
          if (el.shadowRoot) walk(el.shadowRoot);
          if (el.tagName === 'IFRAME' && el.contentDocument) walk(el.contentDocument);
        }
      };
      walk(document);
      const resolve = (info) => {
        let root = document;
        for (const f of info.frames || []) root = root.querySelector(f).contentDocument;
        for (const h of info.shadowHosts || []) root = root.querySelector(h).shadowRoot;
        return root.querySelectorAll(info.css)[info.matchIndex ?? 0];
      };
      const hashLike = ['sc-bdVaJa', 'css-1x2y3z4', 'Nav_link__3xZ9a', ':r1:', 'Title_h1__a8Kq2', 'x9Y2z', '3f2a9c1e', 'ember123', 'ember456', 'sc-AxjAm', 'styles_panel__1bXy2', 'emotion-0', 'css-abc123-Label'];
      const failures = [];
      let ambiguous = 0;
      let inShadow = 0;
      let inFrame = 0;
      for (const el of elements) {
        const info = await Svc.selectorFor(el);
        if (info.matchIndex !== undefined) ambiguous++;
        if (info.shadowHosts) inShadow++;
        if (info.frames) inFrame++;
        let found = null;
        try {
          found = resolve(info);
        } catch (e) {
          found = e;
        }
        const all = [info.css, ...(info.shadowHosts || []), ...(info.frames || [])].join(' | ');
        if (found !== el) failures.push(`${el.tagName}: ${all}`);
        for (const bad of hashLike) if (all.includes(bad)) failures.push(`${el.tagName} uses ${bad}: ${all}`);
      }
      const pick = (css) => Svc.selectorFor(document.querySelector(css));
      return {
        count: elements.length, ambiguous, inShadow, inFrame, failures,
        structured: (await pick('[data-meta]')).css,
        qa: (await pick('[data-qa-data]')).css,
        hook: (await pick('[data-hook]')).css,
      };
    });
    assert.deepEqual(result.failures, []);
    assert.ok(result.count > 100, `elements checked: ${result.count}`);
    assert.ok(result.ambiguous > 0, 'some selectors need matchIndex');
    assert.ok(result.inShadow >= 8, `shadow elements: ${result.inShadow}`);
    assert.ok(result.inFrame >= 8, `frame elements: ${result.inFrame}`);
    assert.equal(result.structured, '[data-meta*="id=back-button"]', 'data-structured-attrs');
    assert.equal(result.qa, '[data-qa-data*="name=cancel"]');
    assert.equal(result.hook, '[data-hook="hint"]', 'data-testid-attrs');
    await ctx.close();
  });
});
