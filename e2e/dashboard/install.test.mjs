// Browser tests of a project's install and widget tabs: an owner copies the embed snippet into a
// page of another origin and files a report there through the widget; sees where the widget was
// last seen; changes the mascot and the anchor, watches the live preview follow, saves, and sees the
// embedded widget follow; mints a setup token and runs the agent self-setup flow with it. And
// /demo shows its launcher even when the project's urlPatterns (README quickstart step 2) do not
// match it, saying so.

import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ROOT, cspViolations, launchChromium, ownerPage, rest, startSvc, unsafeMarkup, until, watch } from './lib.mjs';

let svc;
let chrome;
let owner; // {context, page}
let site; // the other origin: {url, setSnippet(html), close()}

/** A tiny site on another origin (another port) whose pages embed whatever snippet it is given. */
async function startSite() {
  let snippet = '';
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Acme shop</title></head>
<body><h1>Checkout</h1><p>Total: <span id="total">$0.00</span></p>
${snippet}
</body></html>`);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    setSnippet: (html) => (snippet = html),
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

before(async () => {
  svc = await startSvc();
  chrome = await launchChromium();
  owner = await ownerPage(svc, chrome, { viewport: { width: 1280, height: 900 } });
  await owner.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: svc.url });
  site = await startSite();
});

after(async () => {
  await site?.close();
  await chrome?.close();
  await svc?.stop();
});

const distMascot = (name) => readFileSync(join(ROOT, 'widget', 'dist', 'mascots', name + '.svg'), 'utf8').trim();

/**
 * What the launcher inside the widget host `hostSelector` shows: its box in the viewport and a
 * signature of its mascot's drawing; `mascotSignature` makes the same signature of an SVG text.
 */
const launcher = (page, hostSelector) =>
  page.evaluate((selector) => {
    const host = document.querySelector(selector);
    const button = host?.shadowRoot?.querySelector('.launcher');
    if (!button || button.classList.contains('off')) return null;
    const r = button.getBoundingClientRect();
    const svg = button.querySelector('.m svg');
    const signature = svg ? [...svg.querySelectorAll('*')].map((e) => e.localName + ':' + (e.getAttribute('fill') || '')).join(' ') : '';
    return { left: r.left, top: r.top, right: innerWidth - r.right, bottom: innerHeight - r.bottom, cy: r.top + r.height / 2, height: innerHeight, signature };
  }, hostSelector);
const mascotSignature = (page, svgText) =>
  page.evaluate((text) => {
    const svg = new DOMParser().parseFromString(text, 'image/svg+xml').documentElement;
    return [...svg.querySelectorAll('*')].map((e) => e.localName + ':' + (e.getAttribute('fill') || '')).join(' ');
  }, svgText);

describe('a new project', () => {
  test('a person creates a project, embeds its snippet on another origin and files a report into it', async () => {
    const { page } = owner;
    const seen = watch(page);
    await page.goto(`${svc.url}/projects`);
    await page.getByLabel('Name').fill('Acme storefront');
    await page.getByRole('button', { name: 'Create project' }).click();
    await page.waitForURL(/\/projects\/[0-9a-f]{24}\/install$/);
    const projectId = /\/projects\/([0-9a-f]{24})\/install$/.exec(page.url())[1];
    assert.notEqual(projectId, svc.projectId, 'a project of its own');
    await page.getByRole('heading', { name: 'Acme storefront' }).waitFor();
    const snippet = (await page.locator('#snippet-loader').textContent()).trim();
    const key = /\/v1\/svc\/(pr_[A-Za-z0-9]+)\.js/.exec(snippet)?.[1];
    assert.ok(key && key !== svc.projectKey, `the snippet carries the new project's own public key: ${snippet}`);

    site.setSnippet(snippet);
    const visitor = await chrome.browser.newContext();
    const shop = await visitor.newPage();
    await shop.goto(`${site.url}/storefront`);
    await shop.locator('[data-svc-widget] >> .launcher').click();
    await shop.locator('[data-svc-widget] >> #svc-msg').fill('Filed into the brand-new project');
    await shop.locator('[data-svc-widget] >> button.primary').click();
    await until(async () => /Sent/.test(await shop.locator('[data-svc-widget] >> .status').textContent()), 15000, 'the report to be sent');
    await visitor.close();

    // The inbox, narrowed to the new project, has it; the bootstrap project does not.
    await page.goto(`${svc.url}/?project=${projectId}`);
    await page.locator('.list .item', { hasText: 'Filed into the brand-new project' }).waitFor();
    await page.goto(`${svc.url}/?project=${svc.projectId}`);
    assert.equal(await page.locator('.list .item', { hasText: 'Filed into the brand-new project' }).count(), 0);
    assert.deepEqual(seen.errors, []);
  });
});

describe('install and widget tabs', () => {
  let snippet;
  let pageUrl;

  test('the owner copies the snippet, embeds it on another origin and files a report there', async () => {
    const { page } = owner;
    const seen = watch(page);
    await page.goto(`${svc.url}/projects/${svc.projectId}/install`);
    await page.getByText('Not seen yet.').waitFor();
    await page.getByRole('button', { name: 'Copy the per-project loader snippet' }).click();
    snippet = await page.evaluate(() => navigator.clipboard.readText());
    assert.equal(snippet, await page.locator('#snippet-loader').textContent(), 'the copy button copies the snippet shown');
    assert.equal(snippet, `<script src="${svc.url}/v1/svc/${svc.projectKey}.js"></script>`);
    assert.deepEqual(seen.console.filter((m) => m.startsWith('error')), []);

    site.setSnippet(snippet);
    pageUrl = `${site.url}/shop/checkout?step=2`;
    const visitor = await chrome.browser.newContext();
    const shop = await visitor.newPage();
    await shop.goto(pageUrl);
    const button = shop.locator('[data-svc-widget] >> .launcher');
    await button.click();
    await shop.locator('[data-svc-widget] >> #svc-msg').fill('The total stays at zero on another origin');
    await shop.locator('[data-svc-widget] >> button.primary').click();
    await until(async () => /Sent/.test(await shop.locator('[data-svc-widget] >> .status').textContent()), 15000, 'the report to be sent');
    await visitor.close();

    const api = rest(svc.url, svc.token);
    const list = await api.get(`/api/v1/projects/${svc.projectId}/feedback?limit=5`);
    const report = list.items.find((r) => r.blocks.some((b) => b.text === 'The total stays at zero on another origin'));
    assert.ok(report, 'the report is in the project');
    assert.equal(report.context.url, pageUrl);
    await page.goto(svc.url + '/');
    await page.locator('.list .item', { hasText: 'The total stays at zero on another origin' }).waitFor();

    // The install tab says where the widget was seen: the page the report came from.
    await page.goto(`${svc.url}/projects/${svc.projectId}/install`);
    const where = page.getByTestId('widget-seen');
    await where.locator('.seen-url', { hasText: pageUrl }).waitFor();
    assert.match(await where.textContent(), /a report was filed/);
  });

  test('the mascot and the anchor: the preview follows, then the embedded widget', async () => {
    const { page } = owner;
    const seen = watch(page);
    await page.goto(`${svc.url}/projects/${svc.projectId}/widget`);
    // The preview is the real widget, drawn with the stored settings (the defaults: fox, middle-right).
    await until(() => launcher(page, '#svc-preview').then((l) => l && l.signature), 10000, 'the preview launcher');
    let preview = await launcher(page, '#svc-preview');
    assert.equal(preview.signature, await mascotSignature(page, distMascot('fox')));
    assert.ok(preview.right < 40 && Math.abs(preview.cy - preview.height / 2) < 30, `middle-right: ${JSON.stringify(preview)}`);

    await page.getByLabel('Mascot').selectOption('owl');
    await page.getByLabel('Anchor').selectOption('top-left');
    const owl = await mascotSignature(page, distMascot('owl'));
    await until(async () => {
      const now = await launcher(page, '#svc-preview');
      return now && now.signature === owl && now.left < 40 && now.top < 40;
    }, 10000, 'the preview to show the owl at the top left');
    assert.deepEqual(seen.console.filter((m) => m.startsWith('error')), [], 'no errors while previewing');
    // The preview cannot file a report, and says so when one is tried (the browser logs the 403).
    await page.locator('#svc-preview >> .launcher').click();
    await page.locator('#svc-preview >> #svc-msg').fill('from the preview');
    await page.locator('#svc-preview >> button.primary').click();
    await until(async () => /preview_only/.test(await page.locator('#svc-preview >> .status').textContent()), 10000, 'the refusal');
    await page.keyboard.press('Escape');

    await page.getByRole('button', { name: 'Save' }).click();
    await page.locator('p.notice', { hasText: 'Saved.' }).waitFor();
    assert.equal(await page.getByLabel('Mascot').inputValue(), 'owl');
    assert.equal(await page.getByLabel('Anchor').inputValue(), 'top-left');
    assert.deepEqual(seen.console.filter((m) => m.startsWith('error') && !/status of 403/.test(m)), [], 'no other errors');
    const api = rest(svc.url, svc.token);
    const project = await api.get(`/api/v1/projects/${svc.projectId}`);
    assert.equal(project.widgetConfig.mascot, 'owl');
    assert.equal(project.widgetConfig.anchor, 'top-left');
    const filed = await api.get(`/api/v1/projects/${svc.projectId}/feedback?limit=20`);
    assert.ok(!filed.items.some((r) => r.blocks.some((b) => b.text === 'from the preview')), 'nothing filed from the preview');

    // A visitor opens the other-origin page again (the loader is cached a minute per browser, so a
    // new browser): the embedded widget follows.
    const visitor = await chrome.browser.newContext();
    const shop = await visitor.newPage();
    await shop.goto(pageUrl);
    await until(() => launcher(shop, '[data-svc-widget]').then((l) => l && l.signature), 10000, 'the embedded launcher');
    const embedded = await launcher(shop, '[data-svc-widget]');
    assert.equal(embedded.signature, await mascotSignature(shop, distMascot('owl')));
    assert.ok(embedded.left < 40 && embedded.top < 40, `top-left: ${JSON.stringify(embedded)}`);
    await visitor.close();
    assert.deepEqual(cspViolations(svc), [], 'no Content Security Policy report reached the server');
  });

  test('a setup token, shown once, runs the agent self-setup flow and ends revoked', async () => {
    const { page } = owner;
    await page.goto(`${svc.url}/projects/${svc.projectId}/install`);
    assert.equal(await page.getByLabel('Valid for').inputValue(), '3600', 'one hour by default');
    await page.getByRole('button', { name: 'Mint a setup token' }).click();
    const token = (await page.locator('#setup-token-value').textContent()).trim();
    const prompt = await page.locator('#agent-prompt').textContent();
    assert.match(token, /^pr_sk_/);
    assert.ok(prompt.includes(`SVC_SETUP_TOKEN=${token}`), prompt);
    await page.getByRole('button', { name: 'Copy the prompt for a coding agent' }).click();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), prompt);

    // What an agent does with the prompt: the base URL is in it, so is each step.
    const base = /Svc runs at (\S+)\.\n/.exec(prompt)[1];
    assert.equal(base, svc.url);
    const call = async (method, path, body, key = token) => {
      assert.ok(prompt.includes(path.split('?')[0].replace(/\/keys\/\w+$/, '/keys')), `the prompt names ${path}`);
      const r = await fetch(base + path, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      return { status: r.status, body: await r.json().catch(() => null) };
    };
    // 1. Who am I.
    const me = await call('GET', '/api/v1/me');
    assert.equal(me.status, 200);
    assert.deepEqual([me.body.projectId, me.body.projectKey, me.body.scopes], [svc.projectId, svc.projectKey, ['*']]);
    const P = `/api/v1/projects/${me.body.projectId}`;
    // 2. Where the widget runs and how it looks.
    const patched = await call('PATCH', P, { urlPatterns: [`${site.url}/*`], defaultChannelKey: 'bug', widgetConfig: { mascot: 'robot', anchor: 'bottom-left' } });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    // 3. A channel.
    const channel = await call('POST', `${P}/channels`, { key: 'checkout', name: 'Checkout', color: '#12a594', mascot: 'fox' });
    assert.equal(channel.status, 201, JSON.stringify(channel.body));
    // 4. The embed the prompt gives loads the project's widget.
    const embed = /<script src="([^"]+)"><\/script>/.exec(prompt)[1];
    assert.equal(embed, `${svc.url}/v1/svc/${me.body.projectKey}.js`);
    assert.ok((await (await fetch(embed)).text()).includes(me.body.projectKey));
    // 5. The operational key.
    const minted = await call('POST', `${P}/keys`, { name: 'coding agent', scopes: ['feedback:read', 'feedback:write'] });
    assert.equal(minted.status, 201, JSON.stringify(minted.body));
    const reports = await call('GET', `${P}/feedback?limit=1`, null, minted.body.key);
    assert.equal(reports.status, 200);
    // 6. The setup token revokes itself; from then on it is refused.
    const revoked = await call('DELETE', `${P}/keys/${me.body.keyId}`);
    assert.equal(revoked.status, 200, JSON.stringify(revoked.body));
    assert.equal((await call('GET', '/api/v1/me')).status, 401);

    // The token is never shown again: a reload of the answer opens the install tab, minting nothing.
    await page.reload();
    assert.equal(new URL(page.url()).pathname, `/projects/${svc.projectId}/install`);
    assert.equal(await page.locator('#setup-token-value').count(), 0);
    await page.goto(`${svc.url}/projects/${svc.projectId}/install`);
    assert.equal(await page.locator('#setup-token-value').count(), 0);
    assert.ok(!(await page.content()).includes(token));
  });
});

describe('hostile content', () => {
  test('a hostile page address and hostile URL patterns are shown as text', async () => {
    const { page } = owner;
    const seen = watch(page);
    const hostile = svc.createProject('Hostile');
    // A report naming a hostile page: the install tab shows it as where the widget was seen.
    const pageUrl = `https://evil.test/?q="><img src=x onerror=alert('XSS sighting')><script>console.log('XSS sighting')</script>`;
    const r = await fetch(svc.url + '/ingest/report', {
      method: 'POST',
      headers: { 'x-svc-project-key': hostile.projectKey, 'content-type': 'application/json' },
      body: JSON.stringify({ blocks: [{ type: 'text', text: 'hostile page' }], context: { url: pageUrl } }),
    });
    assert.equal(r.status, 200);
    await page.goto(`${svc.url}/projects/${hostile.projectId}/install`);
    const where = await page.locator('.seen-url').textContent();
    assert.equal(decodeURIComponent(where), decodeURIComponent(new URL(pageUrl).href), 'the address, as text');
    assert.deepEqual(await unsafeMarkup(page), [], 'install tab');

    // Hostile URL patterns (an agent with a setup token may set any string): the widget tab, its
    // tester and the preview show them as text.
    const patterns = [`<img src=x onerror="console.log('XSS pattern')">`, `https://x.test/"><script>console.log('XSS pattern')</script>*`];
    await rest(svc.url, hostile.setupToken).patch(`/api/v1/projects/${hostile.projectId}`, { urlPatterns: patterns });
    await page.goto(`${svc.url}/projects/${hostile.projectId}/widget`);
    assert.equal(await page.getByLabel('URL patterns').inputValue(), patterns.join('\n'));
    await page.getByLabel('Does this URL match?').fill(`https://x.test/"><script>console.log('XSS pattern')</script>/x`);
    await page.getByRole('button', { name: 'Test' }).click();
    const answer = await page.getByTestId('url-test').textContent();
    assert.match(answer, /Yes: the launcher shows on/);
    assert.ok(answer.includes(patterns[1]), answer);
    // The widget's own scripts (the preview) are the only ones besides the dashboard's.
    const widgetScript = /^script: <script src="(\/v1\/svc\.js|http:\/\/127\.0\.0\.1:\d+\/v1\/parts\/[\w.]+\.js)"/;
    assert.deepEqual((await unsafeMarkup(page)).filter((found) => !widgetScript.test(found)), [], 'widget tab');
    assert.deepEqual(seen.dialogs, []);
    assert.deepEqual(seen.console.filter((line) => /XSS|Content Security Policy|Refused to/i.test(line)), []);
    assert.deepEqual(cspViolations(svc), []);
  });
});

describe('/demo', () => {
  test('shows its launcher with the README quickstart urlPatterns, and says they would hide it', async () => {
    const api = rest(svc.url, svc.token);
    // README quickstart step 2, literally.
    await api.patch(`/api/v1/projects/${svc.projectId}`, {
      urlPatterns: ['http://localhost:3000/*'],
      defaultChannelKey: 'bug',
      widgetConfig: { mascot: 'owl', anchor: 'bottom-right' },
    });
    const context = await chrome.browser.newContext();
    const page = await context.newPage();
    await page.goto(svc.url + '/demo');
    await until(() => launcher(page, '[data-svc-widget]'), 10000, 'the launcher on /demo');
    const shown = await launcher(page, '[data-svc-widget]');
    assert.ok(shown.right < 40 && shown.bottom < 40, `bottom-right: ${JSON.stringify(shown)}`);
    const notice = page.getByTestId('url-patterns-notice');
    assert.match(await notice.textContent(), /http:\/\/localhost:3000\/\*[\s\S]*on your own pages the launcher would be hidden here/);
    // A console error travels with a report from the demo page, as on a page the patterns match.
    await page.getByTestId('log-error').click();
    await page.getByTestId('send-report').click();
    await until(async () => /reportId/.test(await page.getByTestId('output').textContent()), 10000, 'the demo report');
    const { reportId } = JSON.parse(await page.getByTestId('output').textContent());
    const report = await api.get(`/api/v1/projects/${svc.projectId}/feedback/${reportId}`);
    assert.deepEqual(report.context.consoleErrors, ['demo: something went wrong']);
    await context.close();
  });
});
