// Stored and reflected XSS: every field a reporter (or an agent) controls carries script, event
// handler, javascript: URL and Markdown image payloads; a signed-in owner opens the inbox, every
// report, the rooms and the exports in Chromium. No payload may run (no dialog, no console message),
// none may become markup, and the dashboard's Content Security Policy must never have had to step
// in (the server logs every CSP report it receives; a deliberate violation at the end proves that
// reporting works, so the silence before it means something).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  PASSWORD, callTool, cspViolations, identityToken, ingest, launchChromium, logged, makeScreenshot, makeVoice, ownerPage, rest,
  signIn, startSvc, unsafeMarkup, until, watch,
} from './lib.mjs';

// Every payload logs "XSS ..." and opens a dialog if it ever runs.
const SCRIPT = `<script>console.log('XSS script');alert('XSS script')</script>`;
const IMG = `<img src=x onerror="console.log('XSS img');alert('XSS img')">`;
const SVG = `<svg onload="console.log('XSS svg');alert('XSS svg')"></svg>`;
const JS_URL = `javascript:console.log('XSS url');alert('XSS url')`;
const MD_IMAGE = `![x](javascript:alert('XSS md image'))`;
const MD_LINK = `[click me](javascript:console.log('XSS md link'))`;
const BREAKOUT = `"><img src=x onerror=console.log('XSS attr')>'><svg/onload=alert('XSS attr')>`;
const STYLE = `<style>body{display:none}</style>`;
const ALL = [SCRIPT, IMG, SVG, JS_URL, MD_IMAGE, MD_LINK, BREAKOUT, STYLE].join(' ');
/** Up to 200 characters (artifact ids, agent names). */
const SHORT = `"><img src=x onerror=alert('XSS')><svg onload=alert('XSS')>`;
/** An http(s) URL that is accepted as a link and tries to break out of the attribute. */
const HOSTILE_HTTP = `https://shop.example.com/"><script>console.log('XSS')</script><img/src=x/onerror=alert('XSS')>`;

let svc;
let chrome;
let api;
let owner; // {context, page}
let seen;
const reports = []; // ids of every hostile report
let fileBlobId;

before(async () => {
  svc = await startSvc();
  chrome = await launchChromium();
  api = rest(svc.url, svc.token);
  owner = await ownerPage(svc, chrome);
  seen = watch(owner.page);
});

after(async () => {
  await chrome?.close();
  await svc?.stop();
});

/** Opens a page of the dashboard and checks that it shows the payloads only as text. */
async function openSafely(page, path, { expectText = [] } = {}) {
  const response = await page.goto(svc.url + path);
  assert.ok(response.status() < 500, `${path}: ${response.status()}`);
  assert.deepEqual(await unsafeMarkup(page), [], `${path}: no reporter markup`);
  const text = await page.locator('body').innerText();
  for (const expected of expectText) assert.ok(text.includes(expected), `${path} shows ${JSON.stringify(expected.slice(0, 60))} as text`);
  assert.ok(await page.locator('body').isVisible(), `${path}: no payload hid the page`);
  return response;
}

function assertNothingRan(where) {
  assert.deepEqual(seen.dialogs, [], `${where}: no dialog`);
  assert.deepEqual(seen.console.filter((line) => /XSS|Content Security Policy|Refused to/i.test(line)), [], `${where}: nothing ran or was blocked`);
  assert.deepEqual(seen.errors, [], `${where}: no page error`);
}

describe('hostile reports', () => {
  test('filed through ingest, the tool endpoint and with an identity token, every field hostile', async () => {
    // Set before the first ingest request, so the server's short-lived project cache has not read
    // the project yet (the CLI writes to the database directly).
    const secret = 'identity-secret-for-e2e-tests';
    svc.setIdentitySecret(svc.projectId, secret);
    const filer = ingest(svc);
    const shot = await makeScreenshot(chrome);
    const voice = await makeVoice(chrome);
    const image = await filer.blob('screenshot', shot.png, { type: 'image/png', name: `${SHORT}.png` });
    const note = await filer.blob('audio', voice.bytes, { type: voice.type, name: `${SHORT}.webm` });
    const svgFile = `<svg xmlns="http://www.w3.org/2000/svg" onload="alert('XSS file')"><script>console.log('XSS file')</script></svg>`;
    const file = await filer.blob('file', Buffer.from(svgFile), { type: 'image/svg+xml', name: `${SHORT}.svg` });
    fileBlobId = file.blobId;
    const target = {
      css: `${SCRIPT} main > button${BREAKOUT}`, xpath: `/html/body/${IMG}`, testIds: [SVG, BREAKOUT],
      reactComponent: SHORT, matchIndex: 1, shadowHosts: [SCRIPT], frames: [IMG],
    };
    const context = {
      url: JS_URL,
      userAgent: `Mozilla/5.0 ${SCRIPT}`,
      language: IMG,
      pathname: SVG,
      viewport: shot.viewport,
      consoleErrors: [SCRIPT, IMG, SVG, MD_IMAGE, BREAKOUT],
      userId: SHORT,
      reporter: { name: ALL, email: `${SHORT}@example.com` },
      extra: { release: ALL, [SHORT]: { nested: ALL }, list: [MD_IMAGE, JS_URL] },
      custom: { plan: ALL },
      flags: [SHORT],
      channelSource: ALL,
      artifactId: SHORT,
      artifact: {
        id: SHORT, title: `Room ${ALL}`, tool: ALL, source: JS_URL, goal: MD_IMAGE, constraints: [ALL],
        url: HOSTILE_HTTP, meta: { [SHORT]: ALL },
      },
    };
    reports.push(await filer.report({
      blocks: [
        { type: 'text', text: `Everything hostile ${ALL}\nSecond line ${ALL}` },
        { type: 'screenshot', blobId: image.blobId, annotations: [{ kind: 'rect', points: [[1, 1], [20, 20]], color: `red;${SHORT}`.slice(0, 50) }] },
        { type: 'audio', blobId: note.blobId, transcript: ALL },
        { type: 'selection', text: ALL, selector: SCRIPT, target },
        { type: 'quote', text: ALL, selector: IMG, target, comment: `${ALL} ${MD_LINK}` },
        { type: 'pinpoint', selector: SVG, target, comment: ALL, rect: shot.rect, point: { x: 0.5, y: 0.5 } },
        { type: 'file', blobId: file.blobId, name: `${BREAKOUT}.svg`, description: ALL },
      ],
      context,
    }));
    // A page URL that is a real link but tries to break out of its attribute.
    reports.push(await filer.report({ blocks: [{ type: 'text', text: `Hostile link ${SCRIPT}` }], context: { url: HOSTILE_HTTP, artifactId: 'plain-room' } }));
    // Markdown payloads alone, as the whole text.
    reports.push(await filer.report({ blocks: [{ type: 'text', text: `${MD_IMAGE}\n${MD_LINK}\n<a href="${JS_URL}">link</a>` }] }));

    // A verified identity whose profile is hostile.
    const token = identityToken({ sub: SHORT, email: `x${SHORT}@example.com`, name: ALL, avatarUrl: JS_URL }, secret);
    const verified = await filer.report({ blocks: [{ type: 'text', text: `Identified ${IMG}` }] }, { 'x-svc-identity': token });
    reports.push(verified);
    assert.equal((await api.get(`/api/v1/projects/${svc.projectId}/feedback/${verified}`)).identity?.verified, true);

    // An agent with a hostile name files a report and comments (a draft and a published one).
    const { key } = await api.post(`/api/v1/projects/${svc.projectId}/keys`, { name: SHORT, scopes: ['feedback:read', 'feedback:write'] });
    await callTool(svc, key, 'introduce', { agentName: SHORT });
    const filed = await callTool(svc, key, 'create_report', { message: `Agent report ${ALL}`, url: JS_URL, author: SHORT });
    reports.push(filed.id);
    await callTool(svc, key, 'create_room', { artifact_id: `agent-${SHORT}`.slice(0, 200), title: `Agent room ${SCRIPT}`.slice(0, 200), goal: ALL });
    for (const id of reports) {
      await callTool(svc, key, 'add_comment', { report_id: id, text: `Draft ${ALL}`, kind: 'fix' });
      await callTool(svc, key, 'add_comment', { report_id: id, text: `Published ${ALL}`, draft: false });
    }
  });
});

describe('pages', () => {
  test('the inbox lists them as text', async () => {
    await openSafely(owner.page, '/', { expectText: [`Everything hostile ${SCRIPT}`.slice(0, 40), `Agent report ${SCRIPT}`.slice(0, 40)] });
    assert.equal(await owner.page.locator('.list .item').count(), reports.length);
    // While searching, a row also shows the words around the match: as text too.
    for (const [q, expected] of [['Second', `Second line ${SCRIPT}`], ['click', MD_LINK]]) {
      await until(async () => {
        await openSafely(owner.page, `/?q=${q}`);
        return (await owner.page.locator('.list').innerText()).includes(expected);
      }, 15000, `the search for ${q} to show its snippet`);
    }
    assertNothingRan('inbox');
  });

  test('every report shows every field as text, and its screenshot, voice note and forms work', async () => {
    const page = owner.page;
    for (const id of reports) {
      await openSafely(page, `/?r=${id}`);
      await page.locator('#report h1').waitFor();
      // Open everything that opens: the edit form of drafts.
      for (const summary of await page.locator('#report details summary').all()) await summary.click();
      assert.deepEqual(await unsafeMarkup(page), [], `report ${id} with its drafts' editors open`);
    }
    const [main, link] = reports;
    await openSafely(page, `/?r=${main}`, {
      expectText: [
        `Everything hostile ${SCRIPT}`, `Second line ${ALL}`.slice(0, 200), `main > button${BREAKOUT}`, JS_URL,
        `Download ${BREAKOUT}.svg`, `Published ${ALL}`.slice(0, 200), `Draft ${ALL}`.slice(0, 200),
      ],
    });
    const img = page.locator('#report img').first();
    await img.scrollIntoViewIfNeeded();
    await page.waitForFunction((el) => el.complete && el.naturalWidth > 0, await img.elementHandle());
    // The only links out are http(s) ones; the javascript: page URL is text.
    const hrefs = await page.locator('#report a[href]').evaluateAll((links) => links.map((a) => a.getAttribute('href')));
    for (const href of hrefs) assert.match(href, /^(\/|#|https?:\/\/)/, `link target ${href}`);
    // The hostile http link stays one attribute value.
    await openSafely(page, `/?r=${link}`);
    const out = await page.locator('#report a[target=_blank]').evaluateAll((links) => links.map((a) => a.href));
    assert.deepEqual(out, [new URL(HOSTILE_HTTP).href], 'the page URL is one link, its payload inside the href');
    // The file blob is a download, never rendered (an SVG with a script in it).
    const blob = await page.request.get(`${svc.url}/dashboard/blobs/${fileBlobId}`);
    assert.equal(blob.status(), 200);
    assert.match(blob.headers()['content-disposition'] ?? '', /^attachment/);
    assert.equal(blob.headers()['x-content-type-options'], 'nosniff');
    assert.doesNotMatch(blob.headers()['content-type'], /svg|html|xml/);
    assertNothingRan('reports');
  });

  test('rooms, with their edit forms open', async () => {
    const page = owner.page;
    // A room named only by reports is titled by its (hostile) artifact id.
    await openSafely(page, '/rooms', { expectText: [SHORT, `Agent room ${SCRIPT}`.slice(0, 60)] });
    for (const summary of await page.locator('details summary').all()) await summary.click();
    assert.deepEqual(await unsafeMarkup(page), [], 'rooms with edit forms open');
    // Saving it stores the hostile title and meta as they are, still text.
    const row = () => page.locator('tr').filter({ has: page.getByRole('link', { name: SHORT, exact: true }) });
    await row().getByLabel('Meta').fill(`goal: ${ALL}\nurl: ${HOSTILE_HTTP}`);
    await row().getByRole('button', { name: 'Save' }).click();
    await page.waitForURL(/\/rooms/);
    await openSafely(page, '/rooms?archived=1', { expectText: [SHORT] });
    for (const summary of await page.locator('details summary').all()) await summary.click();
    assert.equal(await row().getByLabel('Meta').inputValue(), `goal: ${ALL}\nurl: ${HOSTILE_HTTP}`);
    assert.deepEqual(await unsafeMarkup(page), [], 'a saved hostile room');
    // The room's reports, through its link.
    await row().getByRole('link', { name: SHORT, exact: true }).click();
    await page.waitForURL(/room=/);
    assert.deepEqual(await unsafeMarkup(page), [], 'the inbox filtered by the hostile room');
    assert.equal(await page.locator('.list .item').count(), 1);
    assertNothingRan('rooms');
  });

  test('keys and members, with their confirmations open', async () => {
    const page = owner.page;
    // A key named by a hostile agent (minted above), its introduce label, and a hostile person
    // who joined the organization.
    svc.createUser({ email: 'hostile@example.com', password: PASSWORD, name: SHORT, role: 'member' });
    await openSafely(page, `/projects/${svc.projectId}/keys`, { expectText: [SHORT, `Agent: ${SHORT}`] });
    for (const summary of await page.locator('details summary').all()) await summary.click();
    assert.deepEqual(await unsafeMarkup(page), [], 'keys with revoke confirmations open');
    await openSafely(page, '/members', { expectText: [SHORT] });
    for (const summary of await page.locator('details summary').all()) await summary.click();
    assert.deepEqual(await unsafeMarkup(page), [], 'members with remove confirmations open');
    await openSafely(page, `/invite?token=${encodeURIComponent(SHORT)}`);
    assertNothingRan('keys and members');
  });

  test('filters and links carrying payloads in the address are shown as text', async () => {
    const page = owner.page;
    const q = encodeURIComponent(SHORT);
    for (const path of [
      `/?room=${q}&channel=${q}&status=${q}&project=${q}`,
      `/?r=${q}`,
      `/?r=${encodeURIComponent(JS_URL)}`,
      `/reports/${q}`,
      `/rooms?archived=${q}`,
      `/export?format=${q}`,
    ]) await openSafely(page, path);
    // Signed out: the sign-in form keeps `next` as a value and never follows it off the site.
    const context = await chrome.browser.newContext();
    const anonymous = await context.newPage();
    const anonymousSeen = watch(anonymous);
    for (const next of [SHORT, JS_URL, 'https://evil.example/']) {
      await anonymous.goto(`${svc.url}/sign-in?next=${encodeURIComponent(next)}`);
      assert.deepEqual(await unsafeMarkup(anonymous), [], `sign-in with next=${next}`);
    }
    await signIn(anonymous, svc.url, 'owner@example.com', PASSWORD);
    assert.equal(anonymous.url(), svc.url + '/', 'a foreign next leads to the inbox');
    assert.deepEqual([anonymousSeen.dialogs, anonymousSeen.errors], [[], []]);
    await context.close();
    assertNothingRan('addresses');
  });

  test('exports and Markdown are downloads, never pages', async () => {
    const page = owner.page;
    for (const [path, type] of [
      ['/export?format=csv', /^text\/csv/],
      ['/export?format=jsonl', /^application\/x-ndjson/],
      ...reports.map((id) => [`/reports/${id}/markdown`, /^text\/markdown/]),
    ]) {
      const response = await page.request.get(svc.url + path);
      assert.equal(response.status(), 200, path);
      assert.match(response.headers()['content-type'], type, path);
      assert.match(response.headers()['content-disposition'], /^attachment/, path);
      assert.equal(response.headers()['x-content-type-options'], 'nosniff', path);
    }
    const csv = await (await page.request.get(svc.url + '/export?format=csv')).text();
    assert.ok(csv.includes('Everything hostile'), 'the CSV has the reports');
    const lines = (await (await page.request.get(svc.url + '/export?format=jsonl')).text()).trim().split('\n');
    assert.equal(lines.length, reports.length);
    for (const line of lines) JSON.parse(line);
    // Following the inbox's export links downloads the file; the inbox stays.
    await page.goto(svc.url + '/');
    for (const name of ['Export CSV', 'Export JSON lines']) {
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name }).click()]);
      assert.match(download.suggestedFilename(), /^reports\.(csv|jsonl)$/);
    }
    assert.equal(new URL(page.url()).pathname, '/');
    assertNothingRan('exports');
  });

  test('a hostile report arriving in an open inbox (live update) stays text', async () => {
    const page = owner.page;
    await page.goto(svc.url + '/');
    await page.locator('.live.on').waitFor({ state: 'attached' });
    const id = await ingest(svc).report({ blocks: [{ type: 'text', text: `Live hostile ${ALL}` }], context: { url: JS_URL } });
    reports.push(id);
    await page.locator(`.list .item[data-id="${id}"]`).waitFor();
    assert.deepEqual(await unsafeMarkup(page), [], 'the refreshed list');
    assert.ok((await page.locator('.list').innerText()).includes(`Live hostile ${SCRIPT}`));
    assertNothingRan('live update');
  });
});

describe('content security policy', () => {
  test('no violation was reported while the payloads were shown, and one made on purpose is', async () => {
    assert.deepEqual(cspViolations(svc), [], 'the server received no CSP report');
    // Prove that a violation would have been seen: inject an inline script on a marked page.
    const page = await owner.context.newPage();
    await page.goto(`${svc.url}/rooms?csp-canary=1`);
    await page.evaluate(() => {
      const script = document.createElement('script');
      script.textContent = "console.log('canary ran')";
      document.body.append(script);
    });
    await logged(svc, /content security policy violation.*csp-canary/i, 'the CSP report of the canary');
    const violations = cspViolations(svc);
    assert.equal(violations.length, 1, violations.join('\n'));
    await page.close();
    assertNothingRan('the end');
  });
});
