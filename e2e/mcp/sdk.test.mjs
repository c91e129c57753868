// Svc's tool endpoint driven by the official TypeScript MCP SDK (@modelcontextprotocol/sdk,
// StreamableHTTPClientTransport with the key in requestInit headers). Run with `node --test` by
// e2e/mcp/run.sh, which starts the server and sets the SVC_* variables (see test_sdk.py).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run e2e/mcp/run.sh`);
  return value;
};
const BASE = env('SVC_BASE_URL');
const MCP_URL = env('SVC_MCP_URL');
const PROJECT_ID = env('SVC_PROJECT_ID');
const KEY_RW = env('SVC_KEY_RW');
const KEY_RO = env('SVC_KEY_RO');
const KEY_ORG = env('SVC_KEY_ORG');
const REPORT_ID = env('SVC_REPORT_ID');
const FOREIGN_REPORT_ID = env('SVC_FOREIGN_REPORT_ID');
const OTHER_PROJECT_ID = env('SVC_OTHER_PROJECT_ID');

const TOOL_NAMES = ['introduce', 'list_reports', 'get_report', 'create_report', 'create_room', 'set_status', 'add_comment'];
const STATUSES = ['new', 'triaged', 'in-progress', 'fixed', 'verified', 'canceled'];
const PNG_1X1 = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);
const AGENT = 'Node SDK e2e';

/** Connects an SDK client with the key as a bearer token; the caller closes it. */
async function connect(key) {
  const transport = new StreamableHTTPClientTransport(new URL(MCP_URL), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  const client = new Client({ name: 'svc-e2e-node', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

async function withClient(key, body) {
  const { client } = await connect(key);
  try {
    return await body(client);
  } finally {
    await client.close();
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

async function rest(path, key) {
  const response = await fetch(`${BASE}${path}`, { headers: { Authorization: `Bearer ${key}` } });
  return { status: response.status, body: await response.json() };
}

async function rawMcp(key, message) {
  const response = await fetch(MCP_URL, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify(message),
    redirect: 'manual',
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, body: text ? JSON.parse(text) : null };
}

before(async () => {
  const response = await fetch(`${BASE}/healthz`);
  assert.equal(response.status, 200, 'the server is up');
});

test('connects, negotiates 2024-11-05 and pings', async () => {
  const { client, transport } = await connect(KEY_RW);
  try {
    assert.equal(transport.protocolVersion, '2024-11-05');
    assert.equal(client.getServerVersion()?.name, 'svc');
    assert.deepEqual(client.getServerCapabilities()?.tools, { listChanged: false });
    assert.deepEqual(await client.ping(), {});
  } finally {
    await client.close();
  }
});

test('lists the seven tools with schemas and annotations', () =>
  withClient(KEY_RW, async (client) => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), TOOL_NAMES);
    for (const tool of tools) {
      assert.equal(tool.inputSchema.type, 'object', tool.name);
      assert.equal(tool.annotations?.readOnlyHint, tool.name === 'list_reports' || tool.name === 'get_report', tool.name);
    }
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    assert.deepEqual(byName.set_status.inputSchema.properties.status.enum, STATUSES);
    assert.deepEqual([...byName.set_status.inputSchema.required].sort(), ['id', 'status']);
    assert.deepEqual(byName.add_comment.inputSchema.properties.kind.enum, ['fix', 'question', 'options', 'deferral', 'techdebt']);
  }));

test('calls every tool', () =>
  withClient(KEY_RW, async (client) => {
    // introduce
    const hello = await client.callTool({ name: 'introduce', arguments: { agentName: AGENT } });
    assert.ok(!hello.isError && textOf(hello).includes(AGENT), textOf(hello));

    // list_reports: a JSON array in compact form.
    const items = okJson(await client.callTool({ name: 'list_reports', arguments: { limit: 200 } }));
    assert.ok(Array.isArray(items));
    const ids = items.map((i) => i.id);
    assert.ok(ids.includes(REPORT_ID), 'the seeded report is listed');
    assert.ok(!ids.includes(FOREIGN_REPORT_ID), 'the other project is not');
    const seeded = items.find((i) => i.id === REPORT_ID);
    assert.deepEqual(Object.keys(seeded).sort(), ['artifactId', 'channelKey', 'createdAt', 'id', 'shortId', 'status', 'title', 'url']);
    assert.equal(seeded.shortId, REPORT_ID.slice(-6));

    // get_report: Markdown and the screenshot as an image item.
    for (const reference of [REPORT_ID, REPORT_ID.slice(-6)]) {
      const report = await client.callTool({ name: 'get_report', arguments: { id: reference } });
      assert.notEqual(report.isError, true);
      assert.match(textOf(report), /^# Checkout button does nothing/);
      const images = report.content.filter((c) => c.type === 'image');
      assert.equal(images.length, 1);
      assert.equal(images[0].mimeType, 'image/png');
      assert.deepEqual(Buffer.from(images[0].data, 'base64'), PNG_1X1);
    }

    // create_report, read back through the REST API.
    const filed = okJson(await client.callTool({
      name: 'create_report',
      arguments: { message: 'Search box loses focus\nAfter the first keystroke.', url: 'https://shop.example.com/search' },
    }));
    assert.equal(filed.title, 'Search box loses focus');
    assert.equal(filed.channelKey, 'bug');
    const { status, body: report } = await rest(`/api/v1/projects/${PROJECT_ID}/feedback/${filed.id}`, KEY_RW);
    assert.equal(status, 200);
    assert.equal(report.context.extra.via, 'mcp');
    assert.equal(report.context.url, 'https://shop.example.com/search');
    assert.equal(report.author.kind, 'agent');
    assert.match(report.author.id, /^agent:[0-9a-f]{24}$/);
    assert.equal(report.author.label, AGENT);

    // create_room: idempotent.
    const room = okJson(await client.callTool({ name: 'create_room', arguments: { artifact_id: 'node-sdk-room' } }));
    const again = okJson(await client.callTool({ name: 'create_room', arguments: { artifact_id: 'node-sdk-room', title: 'Node room' } }));
    assert.equal(room.created, true);
    assert.equal(again.created, false);
    assert.equal(again.id, room.id);
    assert.equal(again.title, 'Node room');

    // set_status
    for (const value of STATUSES) {
      assert.deepEqual(okJson(await client.callTool({ name: 'set_status', arguments: { id: filed.shortId, status: value } })), {
        id: filed.id,
        status: value,
      });
    }

    // add_comment
    const draft = okJson(await client.callTool({ name: 'add_comment', arguments: { report_id: filed.id, text: 'Reproduced' } }));
    assert.equal(draft.draft, true);
    assert.equal(draft.publishedAt, null);
    assert.equal(draft.authorLabel, AGENT);
    const posted = okJson(await client.callTool({
      name: 'add_comment',
      arguments: { report_id: filed.id, text: 'Which browser?', draft: false, kind: 'question' },
    }));
    assert.equal(posted.draft, false);
    assert.equal(posted.kind, 'question');
    assert.ok(posted.publishedAt);
  }));

test('a foreign report id and an invalid status are isError results', () =>
  withClient(KEY_RW, async (client) => {
    for (const [name, args] of [
      ['get_report', { id: FOREIGN_REPORT_ID }],
      ['set_status', { id: FOREIGN_REPORT_ID, status: 'fixed' }],
      ['add_comment', { report_id: FOREIGN_REPORT_ID, text: 'hi' }],
    ]) {
      const result = await client.callTool({ name, arguments: args });
      assert.equal(result.isError, true, name);
      assert.ok(textOf(result).includes(`no report ${FOREIGN_REPORT_ID}`), textOf(result));
    }
    const bad = await client.callTool({ name: 'set_status', arguments: { id: REPORT_ID, status: 'done' } });
    assert.equal(bad.isError, true);
    assert.match(textOf(bad), /argument status must be one of new, triaged, in-progress, fixed, verified, canceled/);
    await assert.rejects(client.callTool({ name: 'no_such_tool', arguments: {} }), (e) => e instanceof McpError && e.code === -32601);
  }));

test('reports and their files are resources; the screenshot reads back byte for byte', () =>
  withClient(KEY_RO, async (client) => {
    assert.ok(client.getServerCapabilities()?.resources, 'the resources capability');
    const { resources } = await client.listResources();
    assert.ok(resources.some((r) => r.uri === `svc://reports/${REPORT_ID}` && r.mimeType === 'text/markdown'), JSON.stringify(resources));
    const report = await client.readResource({ uri: `svc://reports/${REPORT_ID}` });
    const text = report.contents[0].text;
    assert.match(text, /^# Checkout button does nothing/);
    const blob = /svc:\/\/blobs\/[0-9a-f]{24}/.exec(text)?.[0];
    assert.ok(blob, text);
    const image = (await client.readResource({ uri: blob })).contents[0];
    assert.equal(image.mimeType, 'image/png');
    assert.deepEqual(Buffer.from(image.blob, 'base64'), PNG_1X1);
    await assert.rejects(client.readResource({ uri: `svc://reports/${FOREIGN_REPORT_ID}` }), (e) => e instanceof McpError && e.code === -32002);
  }));

test('argument aliases work and an unknown argument is named with the closest valid one', () =>
  withClient(KEY_RW, async (client) => {
    for (const name of ['id', 'report_id', 'reportId']) {
      const report = await client.callTool({ name: 'get_report', arguments: { [name]: REPORT_ID } });
      assert.notEqual(report.isError, true, name);
    }
    const room = okJson(await client.callTool({ name: 'create_room', arguments: { artifactId: 'node-alias-room' } }));
    assert.equal(room.artifactId, 'node-alias-room');
    const wrong = await client.callTool({ name: 'add_comment', arguments: { report_id: REPORT_ID, body: 'hi' } });
    assert.equal(wrong.isError, true);
    assert.match(textOf(wrong), /unknown argument "body" for add_comment; did you mean /);
  }));

test('a read-only key lists and reads; write tools answer 403 with the JSON-RPC error body', async () => {
  await withClient(KEY_RO, async (client) => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), TOOL_NAMES);
    const items = okJson(await client.callTool({ name: 'list_reports', arguments: {} }));
    assert.ok(items.some((i) => i.id === REPORT_ID));
    const report = await client.callTool({ name: 'get_report', arguments: { id: REPORT_ID } });
    assert.notEqual(report.isError, true);
  });
  const writes = [
    ['create_report', { message: 'nope' }],
    ['create_room', { artifact_id: 'nope' }],
    ['set_status', { id: REPORT_ID, status: 'fixed' }],
    ['add_comment', { report_id: REPORT_ID, text: 'nope' }],
  ];
  for (const [i, [name, args]] of writes.entries()) {
    const id = `write-${i}`;
    const answer = await rawMcp(KEY_RO, { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
    assert.equal(answer.status, 403, name);
    assert.deepEqual(answer.body, { jsonrpc: '2.0', id, error: { code: -32003, message: 'forbidden: this key lacks feedback:write' } });
    assert.equal(answer.headers.get('www-authenticate'), null);
  }
});

test('an org-wide key spans the projects of its organization', () =>
  withClient(KEY_ORG, async (client) => {
    const items = okJson(await client.callTool({ name: 'list_reports', arguments: { limit: 200 } }));
    const mine = items.find((i) => i.id === REPORT_ID);
    const other = items.find((i) => i.id === FOREIGN_REPORT_ID);
    assert.equal(mine?.projectId, PROJECT_ID);
    assert.equal(mine?.project, 'Default');
    assert.equal(other?.projectId, OTHER_PROJECT_ID);
    assert.equal(other?.project, 'Other shop');
    const room = await client.callTool({ name: 'create_room', arguments: { artifact_id: 'org-room' } });
    assert.equal(room.isError, true);
    assert.match(textOf(room), /project/);
    const made = okJson(await client.callTool({ name: 'create_room', arguments: { artifact_id: 'org-room', project: OTHER_PROJECT_ID } }));
    assert.equal(made.projectId, OTHER_PROJECT_ID);
  }));

test('the HTTP surface: 405 for GET and DELETE, 401 with a Bearer challenge, 202 for notifications', async () => {
  for (const method of ['GET', 'DELETE']) {
    const response = await fetch(MCP_URL, { method, headers: { Authorization: `Bearer ${KEY_RW}` }, redirect: 'manual' });
    assert.equal(response.status, 405, method);
    assert.equal(response.headers.get('allow'), 'POST');
  }
  const unauthorized = await rawMcp(`pr_sk_${'y'.repeat(40)}`, { jsonrpc: '2.0', id: 1, method: 'ping' });
  assert.equal(unauthorized.status, 401);
  assert.match(unauthorized.headers.get('www-authenticate') ?? '', /^Bearer/);
  const notification = await rawMcp(KEY_RW, { jsonrpc: '2.0', method: 'notifications/initialized' });
  assert.equal(notification.status, 202);
  assert.equal(notification.text, '');
  await assert.rejects(connect(`pr_sk_${'y'.repeat(40)}`), 'an unknown key cannot connect');
});
