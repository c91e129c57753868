// Test harness for the widget's browser tests: a real `svc serve` on a temporary data folder, the
// test pages on a second origin (a tiny static server), Debian's Chromium through playwright-core,
// and REST helpers to check what arrived (the shared parts live in e2e/lib/browser.mjs).

import { createServer } from 'node:http';
import { readFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchBrowser as launch } from '../lib/browser.mjs';

export { SVC_BIN, CHROMIUM, startSvc, rest, sleep, until } from '../lib/browser.mjs';

const here = dirname(fileURLToPath(import.meta.url));

/** The nonce of the strict-CSP test page. */
export const NONCE = 'n0nce' + Math.random().toString(36).slice(2);

/** The strict CSP of decisions §10 for a page using the widget served from `svcOrigin`. */
export const strictCsp = (svcOrigin) =>
  `default-src 'self'; script-src 'nonce-${NONCE}' ${svcOrigin}; connect-src ${svcOrigin}; img-src 'self' data: blob:; media-src blob:; style-src 'self'`;

/**
 * Serves e2e/widget/pages on another loopback origin, with {{SVC}}, {{KEY}}, {{NONCE}} (and any other
 * variable given) filled in;
 * csp*.html pages are sent with the strict Content-Security-Policy header; `/status/<code>` answers
 * with that status; `POST /shop/pay` is the shop pages' payment call.
 */
export async function startPages(vars) {
  vars = { NONCE, ...vars };
  // The shop's payment endpoint: `POST /shop/pay` answers 500 while the bug is on (`setBug`).
  let bug = true;
  const server = createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    if (url.pathname === '/shop/pay' && req.method === 'POST') {
      req.resume();
      res.writeHead(bug ? 500 : 200, { 'content-type': 'application/json' });
      res.end(bug ? '{"error":"total is undefined"}' : '{"paid":true}');
      return;
    }
    // `/status/<code>`: a small JSON answer with that status (a page's failing API).
    const status = /^\/status\/(\d{3})$/.exec(url.pathname);
    if (status) {
      res.writeHead(Number(status[1]), { 'content-type': 'application/json' });
      res.end('{"error":"test"}');
      return;
    }
    let name = url.pathname.replace(/^\/+/, '') || 'project.html';
    if (name.startsWith('checkout/') || name.startsWith('app/')) name = 'shared.html';
    const file = join(here, 'pages', name.replace(/\.\./g, ''));
    if (!existsSync(file) || !file.endsWith('.html')) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
      return;
    }
    let text = readFileSync(file, 'utf8');
    for (const [k, v] of Object.entries(vars)) text = text.replaceAll(`{{${k}}}`, v);
    const headers = { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' };
    if (name.startsWith('csp')) headers['content-security-policy'] = strictCsp(vars.SVC);
    res.writeHead(200, headers);
    res.end(text);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    setBug: (on) => (bug = on),
    close: () => new Promise((r) => server.close(r)),
  };
}

/** Chromium with a fake microphone (a beep) and no permission prompt, for voice notes. */
export function launchBrowser() {
  return launch({ args: ['--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream'] });
}
