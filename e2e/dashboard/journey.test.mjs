// The dashboard as people use it, in Chromium against a real `svc serve`: the first owner comes in
// through the setup link the server prints, a second person signs in, reports filed through ingest
// (a real screenshot, a real voice note, a pinpoint) and an agent's draft are read, triaged and
// published in the browser and checked through the REST API, and an open inbox shows new reports
// by itself. Also the first-load size budget, measured on what the server sends.

import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import {
  PASSWORD, callTool, ingest, launchChromium, makeScreenshot, makeVoice, rest, signIn, startSvc, until, watch,
} from './lib.mjs';

let svc;
let chrome;
let api;
let P; // `/api/v1/projects/<id>`
let owner; // the first owner's {context, page, seen}, signed in by the first test

before(async () => {
  svc = await startSvc({ firstAccount: true });
  chrome = await launchChromium();
  api = rest(svc.url, svc.token);
  P = `/api/v1/projects/${svc.projectId}`;
});

after(async () => {
  await chrome?.close();
  await svc?.stop();
});

/** A fresh browser context (no cookies) and a watched page. */
async function freshPage() {
  const context = await chrome.browser.newContext();
  const page = await context.newPage();
  return { context, page, seen: watch(page) };
}

const path = (page) => new URL(page.url()).pathname + new URL(page.url()).search;

describe('accounts', () => {
  test('the base URL leads to sign-in; the printed setup link makes the first owner, who lands in the inbox', async () => {
    const { context, page, seen } = await freshPage();
    await page.goto(svc.url + '/');
    assert.equal(path(page), '/sign-in', 'nobody is signed in: the sign-in page');
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();

    assert.match(svc.firstAccount, /^http:\/\/127\.0\.0\.1:\d+\/setup\?token=\S+$/, 'svc serve printed a first-account link');
    await page.goto(svc.firstAccount);
    await page.getByRole('heading', { name: 'Welcome to Svc' }).waitFor();
    await page.getByLabel('Name').fill('Ada Lovelace');
    await page.getByLabel('Email').fill('ada@example.com');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForURL(svc.url + '/');

    const nav = page.getByRole('navigation', { name: 'Sections' });
    assert.equal(await nav.getByRole('link', { name: 'Inbox' }).getAttribute('aria-current'), 'page');
    assert.ok(await page.locator('.topbar .me').getByText('Ada Lovelace').isVisible(), 'the top bar names the person');
    assert.ok(await page.getByRole('region', { name: 'No reports yet' }).isVisible(), 'an empty inbox says where to start');

    // The link works once.
    const other = await freshPage();
    const again = await other.page.goto(svc.firstAccount);
    assert.equal(again.status(), 404);
    await other.page.getByText('This link has expired or was already used').first().waitFor();
    await other.context.close();

    assert.deepEqual(seen.errors, []);
    owner = { context, page, seen };
  });

  test('a person made with `svc user create` signs in with Email, Password and "Sign in", and signs out', async () => {
    svc.createUser({ email: 'grace@example.com', password: PASSWORD, name: 'Grace Hopper', role: 'member' });
    const { context, page, seen } = await freshPage();
    await page.goto(svc.url + '/');
    await page.getByLabel('Email').fill('Grace@Example.com');
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').getByText('That email and password do not match an account.').waitFor();
    assert.equal(new URL(page.url()).pathname, '/sign-in');

    await signIn(page, svc.url, 'grace@example.com');
    assert.ok(await page.locator('.topbar .me').getByText('Grace Hopper').isVisible());
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.waitForURL(/\/sign-in/);
    await page.goto(svc.url + '/');
    assert.equal(path(page), '/sign-in', 'signed out: the inbox needs signing in again');
    assert.deepEqual(seen.errors, []);
    await context.close();
  });
});

describe('reports', () => {
  test('a report with a screenshot, a voice note, a pinpoint and an agent draft is read, triaged and published', async () => {
    const shot = await makeScreenshot(chrome);
    const voice = await makeVoice(chrome);
    const filer = ingest(svc);
    const image = await filer.blob('screenshot', shot.png, { type: 'image/png', name: 'shot.png' });
    const note = await filer.blob('audio', voice.bytes, { type: voice.type, name: 'voice.webm', fields: { durationMs: voice.durationMs } });
    assert.equal(image.width, shot.viewport.width);
    const id = await filer.report({
      channelKey: 'bug',
      blocks: [
        { type: 'text', text: 'Pay now does nothing\nThe total says $0.00 and the button does not react.' },
        { type: 'screenshot', blobId: image.blobId },
        { type: 'audio', blobId: note.blobId, transcript: 'I click pay and nothing happens' },
        {
          type: 'pinpoint', selector: '#pay', comment: 'this button',
          target: { css: 'main > button#pay', xpath: '/html/body/main/button', testIds: ['pay-button'] },
          rect: shot.rect, point: { x: 0.5, y: 0.5 },
        },
      ],
      context: {
        url: 'https://shop.example.com/cart',
        userAgent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36',
        viewport: shot.viewport,
      },
    });
    const draft = await callTool(svc, svc.token, 'add_comment', { report_id: id, text: 'Fixed in #42: the pay handler awaited a stale promise.', kind: 'fix' });
    assert.equal(draft.draft, true, 'an agent comment is a draft');

    const { page, seen } = owner;
    // Found by search: a word of the reporter's text, typed in the search field. The search index
    // follows new reports within a couple of seconds, so the search is repeated until it has.
    await page.goto(svc.url + '/');
    const list = page.getByRole('navigation', { name: 'Reports' });
    const deadline = Date.now() + 15000;
    for (;;) {
      await page.getByLabel('Search reports').fill('nothing happens');
      // The list is swapped in without a page load; the bar at the top shows while it comes.
      await page.getByLabel('Search reports').press('Enter');
      await page.locator('body:not(.busy)').waitFor();
      if (await list.getByRole('link', { name: /Pay now does nothing/ }).count()) break;
      assert.ok(Date.now() < deadline, 'the report is found by search');
      await page.waitForTimeout(500);
    }
    assert.ok(await list.locator('mark').count(), 'the match is highlighted');
    await list.getByRole('link', { name: /Pay now does nothing/ }).click();
    await page.waitForURL(new RegExp(`r=${id}`), { waitUntil: 'commit' });
    const report = page.locator('#report');
    await report.getByRole('heading', { name: 'Pay now does nothing' }).waitFor();

    // The screenshot, loaded, with the pinpoint marked where the button is.
    const img = report.getByRole('img', { name: /Screenshot/ });
    await img.scrollIntoViewIfNeeded();
    await page.waitForFunction((el) => el.complete && el.naturalWidth > 0, await img.elementHandle());
    assert.equal(await img.evaluate((el) => el.naturalWidth), shot.viewport.width);
    const box = await img.boundingBox();
    const pin = await report.locator('circle.pin').boundingBox();
    assert.ok(pin, 'a pinpoint marker is drawn');
    const scale = box.width / shot.viewport.width;
    const expected = { x: box.x + (shot.rect.x + shot.rect.width / 2) * scale, y: box.y + (shot.rect.y + shot.rect.height / 2) * scale };
    assert.ok(Math.abs(pin.x + pin.width / 2 - expected.x) < 2 && Math.abs(pin.y + pin.height / 2 - expected.y) < 2,
      `the marker sits on the button: ${JSON.stringify({ pin, expected })}`);

    // The voice note plays to its end.
    await report.getByRole('heading', { name: /Voice note · 0:01/ }).waitFor();
    const played = await report.locator('audio').evaluate((audio) => new Promise((resolve) => {
      const done = () => resolve({ ended: audio.ended, error: audio.error && audio.error.code, duration: audio.duration, at: audio.currentTime });
      audio.addEventListener('ended', done, { once: true });
      audio.addEventListener('error', done, { once: true });
      audio.play().catch((e) => resolve({ error: String(e) }));
    }));
    assert.equal(played.error, null, `the voice note plays: ${JSON.stringify(played)}`);
    assert.ok(played.ended && played.duration > 0.4 && Number.isFinite(played.duration), JSON.stringify(played));
    assert.ok(await report.getByText('I click pay and nothing happens', { exact: true }).isVisible(), 'the transcript');

    // The pinpoint's selector, as text.
    assert.equal(await report.locator('.selector code').first().textContent(), 'main > button#pay');
    assert.ok(await report.getByText('/html/body/main/button', { exact: true }).isVisible());
    assert.ok(await report.getByText('Chrome 140 on Linux', { exact: true }).isVisible(), 'browser and OS from the user agent');

    // Status: the Status select and "Set status".
    await page.getByLabel('Status', { exact: true }).selectOption('in-progress');
    await report.getByRole('button', { name: 'Set status' }).click();
    await report.locator('.facts .badge', { hasText: 'in-progress' }).waitFor();
    await report.getByText('Ada Lovelace: new → in-progress').waitFor();
    const stored = await api.get(`${P}/feedback/${id}`);
    assert.equal(stored.status, 'in-progress');
    assert.deepEqual(stored.statusHistory.map((h) => [h.from, h.to, h.by.kind, h.by.label]), [['new', 'in-progress', 'user', 'Ada Lovelace']]);

    // Assigned to the person with the Assignee select and "Assign".
    await page.getByLabel('Assignee', { exact: true }).selectOption({ label: 'Ada Lovelace' });
    await report.getByRole('button', { name: 'Assign', exact: true }).click();
    await page.locator('body:not(.busy)').waitFor();
    const assigned = await api.get(`${P}/feedback/${id}`);
    assert.ok(assigned.assignee, 'the report has an assignee');
    assert.equal(await page.getByLabel('Assignee', { exact: true }).evaluate((s) => s.selectedOptions[0].textContent), 'Ada Lovelace');

    // The agent's draft: marked, then published.
    const comment = report.locator('article.comment', { hasText: 'the pay handler awaited a stale promise' });
    assert.ok(await comment.getByText('Draft', { exact: true }).isVisible());
    await comment.getByRole('button', { name: 'Publish', exact: true }).click();
    await report.locator('article.comment', { hasText: 'the pay handler awaited a stale promise' }).getByText(/^published /).waitFor();
    assert.equal(await report.locator('article.comment.draft').count(), 0, 'no draft left');
    const { items } = await api.get(`${P}/feedback/${id}/comments`);
    const published = items.find((c) => c.id === draft.id);
    assert.equal(published.draft, false);
    assert.ok(published.publishedAt, 'it has a publication time');
    assert.equal(published.text, draft.text, 'published as the agent wrote it');

    assert.deepEqual(seen.errors, []);
    assert.deepEqual(seen.dialogs, []);
    assert.deepEqual(seen.console, [], 'nothing in the console');
  });

  test('a report filed while the inbox is open appears in the list without a reload', async () => {
    const { page, seen } = owner;
    await page.goto(svc.url + '/');
    await page.locator('.live.on').waitFor({ state: 'attached' }); // the event stream is open
    await page.evaluate(() => (window.stillTheSamePage = true));
    const before = await page.locator('.filters .count').textContent();
    const list = page.getByRole('navigation', { name: 'Reports' });
    assert.equal(await list.getByRole('link', { name: /Checkout total is wrong/ }).count(), 0);

    await ingest(svc).report({ blocks: [{ type: 'text', text: 'Checkout total is wrong\nIt shows $0.00.' }] });
    await list.getByRole('link', { name: /Checkout total is wrong/ }).waitFor({ timeout: 10000 });
    assert.equal(await page.evaluate(() => window.stillTheSamePage), true, 'the page was not reloaded');
    assert.notEqual(await page.locator('.filters .count').textContent(), before, 'the count follows');
    const item = list.locator('.item', { has: page.getByRole('link', { name: /Checkout total is wrong/ }) });
    assert.ok(await item.locator('.unread-dot').count(), 'the new report is unread');
    assert.deepEqual(seen.errors, []);
  });
});

describe('filters', () => {
  test('the status filter narrows the list as soon as it changes', async () => {
    const { page, seen } = owner;
    await page.goto(svc.url + '/');
    const list = page.getByRole('navigation', { name: 'Reports' });
    assert.equal(await list.getByRole('link').count(), 2);
    await page.getByLabel('Filter by status').selectOption('in-progress');
    await page.locator('body:not(.busy)').waitFor();
    assert.match(page.url(), /status=in-progress/);
    const titles = await list.locator('.item .title').allTextContents();
    assert.deepEqual(titles, ['Pay now does nothing'], 'only the report in progress');
    await page.getByRole('link', { name: 'Clear' }).click();
    await page.waitForURL(svc.url + '/', { waitUntil: 'commit' });
    await page.locator('body:not(.busy)').waitFor();
    assert.equal(await list.getByRole('link').count(), 2);
    assert.deepEqual(seen.errors, []);
  });
});

describe('budget', () => {
  test('the first load (stylesheet and script) is at most 80 KB gzip, measured on what the server sends', async () => {
    const { page } = owner;
    await page.goto(svc.url + '/');
    const assets = await page.evaluate(() => [
      ...[...document.querySelectorAll('link[rel=stylesheet]')].map((l) => l.href),
      ...[...document.scripts].map((s) => s.src),
    ]);
    assert.equal(assets.length, 2, `one stylesheet and one script: ${assets}`);
    const gz = (bytes) => gzipSync(bytes, { level: 9 }).length;
    let total = 0;
    console.log('dashboard first load as served (gzip):');
    for (const url of assets) {
      const r = await fetch(url);
      assert.equal(r.status, 200, url);
      assert.match(r.headers.get('cache-control'), /immutable/, 'hashed names are cached for good');
      const size = gz(Buffer.from(await r.arrayBuffer()));
      total += size;
      console.log(`  ${new URL(url).pathname.padEnd(44)} ${(size / 1024).toFixed(2)} KB`);
    }
    console.log(`  ${'all'.padEnd(44)} ${(total / 1024).toFixed(2)} KB (budget 80 KB)`);
    assert.ok(total <= 80 * 1024, `first load ${total} bytes > 80 KB`);
  });
});
