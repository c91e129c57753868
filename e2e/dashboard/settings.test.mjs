// Every project settings page and the organization pages, opened by a signed-in owner in Chromium
// after an agent and a script filled the project with hostile names: the project's own name, a
// channel's name and matcher note, key names, an agent label from `introduce`, a room title, a
// member's name. No payload may run or become markup, and every page works from the keyboard
// alone: Tab reaches every control of the page, each with an accessible name and a visible focus
// ring.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PASSWORD, callTool, launchChromium, ownerPage, rest, startSvc, unsafeMarkup, watch } from './lib.mjs';

// Each payload logs "XSS ..." and opens a dialog if it ever runs; each fits the shortest limit
// it is used under (a channel name: 80 characters).
const IMG = `<img src=x onerror="alert('XSS img')">`;
const SVG = `"><svg onload=alert('XSS svg')>`;
const SCRIPT = `<script>alert('XSS')</script>`;

const TABS = ['install', 'widget', 'channels', 'keys', 'identity', 'flags', 'retention', 'audit', 'settings'];

let svc;
let chrome;
let owner;
let seen;

before(async () => {
  svc = await startSvc();
  chrome = await launchChromium();
  const api = rest(svc.url, svc.token);
  const P = `/api/v1/projects/${svc.projectId}`;
  await api.patch(P, { name: `Shop ${IMG}`, urlPatterns: [`https://shop.example.com/${SVG}*`] });
  await api.post(`${P}/channels`, {
    key: 'hostile', name: `${SVG}${IMG}`.slice(0, 80), color: '#aa3300', mascot: 'owl',
    matchers: [{ conditions: [{ field: 'attr.plan', op: 'eq', value: SCRIPT }], weight: 3, note: `${SCRIPT}${IMG}` }],
  });
  const agent = await api.post(`${P}/keys`, { name: `CI ${SCRIPT}`, scopes: ['feedback:read', 'feedback:write'] });
  await callTool(svc, agent.key, 'introduce', { agentName: `Bot ${IMG}`, owner: SVG });
  await callTool(svc, agent.key, 'create_room', { artifact_id: 'preview-1', title: `Room ${SVG}` });
  await api.put(`${P}/flags/new-checkout`, { enabled: true });
  svc.createUser({ email: 'mallory@example.com', password: PASSWORD, name: `Mallory ${SVG}`, role: 'member' });
  owner = await ownerPage(svc, chrome);
  seen = watch(owner.page);
});

after(async () => {
  await chrome?.close();
  await svc?.stop();
});

const pages = () => [
  '/projects',
  '/members',
  '/outbox',
  '/account',
  ...TABS.map((tab) => `/projects/${svc.projectId}/${tab}`),
];

/** Markup a settings page may hold besides the dashboard's own: the widget tab previews the real widget. */
const allowed = (finding) => {
  const src = /^script: <script[^>]+src="([^"]+)"/.exec(finding)?.[1];
  if (!src) return false;
  const url = new URL(src, svc.url);
  return url.origin === svc.url && (url.pathname === '/v1/svc.js' || url.pathname.startsWith('/v1/parts/'));
};

describe('settings pages', () => {
  test('show every hostile name as text, run nothing, and need no CSP intervention', async () => {
    const { page } = owner;
    for (const path of pages()) {
      const response = await page.goto(svc.url + path);
      assert.equal(response.status(), 200, `${path} opens`);
      assert.deepEqual((await unsafeMarkup(page)).filter((f) => !allowed(f)), [], `${path}: no hostile markup`);
      assert.ok(await page.locator('body').isVisible(), `${path}: nothing hid the page`);
    }
    const text = async (path) => {
      await page.goto(svc.url + path);
      return page.locator('body').innerText();
    };
    assert.ok((await text('/projects')).includes(`Shop ${IMG}`), 'the project name is shown as text');
    assert.ok((await text(`/projects/${svc.projectId}/channels`)).includes(`${SVG}${IMG}`.slice(0, 80)), 'the channel name as text');
    const keys = await text(`/projects/${svc.projectId}/keys`);
    assert.ok(keys.includes(`CI ${SCRIPT}`), 'the key name as text');
    assert.ok(keys.includes(`Bot ${IMG}`), 'the agent label as text');
    assert.ok((await text('/members')).includes(`Mallory ${SVG}`), 'the member name as text');
    assert.ok((await text(`/projects/${svc.projectId}/audit`)).includes(`CI ${SCRIPT}`), 'the audit log names the key as text');

    assert.deepEqual(seen.dialogs, [], 'no dialog opened');
    assert.deepEqual(seen.console.filter((line) => /XSS|Content Security Policy|Refused to/i.test(line)), [], 'nothing ran or was blocked');
    assert.deepEqual(seen.errors, [], 'no page error');
  });

  test('work from the keyboard: Tab reaches every control, each named and visibly focused', async () => {
    const { page } = owner;
    for (const path of pages()) {
      await page.goto(svc.url + path);
      // Controls a person can use on this page (the widget preview's own shadow DOM aside).
      const controls = await page.evaluate(() => {
        const visible = (el) => {
          const box = el.getBoundingClientRect();
          const style = getComputedStyle(el);
          return box.width > 0 && box.height > 0 && style.visibility !== 'hidden' && !el.closest('[hidden], details:not([open]) > :not(summary), dialog:not([open])');
        };
        return [...document.querySelectorAll('a[href], button, input:not([type=hidden]), select, textarea, summary')]
          .filter((el) => !el.disabled && visible(el))
          .map((el, index) => {
            el.dataset.kbIndex = String(index);
            return index;
          });
      });
      const reached = new Set();
      const problems = [];
      await page.locator('body').focus();
      for (let presses = 0; presses < controls.length + 40 && reached.size < controls.length; presses++) {
        await page.keyboard.press('Tab');
        const focused = await page.evaluate(() => {
          const el = document.activeElement;
          if (!el || el === document.body) return null;
          const style = getComputedStyle(el);
          const ring = (style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0) || style.boxShadow !== 'none';
          const labelled = el.labels?.length ? [...el.labels].map((l) => l.innerText).join(' ') : '';
          const name = (el.getAttribute('aria-label') || labelled || el.innerText || el.value || el.title || '').trim();
          return { index: el.dataset.kbIndex, tag: el.tagName, name, ring, html: el.outerHTML.slice(0, 120) };
        });
        if (!focused || focused.index === undefined) continue;
        reached.add(focused.index);
        if (!focused.name) problems.push(`no accessible name: ${focused.html}`);
        if (!focused.ring) problems.push(`no visible focus: ${focused.html}`);
      }
      assert.deepEqual(problems, [], `${path}: every focused control is named and visibly focused`);
      assert.equal(reached.size, controls.length, `${path}: Tab reaches all ${controls.length} controls (reached ${reached.size})`);
    }
  });
});
