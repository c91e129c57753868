// The widget scenario: a plain page that embeds the per-project loader
// (<script src="$SVC_URL/v1/svc/<key>.js">), opened in Chromium with the CPU throttled 4x through
// CDP (Emulation.setCPUThrottlingRate). Per run, in a fresh browser context (nothing cached):
//   - the longest main-thread task during page load, from a CDP trace (RunTask events on the
//     renderer's main thread, from navigation until one second after the launcher shows);
//   - the time from navigation start until the launcher is visible (a requestAnimationFrame probe
//     injected before any page script);
//   - how many tasks the page's own PerformanceObserver('longtask') saw (over 50 ms);
//   - the steps recorder, once it runs: 40 clicks as a person makes them (CDP input), traced: the
//     recorder's script time per click (its click handler: the median, and the mean, which carries
//     the first calls' compilation and the throttle's pauses that fall inside a call), and its longest
//     call (the deferred selector work included); beside it the same figures for the page's own
//     click listener that does next to nothing, the floor any listener pays in this trace.
// Prints one JSON line per run, or {"skipped": reason}. Env: SVC_URL, SVC_PROJECT_KEY,
// SVC_BENCH_RUNS, SVC_BENCH_CHROMIUM.
import { chromiumOrSkip } from './playwright.mjs';
import http from 'node:http';

const svcUrl = process.env.SVC_URL;
const projectKey = process.env.SVC_PROJECT_KEY;
const runs = Number(process.env.SVC_BENCH_RUNS || 3);
const executablePath = process.env.SVC_BENCH_CHROMIUM || '/usr/bin/chromium';

const chromium = await chromiumOrSkip();

// A small shop page, like the apps the widget is embedded in.
const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Shop: cart</title>
<style>body{font:16px system-ui;margin:0}header,main{padding:16px 24px}li{margin:8px 0}</style></head>
<body><header><a href="/">Shop</a> · <a href="/orders">Orders</a></header>
<main><h1>Your cart</h1><ul>${Array.from({ length: 20 }, (_, i) => `<li>Item ${i + 1} <button>Remove</button></li>`).join('')}</ul>
<button id="checkout">Checkout</button></main>
<script src="/page.js"></script>
<script src="${svcUrl}/v1/svc/${projectKey}.js"></script>
</body></html>`;

// The page's own click listener, doing next to nothing: the same trace measures it beside the
// recorder, so what dispatch, tracing and the throttle cost any listener can be told apart.
const pageScript = `document.addEventListener('click', function (e) { if (e.isTrusted) window.clicks = (window.clicks || 0) + 1; }, { capture: true, passive: true });`;

const server = http.createServer((request, response) => {
  if (request.url === '/page.js') {
    response.writeHead(200, { 'content-type': 'text/javascript', 'cache-control': 'no-store' });
    response.end(pageScript);
    return;
  }
  response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
  response.end(page);
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const pageUrl = `http://127.0.0.1:${server.address().port}/cart`;

// Runs before any page script: watches for a visible launcher in an open shadow root.
const probe = () => {
  window.__svcLongTasks = [];
  try {
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) window.__svcLongTasks.push(entry.duration);
    }).observe({ type: 'longtask', buffered: true });
  } catch {}
  const visible = (element) => {
    const rect = element.getBoundingClientRect();
    const style = getComputedStyle(element);
    return rect.width > 0 && rect.height > 0 && style.visibility !== 'hidden' && style.display !== 'none' &&
      Number(style.opacity) > 0 && !element.classList.contains('off');
  };
  // The widget's host is a child of <html> or <body>: look there only, so the probe stays cheap.
  const launcherShown = () => {
    const hosts = [...document.documentElement.children, ...(document.body ? document.body.children : [])];
    for (const host of hosts) {
      const root = host.shadowRoot;
      if (!root) continue;
      const launcher = root.querySelector('[part~="launcher"], .launcher') || root.querySelector('button');
      if (launcher && visible(launcher)) return true;
    }
    return false;
  };
  // Reported through the console, so no tool script runs in the page while it loads.
  const tick = () => {
    if (launcherShown()) {
      console.debug(`__svc_launcher_visible ${performance.now()}`);
      return;
    }
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
};

// The script a trace event runs, if it names one.
const SCRIPT_EVENTS = new Set(['EvaluateScript', 'FunctionCall', 'v8.compile', 'v8.compileModule',
  'v8.evaluateModule', 'CompileScript', 'EventDispatch', 'TimerFire', 'FireAnimationFrame']);
const scriptUrl = (e) => (SCRIPT_EVENTS.has(e.name) && (e.args?.data?.url || e.args?.data?.scriptName)) || '';

const CLICKS = 40;

/**
 * The steps recorder's cost (CPU still throttled): waits until it runs (its own page load is among
 * the kept steps), clicks the cart's buttons, waits until every click's step has its element worked
 * out (the recorder does that when the page is idle), and reads the trace: script time of the
 * recorder part inside each click's dispatch, and the longest task running recorder script.
 */
async function measureRecorder(tab, cdp) {
  const kept = () =>
    tab.evaluate(() => {
      const key = Object.keys(sessionStorage).find((k) => k.endsWith(':steps'));
      return key ? JSON.parse(sessionStorage.getItem(key)) : [];
    });
  const started = Date.now();
  while (!(await kept()).some((s) => s.via === 'load')) {
    if (Date.now() - started > 15000) return { recorder_click_ms: null, recorder_longest_call_ms: null };
    await tab.waitForTimeout(50);
  }
  const events = [];
  const onData = ({ value }) => events.push(...value);
  cdp.on('Tracing.dataCollected', onData);
  const traced = new Promise((resolve) => cdp.once('Tracing.tracingComplete', resolve));
  await cdp.send('Tracing.start', { categories: 'devtools.timeline,__metadata', transferMode: 'ReportEvents' });
  const buttons = tab.locator('li button');
  for (let i = 0; i < CLICKS; i++) await buttons.nth(i % 20).click();
  while ((await kept()).filter((s) => s.kind === 'click' && s.target).length < CLICKS) await tab.waitForTimeout(50);
  await cdp.send('Tracing.end');
  await traced;
  cdp.off('Tracing.dataCollected', onData);
  const mainThreads = new Set(
    events.filter((e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain').map((e) => `${e.pid}:${e.tid}`),
  );
  const onMain = (e) => mainThreads.has(`${e.pid}:${e.tid}`);
  const recorderScript = (e) => onMain(e) && /\/v1\/parts\/recorder\./.test(scriptUrl(e));
  const inside = (outer, e) => e.pid === outer.pid && e.tid === outer.tid && e.ts >= outer.ts && e.ts < outer.ts + (outer.dur || 0);
  const clicks = events.filter((e) => onMain(e) && e.ph === 'X' && e.name === 'EventDispatch' && e.args?.data?.type === 'click');
  /** Durations (µs) of the calls of `script`'s functions inside a click's dispatch, in order. */
  const clickCalls = (script) =>
    events
      .filter((e) => e.ph === 'X' && e.name === 'FunctionCall' && script(e) && clicks.some((click) => inside(click, e)))
      .map((call) => call.dur || 0);
  const perCall = clickCalls(recorderScript);
  const pageCalls = clickCalls((e) => onMain(e) && /\/page\.js$/.test(scriptUrl(e)));
  const handlerUs = perCall.reduce((sum, us) => sum + us, 0);
  if (process.env.SVC_BENCH_WIDGET_DEBUG) {
    console.error('recorder click handler µs:', perCall.join(' '));
    console.error("page's own click listener µs:", pageCalls.join(' '));
  }
  const median = (values) => (values.length ? [...values].sort((a, b) => a - b)[values.length >> 1] / 1000 : null);
  // Every recorder call (click handlers, and the deferred selector work from its timer or idle
  // callback): the longest one is the longest stretch the recorder holds the main thread.
  const calls = events.filter((e) => e.ph === 'X' && recorderScript(e) && e.name !== 'EvaluateScript');
  const longestUs = calls.reduce((longest, call) => Math.max(longest, call.dur || 0), 0);
  return {
    recorder_click_median_ms: median(perCall),
    recorder_click_ms: Math.round((handlerUs / CLICKS / 1000) * 1000) / 1000,
    page_listener_median_ms: median(pageCalls),
    page_listener_ms: pageCalls.length ? Math.round(pageCalls.reduce((sum, us) => sum + us, 0) / pageCalls.length) / 1000 : null,
    recorder_longest_call_ms: Math.round(longestUs / 100) / 10,
  };
}

const browser = await chromium.launch({
  executablePath,
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
let failed = false;
try {
  for (let run = 0; run < runs; run++) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const tab = await context.newPage();
    await tab.addInitScript(probe);
    const cdp = await context.newCDPSession(tab);
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: 4 });
    const events = [];
    cdp.on('Tracing.dataCollected', ({ value }) => events.push(...value));
    const traced = new Promise((resolve) => cdp.once('Tracing.tracingComplete', resolve));
    await cdp.send('Tracing.start', {
      categories: 'devtools.timeline,disabled-by-default-devtools.timeline,__metadata',
      transferMode: 'ReportEvents',
    });
    let launcherAt = null;
    const shown = new Promise((resolve) => {
      tab.on('console', (message) => {
        const match = /^__svc_launcher_visible (\S+)$/.exec(message.text());
        if (match) resolve(Number(match[1]));
      });
    });
    await tab.goto(pageUrl, { waitUntil: 'load' });
    launcherAt = await Promise.race([shown, new Promise((resolve) => setTimeout(() => resolve(null), 15000))]);
    if (launcherAt === null) failed = true;
    // Whatever the loader does right after the launcher shows still counts.
    await tab.waitForTimeout(1000);
    const longTasks = await tab.evaluate(() => window.__svcLongTasks);
    await cdp.send('Tracing.end');
    await traced;

    // The renderer main thread(s) of this page's process, then its longest task.
    const mainThreads = new Set(
      events
        .filter((e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain')
        .map((e) => `${e.pid}:${e.tid}`),
    );
    // A task is the loader's when script of the Svc server (/v1/...) runs inside it.
    const onMain = (e) => mainThreads.has(`${e.pid}:${e.tid}`);
    const tasks = events.filter((e) => e.ph === 'X' && e.name === 'RunTask' && onMain(e));
    const scripts = events.filter((e) => onMain(e) && scriptUrl(e));
    let longest = 0;
    let longestAny = 0;
    for (const task of tasks) {
      const ms = (task.dur || 0) / 1000;
      longestAny = Math.max(longestAny, ms);
      const loader = scripts.some((e) => e.tid === task.tid && e.pid === task.pid && e.ts >= task.ts &&
        e.ts < task.ts + task.dur && scriptUrl(e).startsWith(svcUrl));
      if (loader) longest = Math.max(longest, ms);
    }
    if (process.env.SVC_BENCH_WIDGET_DEBUG) {
      const tasks = events
        .filter((e) => e.ph === 'X' && e.name === 'RunTask' && mainThreads.has(`${e.pid}:${e.tid}`))
        .sort((a, b) => b.dur - a.dur)
        .slice(0, 6);
      for (const task of tasks) {
        const inside = events.filter((e) => e.pid === task.pid && e.tid === task.tid && e.ts >= task.ts &&
          e.ts < task.ts + task.dur && e !== task && (e.dur || 0) > 2000);
        console.error(`task ${(task.dur / 1000).toFixed(1)} ms:`, inside.map((e) =>
          `${e.name}${e.args?.data?.url ? '(' + e.args.data.url.slice(-40) + ' ' + (e.args.data.functionName || '') + ')' : ''}${e.args?.data?.scriptName ? '[' + e.args.data.scriptName.slice(-40) + ']' : ''} ${((e.dur || 0) / 1000).toFixed(1)}`).join(', '));
      }
    }
    const recorder = await measureRecorder(tab, cdp);
    console.log(JSON.stringify({
      ...recorder,
      run: run + 1,
      longest_task_ms: Math.round(longest * 10) / 10,
      longest_any_task_ms: Math.round(longestAny * 10) / 10,
      launcher_visible_ms: launcherAt === null ? null : Math.round(launcherAt),
      long_tasks_over_50ms: longTasks.length,
    }));
    if (launcherAt === null) console.error(`run ${run + 1}: the launcher did not become visible within 15 s`);
    await context.close();
  }
} finally {
  await browser.close();
  server.close();
}
process.exit(failed ? 1 : 0);
