// Helpers of the dashboard's browser tests: people signing in, reports filed through ingest with
// real media made in the browser, agents calling the tool endpoint, and checks that a page shows
// reporter content as text only.

import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { launchBrowser, until } from '../lib/browser.mjs';

export * from '../lib/browser.mjs';

export const PASSWORD = 'correct horse battery staple';

/** Chromium that may play audio without a click (voice notes, and recording one in `makeVoice`). */
export const launchChromium = () => launchBrowser({ args: ['--autoplay-policy=no-user-gesture-required'] });

/** Signs in through the form, as a person would; resolves on the inbox. */
export async function signIn(page, base, email, password = PASSWORD) {
  await page.goto(base + '/sign-in');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(base + '/');
}

/** A signed-in owner's browser context and page (user made with `svc user create`). */
export async function ownerPage(svc, chrome, { email = 'owner@example.com', name = 'Olivia Owner', viewport } = {}) {
  svc.createUser({ email, password: PASSWORD, name, role: 'owner' });
  const context = await chrome.browser.newContext(viewport ? { viewport } : {});
  const page = await context.newPage();
  await signIn(page, svc.url, email);
  return { context, page };
}

/** Records what a page says and does: dialogs (dismissed), console messages, uncaught errors. */
export function watch(page) {
  const seen = { dialogs: [], console: [], errors: [] };
  page.on('dialog', (dialog) => {
    seen.dialogs.push(`${dialog.type()}: ${dialog.message()}`);
    dialog.dismiss().catch(() => {});
  });
  page.on('console', (message) => seen.console.push(`${message.type()}: ${message.text()}`));
  page.on('pageerror', (error) => seen.errors.push(String(error)));
  return seen;
}

/** An identity token (HS256 JWT) as the app's server would mint it. */
export function identityToken(claims, secret) {
  const b64 = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const head = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ ...claims, exp: Math.floor(Date.now() / 1000) + 3600 })}`;
  return `${head}.${createHmac('sha256', secret).update(head).digest('base64url')}`;
}

/** Ingest calls with the project's public key. */
export function ingest(svc, projectKey = svc.projectKey) {
  const key = { 'x-svc-project-key': projectKey };
  return {
    /** `POST /ingest/blob`; resolves with the answer ({blobId, mime, bytes, ...}). */
    async blob(kind, bytes, { type = 'application/octet-stream', name = 'upload.bin', fields = {} } = {}) {
      const form = new FormData();
      form.set('kind', kind);
      for (const [field, value] of Object.entries(fields)) form.set(field, String(value));
      form.set('file', new Blob([bytes], { type }), name);
      const r = await fetch(svc.url + '/ingest/blob', { method: 'POST', headers: key, body: form });
      const text = await r.text();
      assert.equal(r.status, 200, `blob upload: ${text}`);
      return JSON.parse(text);
    },
    /** `POST /ingest/report`; resolves with the report's id. */
    async report(body, headers = {}) {
      const r = await fetch(svc.url + '/ingest/report', {
        method: 'POST',
        headers: { ...key, 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
      const text = await r.text();
      assert.equal(r.status, 200, `report: ${text}`);
      return JSON.parse(text).reportId;
    },
  };
}

/** One `tools/call` on the tool endpoint (JSON-RPC over HTTP); resolves with the tool's JSON answer (or text). */
export async function callTool(svc, key, name, args) {
  const r = await fetch(svc.url + '/mcp', {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  const answer = await r.json();
  assert.equal(r.status, 200, JSON.stringify(answer));
  assert.ok(answer.result && !answer.result.isError, `${name}: ${JSON.stringify(answer)}`);
  const text = answer.result.content[0].text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * A real screenshot of a small checkout page (PNG, as Chromium takes it) and where its Pay button
 * is: {png, viewport, rect} with `rect` in CSS pixels of the viewport, as the widget measures it.
 */
export async function makeScreenshot(chrome, viewport = { width: 640, height: 340 }) {
  const context = await chrome.browser.newContext({ viewport, deviceScaleFactor: 1 });
  const page = await context.newPage();
  await page.setContent(`<!doctype html><html><body style="margin:0;font:16px system-ui,sans-serif;background:#fafafa;color:#222">
    <header style="background:#0f766e;color:#fff;padding:14px 24px;font-weight:700">Acme Shop</header>
    <main style="padding:24px;max-width:420px">
      <h1 style="font-size:22px;margin:0 0 16px">Your cart</h1>
      <p style="display:flex;justify-content:space-between;margin:6px 0"><span>Blue mug ×2</span><span>$24.00</span></p>
      <p style="display:flex;justify-content:space-between;margin:6px 0"><span>Shipping</span><span>$5.00</span></p>
      <p style="display:flex;justify-content:space-between;margin:12px 0;font-weight:700"><span>Total</span><span class="total">$0.00</span></p>
      <button id="pay" data-testid="pay-button" style="font:inherit;padding:10px 28px;border:0;border-radius:6px;background:#0f766e;color:#fff">Pay now</button>
    </main></body></html>`);
  const png = await page.screenshot({ type: 'png' });
  const box = await page.locator('#pay').boundingBox();
  await context.close();
  return { png, viewport, rect: { x: box.x, y: box.y, width: box.width, height: box.height } };
}

/**
 * A real voice note: about 0.7 s of a 440 Hz tone recorded by Chromium's MediaRecorder, as the
 * widget records one (audio/webm with Opus). Resolves with {bytes, type, durationMs}.
 */
export async function makeVoice(chrome) {
  const page = await chrome.browser.newPage();
  const { data, type, durationMs } = await page.evaluate(async () => {
    const audio = new AudioContext();
    await audio.resume();
    const tone = audio.createOscillator();
    const gain = audio.createGain();
    gain.gain.value = 0.2;
    const out = audio.createMediaStreamDestination();
    tone.connect(gain).connect(out);
    tone.start();
    const recorder = new MediaRecorder(out.stream, { mimeType: 'audio/webm;codecs=opus' });
    const chunks = [];
    recorder.ondataavailable = (event) => chunks.push(event.data);
    const stopped = new Promise((resolve) => (recorder.onstop = resolve));
    const started = performance.now();
    recorder.start();
    await new Promise((resolve) => setTimeout(resolve, 700));
    recorder.stop();
    await stopped;
    const blob = new Blob(chunks, { type: recorder.mimeType });
    const bytes = new Uint8Array(await blob.arrayBuffer());
    let binary = '';
    for (const b of bytes) binary += String.fromCharCode(b);
    return { data: btoa(binary), type: recorder.mimeType, durationMs: Math.round(performance.now() - started) };
  });
  await page.close();
  return { bytes: Buffer.from(data, 'base64'), type, durationMs };
}

/**
 * What a page must never contain when it shows reporter content: event-handler attributes,
 * `javascript:`/`data:` links or sources, scripts other than the dashboard's own, frames or
 * objects, images from anywhere but the dashboard's blob route. Returns the offending markup.
 */
export function unsafeMarkup(page) {
  return page.evaluate(() => {
    const found = [];
    const short = (el) => el.outerHTML.slice(0, 160);
    for (const el of document.querySelectorAll('*')) {
      for (const attr of el.attributes) {
        if (/^on/i.test(attr.name)) found.push(`event handler: ${short(el)}`);
        if (/^(href|src|action|formaction|xlink:href|data|poster|srcset)$/i.test(attr.name) && /^\s*(javascript|vbscript|data):/i.test(attr.value)) {
          if (!(el.tagName === 'LINK' && el.rel === 'icon' && attr.value === 'data:,')) found.push(`scripted URL: ${short(el)}`);
        }
      }
    }
    for (const script of document.scripts) {
      if (!script.src || new URL(script.src).origin !== location.origin || !new URL(script.src).pathname.startsWith('/dashboard/assets/')) {
        found.push(`script: ${short(script)}`);
      }
    }
    for (const el of document.querySelectorAll('iframe, frame, object, embed, base, meta[http-equiv], foreignObject')) found.push(`element: ${short(el)}`);
    for (const img of document.images) {
      const src = new URL(img.src, location.href);
      if (src.origin !== location.origin || !src.pathname.startsWith('/dashboard/blobs/')) found.push(`image: ${short(img)}`);
    }
    return found;
  });
}

/** Waits until the server's log has a line matching `pattern` (the server logs to stderr). */
export const logged = (svc, pattern, what) => until(() => pattern.test(svc.stderr()), 10000, what);

/** The lines of the server's log that report Content Security Policy violations. */
export const cspViolations = (svc) =>
  svc.stderr().split('\n').filter((line) => /content security policy violation/i.test(line));
