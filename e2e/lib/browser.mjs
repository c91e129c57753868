// Shared by the browser test suites (e2e/widget, e2e/dashboard): a real `svc serve` on a temporary
// data folder, Debian's Chromium through playwright-core (installed in widget/node_modules), and
// small helpers for REST calls and polling.

import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const require = createRequire(join(ROOT, 'widget', 'package.json'));
const { chromium } = require('playwright-core');

export const SVC_BIN = process.env.SVC_BIN || join(ROOT, 'target', 'debug', 'svc');
export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

/**
 * Starts `svc serve` on a loopback port with a fresh SQLite database and blob folder; resolves with
 * its address and bootstrap block: {url, projectId, projectKey, token, firstAccount}. `firstAccount`
 * (the one-time setup link printed while nobody has an account) is waited for only when asked.
 * The server logs at RUST_LOG (default `warn`) to stderr, kept in `stderr()`.
 */
export async function startSvc({ firstAccount = false, env = {} } = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-e2e-'));
  const childEnv = { ...process.env, SVC_RATE_LIMIT: 'off', RUST_LOG: process.env.RUST_LOG || 'warn', ...env };
  // The data folder decides the store, whatever the caller's environment says.
  for (const name of ['SVC_DATABASE_URL', 'SVC_BLOB_STORE', 'SVC_PUBLIC_URL', 'SVC_BIND', 'SVC_DATA_DIR']) delete childEnv[name];
  const child = spawn(SVC_BIN, ['serve', '--bind', '127.0.0.1:0', '--data-dir', dataDir], {
    env: childEnv,
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
      const link = /^First account:\s+(\S+)\n/m.exec(out);
      if (id && key && token && embed && (link || !firstAccount)) {
        clearTimeout(timer);
        resolve({ projectId: id[1], projectKey: key[1], token: token[1], url: embed[1], firstAccount: link?.[1] ?? null });
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
    await sleep(100);
  }
  const cli = (args, input) =>
    execFileSync(SVC_BIN, [...args, '--data-dir', dataDir], { encoding: 'utf8', input, env: childEnv }).trim();
  return {
    ...boot,
    dataDir,
    stdout: () => out,
    stderr: () => err,
    /** `svc project create` against the same data folder: {projectId, projectKey, setupToken}. */
    createProject(name) {
      return JSON.parse(cli(['project', 'create', '--name', name, '--json']).split('\n').pop());
    },
    /** `svc user create` (password on stdin): {userId, email, orgId, role}. */
    createUser({ email, password, name = '', role = 'member' }) {
      const args = ['user', 'create', '--email', email, '--password-stdin', '--role', role, '--json'];
      if (name) args.push('--name', name);
      return JSON.parse(cli(args, password + '\n').split('\n').pop());
    },
    /** `svc project identity-secret` (the secret on stdin). */
    setIdentitySecret(projectId, secret) {
      cli(['project', 'identity-secret', '--project', projectId], secret + '\n');
    },
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => (child.exitCode !== null ? r() : child.on('exit', r)));
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Headless Chromium; `args` are added to the usual flags. */
export async function launchBrowser({ args = [] } = {}) {
  // playwright-core gives the browser a fresh user-data-dir of its own (and refuses the flag).
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      ...args,
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
