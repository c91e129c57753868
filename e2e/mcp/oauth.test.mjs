// OAuth on Svc's tool endpoint, driven by the official TypeScript MCP SDK
// (@modelcontextprotocol/sdk): StreamableHTTPClientTransport with an `authProvider` and nothing
// else, so the SDK discovers the authorization server from the 401, registers, sends the person to
// the consent page, and exchanges the code. The person is headless: `redirectToAuthorization`
// signs in as the test user, opens the consent page, submits its form with fetch (redirects not
// followed) and keeps the code from the redirect. Then, as the SDK expects of an application,
// the caught UnauthorizedError → transport.finishAuth(code) → a new transport.
// Run with `node --test` by e2e/mcp/run.sh, which sets the SVC_* variables (see test_oauth.py).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run e2e/mcp/run.sh`);
  return value;
};
const BASE = env('SVC_BASE_URL');
const MCP_URL = env('SVC_MCP_URL');
const PROJECT_ID = env('SVC_PROJECT_ID');
const OTHER_PROJECT_ID = env('SVC_OTHER_PROJECT_ID');
const ORG_ID = env('SVC_ORG_ID');
const USER_EMAIL = env('SVC_USER_EMAIL');
const USER_PASSWORD = env('SVC_USER_PASSWORD');
const REPORT_ID = env('SVC_REPORT_ID');
const FOREIGN_REPORT_ID = env('SVC_FOREIGN_REPORT_ID');

const TOOL_NAMES = ['introduce', 'list_reports', 'get_report', 'create_report', 'create_room', 'set_status', 'add_comment'];
const SCOPES = ['feedback:read', 'feedback:write'];
// Nothing listens here: the code is read from the consent form's redirect.
const REDIRECT_URI = 'http://localhost:9998/callback';
const PRM_URL = `${BASE}/.well-known/oauth-protected-resource/mcp`;
// What a read-only key gets from a write tool today (crates/svc-server/src/mcp/error.rs).
const MISSING_WRITE = { code: -32003, message: 'forbidden: this key lacks feedback:write' };

// ---------------------------------------------------------------------------------------------
// A little HTML reading (the consent page, the Keys tab, Members)

const decode = (text) =>
  text
    .replace(/&#x([0-9a-f]+);/gi, (_, hex) => String.fromCodePoint(parseInt(hex, 16)))
    .replace(/&#([0-9]+);/g, (_, dec) => String.fromCodePoint(Number(dec)))
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
const textOfHtml = (html) => decode(html.replace(/<[^>]*>/g, ' ')).replace(/\s+/g, ' ').trim();
const attrsOf = (tag) => {
  const attrs = {};
  for (const m of tag.matchAll(/([\w:-]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+)))?/g)) {
    attrs[m[1].toLowerCase()] = decode(m[2] ?? m[3] ?? m[4] ?? '');
  }
  return attrs;
};
const tagsOf = (html, name) => [...html.matchAll(new RegExp(`<${name}\\b([^>]*)>`, 'gi'))].map((m) => attrsOf(m[1]));

function readConsentPage(html) {
  const headings = [...html.matchAll(/<h1\b[^>]*>([\s\S]*?)<\/h1>/gi)].map((m) => textOfHtml(m[1]));
  assert.equal(headings.length, 1, `one <h1>: ${headings}`);
  const forms = [...html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/gi)].filter((m) => attrsOf(m[1]).action === '/authorize');
  assert.equal(forms.length, 1, 'one form posting to /authorize');
  assert.equal(attrsOf(forms[0][1]).method?.toLowerCase(), 'post');
  const form = forms[0][2];
  const inputs = tagsOf(form, 'input');
  const hidden = (name) => {
    const found = inputs.filter((i) => i.name === name && i.type === 'hidden').map((i) => i.value);
    assert.equal(found.length, 1, `one hidden ${name}`);
    assert.ok(found[0], `the hidden ${name} has a value`);
    return found[0];
  };
  const radios = (name) => inputs.filter((i) => i.name === name && i.type === 'radio').map((i) => i.value);
  const decisions = {};
  for (const m of form.matchAll(/<button\b([^>]*)>([\s\S]*?)<\/button>/gi)) {
    const attrs = attrsOf(m[1]);
    if (attrs.name === 'decision') decisions[attrs.value] = textOfHtml(m[2]);
  }
  return {
    heading: headings[0],
    text: textOfHtml(html),
    csrf: hidden('_csrf'),
    request: hidden('request'),
    grants: radios('grant'),
    accesses: radios('access'),
    decisions,
  };
}

/** The rows of the key tables (dashboard/key_table.html) with each row's revoke form, if any. */
function readKeyRows(html) {
  const rows = [];
  for (const m of html.matchAll(/<tr\b([^>]*)>([\s\S]*?)<\/tr>/gi)) {
    const attrs = attrsOf(m[1]);
    if (!attrs['data-key-id']) continue;
    const body = m[2];
    const name = body.match(/<[a-z]+\b[^>]*class="[^"]*\bkey-name\b[^"]*"[^>]*>([\s\S]*?)<\/[a-z]+>/i);
    assert.ok(name, `a key row names its key: ${textOfHtml(body)}`);
    const scopes = body.match(/<ul\b[^>]*class="[^"]*\bscopes\b[^"]*"[^>]*>([\s\S]*?)<\/ul>/i);
    const form = body.match(/<form\b([^>]*)>([\s\S]*?)<\/form>/i);
    rows.push({
      id: attrs['data-key-id'],
      name: textOfHtml(name[1]),
      active: (attrs.class ?? '').split(/\s+/).includes('key-active'),
      scopes: scopes ? [...scopes[1].matchAll(/<li\b[^>]*>([\s\S]*?)<\/li>/gi)].map((li) => textOfHtml(li[1])) : [],
      revoke: form
        ? { action: attrsOf(form[1]).action, csrf: tagsOf(form[2], 'input').find((i) => i.name === '_csrf')?.value }
        : null,
    });
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------
// The signed-in test user (a headless browser: one cookie, redirects not followed)

class Person {
  cookie = null;
  signIns = 0;

  async signIn(next) {
    const form = new URLSearchParams({ email: USER_EMAIL, password: USER_PASSWORD });
    if (next !== undefined) form.set('next', next);
    const response = await fetch(`${BASE}/sign-in`, { method: 'POST', body: form, headers: { Origin: BASE }, redirect: 'manual' });
    assert.equal(response.status, 303, await response.text());
    const session = response.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .find((c) => ['svc_session', '__Host-svc_session'].includes(c.split('=')[0]));
    assert.ok(session, 'sign-in sets the session cookie');
    this.cookie = session;
    this.signIns += 1;
    return response.headers.get('location');
  }

  get(url) {
    return fetch(new URL(url, BASE), { headers: this.cookie ? { Cookie: this.cookie } : {}, redirect: 'manual' });
  }

  postForm(url, form) {
    return fetch(new URL(url, BASE), {
      method: 'POST',
      body: new URLSearchParams(form),
      headers: { Cookie: this.cookie ?? '', Origin: BASE },
      redirect: 'manual',
    });
  }

  /** Opens an authorization URL like a browser, signing in first (and coming back) if need be. */
  async openConsent(authorizationUrl) {
    let url = new URL(authorizationUrl);
    assert.equal(`${url.origin}${url.pathname}`, `${BASE}/authorize`);
    if (this.cookie === null) {
      const response = await this.get(url);
      assert.equal(response.status, 303, 'not signed in: to the sign-in page');
      const signIn = new URL(response.headers.get('location'), BASE);
      assert.equal(signIn.pathname, '/sign-in');
      const next = signIn.searchParams.get('next');
      const nextUrl = new URL(next, BASE);
      assert.equal(nextUrl.pathname, '/authorize');
      assert.deepEqual(
        [...nextUrl.searchParams].sort(),
        [...url.searchParams].sort(),
        'the sign-in page brings the person back to the same request',
      );
      const back = await this.signIn(next);
      assert.equal(back, next, 'and signing in goes back to it');
      url = new URL(back, BASE);
    }
    const response = await this.get(url);
    const html = await response.text();
    assert.equal(response.status, 200, `the consent page: ${response.status} ${response.headers.get('location')} ${html.slice(0, 300)}`);
    assert.match(response.headers.get('content-type') ?? '', /^text\/html/);
    return readConsentPage(html);
  }

  /** Submits the consent form; answers the redirect's Location. */
  async decide(page, grant, access, decision = 'approve') {
    assert.ok(page.grants.includes(grant), `${grant} is offered: ${page.grants}`);
    assert.ok(page.accesses.includes(access), `${access} is offered: ${page.accesses}`);
    const response = await this.postForm('/authorize', { _csrf: page.csrf, request: page.request, grant, access, decision });
    assert.equal(response.status, 303, await response.text());
    return response.headers.get('location');
  }

  async keyRows(page) {
    const response = await this.get(page);
    assert.equal(response.status, 200, page);
    return readKeyRows(await response.text());
  }
}

const PERSON = new Person();

// ---------------------------------------------------------------------------------------------
// The SDK's OAuthClientProvider, in memory

class Agent {
  constructor(clientName, grant, access) {
    this.clientName = clientName;
    this.grant = grant;
    this.access = access;
    this.consents = 0;
    this.traffic = [];
    this.tokenHistory = [];
    this.pendingCode = null;
    this._client = undefined;
    this._tokens = undefined;
    this._verifier = undefined;
    this._state = undefined;
    // Every request the SDK makes, the OAuth ones included (transport and auth() use it).
    this.fetch = async (url, init) => {
      const response = await fetch(url, init);
      this.traffic.push(`${init?.method ?? 'GET'} ${new URL(String(url)).pathname} ${response.status}`);
      return response;
    };
  }

  // --- OAuthClientProvider
  get redirectUrl() {
    return REDIRECT_URI;
  }
  get clientMetadata() {
    return {
      client_name: this.clientName,
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  state() {
    this._state = randomBytes(16).toString('hex');
    return this._state;
  }
  clientInformation() {
    return this._client;
  }
  saveClientInformation(info) {
    this._client = info;
  }
  tokens() {
    return this._tokens;
  }
  saveTokens(tokens) {
    this._tokens = tokens;
    this.tokenHistory.push(tokens);
  }
  saveCodeVerifier(verifier) {
    this._verifier = verifier;
  }
  codeVerifier() {
    assert.ok(this._verifier, 'a code verifier was saved');
    return this._verifier;
  }
  async redirectToAuthorization(authorizationUrl) {
    const params = authorizationUrl.searchParams;
    assert.equal(params.get('code_challenge_method'), 'S256');
    assert.equal(params.get('resource'), MCP_URL);
    assert.equal(params.get('redirect_uri'), REDIRECT_URI);
    const page = await PERSON.openConsent(authorizationUrl);
    assert.ok(page.heading.includes(`Connect ${this.clientName}`), page.heading);
    assert.ok(page.text.includes('localhost'), 'the consent page names the redirect host');
    for (const grant of [`project:${PROJECT_ID}`, `project:${OTHER_PROJECT_ID}`, `org:${ORG_ID}`]) {
      assert.ok(page.grants.includes(grant), `${grant} offered: ${page.grants}`);
    }
    assert.deepEqual([...page.accesses].sort(), ['read', 'triage']);
    assert.deepEqual(page.decisions, { approve: 'Allow', deny: 'Deny' });
    const location = new URL(await PERSON.decide(page, this.grant, this.access));
    assert.equal(`${location.origin}${location.pathname}`, REDIRECT_URI);
    assert.equal(location.searchParams.get('error'), null, location.href);
    assert.equal(location.searchParams.get('state'), this._state, 'state comes back');
    assert.equal(location.searchParams.get('iss'), BASE, 'iss (RFC 9207) is the issuer');
    this.pendingCode = location.searchParams.get('code');
    assert.ok(this.pendingCode, 'a code');
    this.consents += 1;
  }

  // --- the application's side
  takeCode() {
    const code = this.pendingCode;
    assert.ok(code, 'the consent produced a code');
    this.pendingCode = null;
    return code;
  }
  get accessToken() {
    assert.ok(this._tokens?.access_token, 'the agent holds a token');
    return this._tokens.access_token;
  }
  transport() {
    return new StreamableHTTPClientTransport(new URL(MCP_URL), { authProvider: this, fetch: this.fetch });
  }
  /** Connects; when the SDK needs the person, completes the authorization and connects again. */
  async connect() {
    const first = new Client({ name: 'svc-e2e-node-oauth', version: '1.0.0' });
    const transport = this.transport();
    try {
      await first.connect(transport);
      return first;
    } catch (error) {
      if (!(error instanceof UnauthorizedError)) throw error;
      await transport.finishAuth(this.takeCode());
    }
    const client = new Client({ name: 'svc-e2e-node-oauth', version: '1.0.0' });
    await client.connect(this.transport());
    return client;
  }
}

const textOf = (result) => {
  assert.ok(result.content.length > 0, 'content is not empty');
  assert.equal(result.content[0].type, 'text');
  return result.content[0].text;
};
const okJson = (result) => {
  assert.notEqual(result.isError, true, `tool failed: ${result.content?.[0]?.text}`);
  return JSON.parse(textOf(result));
};

async function rawMcp(token, message) {
  const response = await fetch(MCP_URL, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify(message),
    redirect: 'manual',
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null };
}

function assertUnauthorized(answer) {
  assert.equal(answer.status, 401);
  const challenge = answer.headers.get('www-authenticate') ?? '';
  assert.ok(challenge.startsWith('Bearer ') && challenge.includes(`resource_metadata="${PRM_URL}"`), challenge);
}

/** The first connection went 401 → PRM (from the challenge) → AS metadata → register → token. */
function assertDiscoveredAndRegistered(agent) {
  const first401 = agent.traffic.indexOf('POST /mcp 401');
  assert.ok(first401 >= 0, agent.traffic.join('\n'));
  const after = agent.traffic.slice(first401 + 1);
  for (const step of [
    'GET /.well-known/oauth-protected-resource/mcp 200',
    'GET /.well-known/oauth-authorization-server 200',
    'POST /register 201',
    'POST /token 200',
  ]) {
    assert.ok(after.includes(step), `${step} in\n${agent.traffic.join('\n')}`);
  }
  assert.equal(agent.traffic.filter((t) => t.startsWith('POST /register')).length, 1, 'registered once');
  assert.equal(agent.consents, 1);
}

async function withAgent(agent, body) {
  const client = await agent.connect();
  try {
    return await body(client);
  } finally {
    await client.close();
  }
}

before(async () => {
  const response = await fetch(`${BASE}/healthz`);
  assert.equal(response.status, 200, 'the server is up');
});

test('one project, read-only: discover, register, consent, exchange, list and read; writes refused', async () => {
  // The other project this time: the grant binds the key to the project the person chose.
  const agent = new Agent('Node SDK e2e (read)', `project:${OTHER_PROJECT_ID}`, 'read');
  let statusBefore;
  await withAgent(agent, async (client) => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), TOOL_NAMES);
    const items = okJson(await client.callTool({ name: 'list_reports', arguments: { limit: 200 } }));
    const ids = items.map((i) => i.id);
    assert.ok(ids.includes(FOREIGN_REPORT_ID), 'the chosen project is in reach');
    assert.ok(!ids.includes(REPORT_ID), 'the other one is not');
    statusBefore = items.find((i) => i.id === FOREIGN_REPORT_ID).status;
    const report = await client.callTool({ name: 'get_report', arguments: { id: FOREIGN_REPORT_ID } });
    assert.notEqual(report.isError, true);
    assert.match(textOf(report), /A report of another project/);
    // A write tool: HTTP 403 with the JSON-RPC error, which TS 1.32 surfaces as a transport error.
    await assert.rejects(
      client.callTool({ name: 'set_status', arguments: { id: FOREIGN_REPORT_ID, status: 'fixed' } }),
      (e) => e instanceof StreamableHTTPError && e.code === 403 && e.message.includes(MISSING_WRITE.message),
    );
  });
  assertDiscoveredAndRegistered(agent);
  const tokens = agent.tokens();
  assert.match(tokens.access_token, /^pr_sk_/);
  assert.equal(tokens.token_type.toLowerCase(), 'bearer');
  assert.equal(tokens.scope, 'feedback:read');
  assert.equal(tokens.refresh_token, undefined, 'no refresh token: revoking the key is disconnecting');
  // On the wire: 403, the JSON-RPC error, no challenge (a challenge would start a step-up).
  const answer = await rawMcp(agent.accessToken, {
    jsonrpc: '2.0',
    id: 'w',
    method: 'tools/call',
    params: { name: 'add_comment', arguments: { report_id: FOREIGN_REPORT_ID, text: 'nope' } },
  });
  assert.equal(answer.status, 403);
  assert.deepEqual(answer.body, { jsonrpc: '2.0', id: 'w', error: MISSING_WRITE });
  assert.equal(answer.headers.get('www-authenticate'), null);
  // Listed on the chosen project's Keys tab, with exactly the chosen scope; not on the other's.
  const rows = (await PERSON.keyRows(`/projects/${OTHER_PROJECT_ID}/keys`)).filter((r) => r.name === 'OAuth: Node SDK e2e (read)');
  assert.equal(rows.length, 1);
  assert.equal(rows[0].active, true);
  assert.deepEqual(rows[0].scopes, ['feedback:read']);
  const elsewhere = (await PERSON.keyRows(`/projects/${PROJECT_ID}/keys`)).filter((r) => r.name === 'OAuth: Node SDK e2e (read)');
  assert.deepEqual(elsewhere, []);
  // Nothing changed, and a second connection reuses the token without the person.
  await withAgent(agent, async (client) => {
    const items = okJson(await client.callTool({ name: 'list_reports', arguments: { limit: 200 } }));
    assert.equal(items.find((i) => i.id === FOREIGN_REPORT_ID).status, statusBefore);
  });
  assert.equal(agent.consents, 1);
});

test('an organization with triage: every project of it, and triage tools work', async () => {
  const agent = new Agent('Node SDK e2e (org)', `org:${ORG_ID}`, 'triage');
  await withAgent(agent, async (client) => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), TOOL_NAMES);
    const items = okJson(await client.callTool({ name: 'list_reports', arguments: { limit: 200 } }));
    const mine = items.find((i) => i.id === REPORT_ID);
    const other = items.find((i) => i.id === FOREIGN_REPORT_ID);
    assert.equal(mine?.project, 'Default');
    assert.equal(mine?.projectId, PROJECT_ID);
    assert.equal(other?.project, 'Other shop');
    assert.equal(other?.projectId, OTHER_PROJECT_ID);
    for (const [id, status] of [[FOREIGN_REPORT_ID, 'in-progress'], [REPORT_ID, 'triaged']]) {
      assert.deepEqual(okJson(await client.callTool({ name: 'set_status', arguments: { id, status } })), { id, status });
    }
    const comment = okJson(await client.callTool({
      name: 'add_comment',
      arguments: { report_id: REPORT_ID, text: 'Looking', draft: false, kind: 'question' },
    }));
    assert.equal(comment.draft, false);
  });
  assertDiscoveredAndRegistered(agent);
  assert.deepEqual(agent.tokens().scope.split(' ').sort(), SCOPES);
  // Org-wide keys work on the tool endpoint only: the REST API refuses them.
  for (const project of [PROJECT_ID, OTHER_PROJECT_ID]) {
    const response = await fetch(`${BASE}/api/v1/projects/${project}/feedback`, { headers: { Authorization: `Bearer ${agent.accessToken}` } });
    assert.equal(response.status, 403, project);
  }
  const rows = (await PERSON.keyRows('/members')).filter((r) => r.name === 'OAuth: Node SDK e2e (org)');
  assert.equal(rows.length, 1);
  assert.equal(rows[0].active, true);
  assert.deepEqual([...rows[0].scopes].sort(), SCOPES);
});

test('revoked in the dashboard: the next call fails, re-authorizing mints a fresh key', async () => {
  const name = 'Node SDK e2e (revoke)';
  const agent = new Agent(name, `org:${ORG_ID}`, 'triage');
  const client = await agent.connect();
  let firstToken;
  let firstKey;
  try {
    okJson(await client.callTool({ name: 'list_reports', arguments: {} }));
    firstToken = agent.accessToken;
    const rows = (await PERSON.keyRows('/members')).filter((r) => r.name === `OAuth: ${name}` && r.active);
    assert.equal(rows.length, 1);
    firstKey = rows[0];
    assert.ok(firstKey.revoke?.action && firstKey.revoke.csrf, 'an owner gets a revoke form');

    // The owner revokes it on Members.
    const revoked = await PERSON.postForm(firstKey.revoke.action, { _csrf: firstKey.revoke.csrf });
    assert.equal(revoked.status, 303);
    assertUnauthorized(await rawMcp(firstToken, { jsonrpc: '2.0', id: 1, method: 'tools/list' }));

    // The next call through the SDK fails: the 401 sends the person to consent again (there is
    // no refresh token to fall back on) and the call rejects with UnauthorizedError.
    agent.traffic.length = 0;
    await assert.rejects(client.callTool({ name: 'list_reports', arguments: {} }), (e) => e instanceof UnauthorizedError);
    assert.ok(agent.traffic.includes('POST /mcp 401'), agent.traffic.join('\n'));
    assert.ok(!agent.traffic.some((t) => t.startsWith('POST /token')), 'no silent refresh');
    assert.ok(!agent.traffic.some((t) => t.startsWith('POST /register')), 'the registration is reused');
    assert.equal(agent.consents, 2);
  } finally {
    await client.close();
  }

  // The application completes the new authorization and reconnects on a new transport.
  const transport = agent.transport();
  await transport.finishAuth(agent.takeCode());
  const secondToken = agent.accessToken;
  assert.notEqual(secondToken, firstToken, 'a fresh key');
  await withAgent(agent, async (again) => {
    const items = okJson(await again.callTool({ name: 'list_reports', arguments: { limit: 200 } }));
    assert.ok(items.some((i) => i.id === FOREIGN_REPORT_ID));
    const changed = okJson(await again.callTool({ name: 'set_status', arguments: { id: FOREIGN_REPORT_ID, status: 'triaged' } }));
    assert.equal(changed.status, 'triaged');
  });
  assert.equal(agent.consents, 2);
  assertUnauthorized(await rawMcp(firstToken, { jsonrpc: '2.0', id: 2, method: 'tools/list' }));
  const rows = (await PERSON.keyRows('/members')).filter((r) => r.name === `OAuth: ${name}`);
  assert.equal(rows.find((r) => r.id === firstKey.id)?.active, false, 'the old key is listed as revoked');
  const active = rows.filter((r) => r.active);
  assert.equal(active.length, 1);
  assert.notEqual(active[0].id, firstKey.id);
});
