// Test harness for the widget's browser tests: a real `svc serve` on a temporary data folder, the
// test pages on a second origin (a tiny static server), Debian's Chromium through playwright-core,
// and REST helpers to check what arrived.

import { spawn, execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const require = createRequire(join(root, 'widget', 'package.json'));
const { chromium } = require('playwright-core');

export const SVC_BIN = process.env.SVC_BIN || join(root, 'target', 'debug', 'svc');
export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

/** Starts `svc serve` on a loopback port; resolves with its address and bootstrap block. */
export async function startSvc() {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-e2e-'));
  const child = spawn(SVC_BIN, ['serve', '--bind', '127.0.0.1:0', '--data-dir', dataDir], {
    env: { ...process.env, SVC_RATE_LIMIT: 'off', RUST_LOG: process.env.RUST_LOG || 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const boot = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('svc serve did not print its bootstrap block:\n' + out + err)), 30000);
    child.on('exit', (code) => reject(new Error(`svc serve exited with ${code}:\n${out}${err}`)));
    child.stdout.on('data', (d) => {
      out += d;
      const id = /Project id:\s+(\S+)/.exec(out);
      const key = /Public key:\s+(\S+)/.exec(out);
      const token = /Setup token:\s+(\S+)/.exec(out);
      const embed = /Embed:\s+<script src="(http:\/\/[^/]+)\//.exec(out);
      if (id && key && token && embed) {
        clearTimeout(timer);
        resolve({ projectId: id[1], projectKey: key[1], token: token[1], url: embed[1] });
      }
    });
  });
  // Wait until it answers.
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(boot.url + '/healthz')).ok) break;
    } catch {
      /* not yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    ...boot,
    dataDir,
    stderr: () => err,
    /** `svc project create` against the same data folder: {projectId, projectKey, setupToken}. */
    createProject(name) {
      const text = execFileSync(SVC_BIN, ['project', 'create', '--name', name, '--json', '--data-dir', dataDir], { encoding: 'utf8' });
      return JSON.parse(text.trim().split('\n').pop());
    },
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => (child.exitCode !== null ? r() : child.on('exit', r)));
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The nonce of the strict-CSP test page. */
export const NONCE = 'n0nce' + Math.random().toString(36).slice(2);

/** The strict CSP of decisions §10 for a page using the widget served from `svcOrigin`. */
export const strictCsp = (svcOrigin) =>
  `default-src 'self'; script-src 'nonce-${NONCE}' ${svcOrigin}; connect-src ${svcOrigin}; img-src 'self' data: blob:; media-src blob:; style-src 'self'`;

/**
 * Serves e2e/widget/pages on another loopback origin, with {{SVC}}, {{KEY}}, {{NONCE}} (and any other
 * variable given) filled in;
 * csp*.html pages are sent with the strict Content-Security-Policy header.
 */
export async function startPages(vars) {
  vars = { NONCE, ...vars };
  const server = createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
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
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(r)) };
}

export async function launchBrowser() {
  // playwright-core gives the browser a fresh user-data-dir of its own (and refuses the flag).
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      // Voice notes: a fake microphone (a beep) and no permission prompt.
      '--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream',
    ],
  });
  return {
    browser,
    async close() {
      await browser.close();
    },
  };
}

/** REST calls with a bearer key. */
export function rest(base, token) {
  const call = async (method, path, body) => {
    const r = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await r.text();
    let json = null;
    try {
      json = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${text}`);
    return json;
  };
  return {
    call,
    get: (p) => call('GET', p),
    post: (p, b) => call('POST', p, b),
    patch: (p, b) => call('PATCH', p, b),
    put: (p, b) => call('PUT', p, b),
  };
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` until it returns a truthy value (or throws after `ms`). */
export async function until(fn, ms = 10000, what = 'condition') {
  const end = Date.now() + ms;
  let last;
  while (Date.now() < end) {
    last = await fn();
    if (last) return last;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what} (last: ${JSON.stringify(last)})`);
}
