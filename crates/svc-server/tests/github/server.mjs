// A GitHub REST API server for Svc's tests, built from GitHub's published API description
// (@octokit/openapi): every request is checked against the description (operation, path and query
// parameters, headers, JSON body) and answered with the description's own example response. Inbound
// webhook payloads come from @octokit/webhooks-examples, signed with @octokit/webhooks-methods.
//
//   node server.mjs --records DIR [--port N] [--description api.github.com|ghes-3.19|FILE.json] [--verbose]
//
// Prints `PORT <n>` on stdout once it accepts connections (nothing else goes to stdout; its own
// failures, and with --verbose every request that does not match the description, go to stderr).
// Every API request becomes DIR/<n>.json. See README.md for the control endpoints.

import { createServer, STATUS_CODES } from "node:http";
import { createHmac, randomBytes, randomUUID } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { sign } from "@octokit/webhooks-methods";

const require = createRequire(import.meta.url);
const Ajv = unwrap(require("ajv"));
const Ajv2020 = unwrap(require("ajv/dist/2020"));
const addFormats = unwrap(require("ajv-formats"));

function unwrap(module) {
  return module.default ?? module;
}

// stdout carries the PORT line only.
console.log = console.error;
const log = (...args) => console.error("[github-server]", ...args);
const verbose = (...parts) => args.verbose && log(...parts);

// --- arguments ---------------------------------------------------------------------------------

const USAGE = "usage: node server.mjs --records DIR [--port N] [--description NAME|FILE] [--verbose]";

function parseArgs(argv) {
  const args = { records: null, port: 0, description: "api.github.com", verbose: false };
  for (let i = 0; i < argv.length; i++) {
    const name = argv[i];
    const value = argv[i + 1];
    if (name === "--verbose") {
      args.verbose = true;
      continue;
    }
    if (name === "--records") args.records = value;
    else if (name === "--port") args.port = Number(value);
    else if (name === "--description") args.description = value;
    else {
      console.error(`unknown argument ${name}\n${USAGE}`);
      process.exit(2);
    }
    i++;
  }
  if (!args.records) {
    console.error(USAGE);
    process.exit(2);
  }
  return args;
}

const args = parseArgs(process.argv.slice(2));
mkdirSync(args.records, { recursive: true });

// --- the description ---------------------------------------------------------------------------

/** The dereferenced description (no $ref left), read once: about 70 MB of JSON, under a second. */
function loadDescription(name) {
  const file = name.endsWith(".json")
    ? name
    : require.resolve(`@octokit/openapi/generated/${name}.deref.json`);
  const started = Date.now();
  const description = JSON.parse(readFileSync(file, "utf8"));
  const paths = Object.keys(description.paths).length;
  verbose(`loaded ${file} (OpenAPI ${description.openapi}, ${paths} paths) in ${Date.now() - started} ms`);
  return description;
}

const description = loadDescription(args.description);
const openapi31 = String(description.openapi).startsWith("3.1");
const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

// Keywords kept when an OpenAPI schema object becomes a JSON Schema (everything else, such as
// `example`, `xml`, `discriminator`, `externalDocs` and `x-*`, is dropped).
const SCHEMA_KEYWORDS = new Set([
  "type", "enum", "const", "format", "pattern", "minLength", "maxLength", "minimum", "maximum",
  "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems", "uniqueItems",
  "minProperties", "maxProperties", "required", "title", "default", "readOnly", "writeOnly",
  "dependentRequired", "contentEncoding", "contentMediaType",
]);
const SUBSCHEMA = new Set([
  "items", "not", "additionalProperties", "contains", "if", "then", "else", "propertyNames",
  "unevaluatedProperties", "unevaluatedItems", "additionalItems",
]);
const SUBSCHEMA_LISTS = new Set(["allOf", "anyOf", "oneOf", "prefixItems"]);
const SUBSCHEMA_MAPS = new Set(["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]);

/**
 * An OpenAPI schema object as a JSON Schema Ajv validates as GitHub means it. OpenAPI 3.0's
 * `nullable: true` becomes a type union (and `null` joins an `enum`; a schema without `type`
 * becomes `anyOf: [schema, {type: null}]`); 3.0's boolean `exclusiveMinimum`/`exclusiveMaximum`
 * become numbers; unknown keywords are dropped.
 */
function toJsonSchema(schema) {
  if (typeof schema === "boolean") return schema;
  if (!schema || typeof schema !== "object") return {};
  const out = {};
  for (const [key, value] of Object.entries(schema)) {
    if (SCHEMA_KEYWORDS.has(key)) out[key] = value;
    else if (SUBSCHEMA.has(key)) out[key] = toJsonSchema(value);
    else if (SUBSCHEMA_LISTS.has(key) && Array.isArray(value)) out[key] = value.map(toJsonSchema);
    else if (key === "items" && Array.isArray(value)) out[key] = value.map(toJsonSchema);
    else if (SUBSCHEMA_MAPS.has(key) && value && typeof value === "object") {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, toJsonSchema(sub)]));
    }
  }
  if (!openapi31) {
    if (schema.exclusiveMinimum === true && typeof schema.minimum === "number") {
      out.exclusiveMinimum = schema.minimum;
      delete out.minimum;
    } else if (typeof schema.exclusiveMinimum === "boolean") delete out.exclusiveMinimum;
    if (schema.exclusiveMaximum === true && typeof schema.maximum === "number") {
      out.exclusiveMaximum = schema.maximum;
      delete out.maximum;
    } else if (typeof schema.exclusiveMaximum === "boolean") delete out.exclusiveMaximum;
  }
  if (schema.nullable === true) {
    if (typeof out.type === "string" || Array.isArray(out.type)) {
      const types = [].concat(out.type);
      if (!types.includes("null")) out.type = [...types, "null"];
      if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
      // oneOf/anyOf branches beside a type would still refuse null: let null through on its own.
      if (out.oneOf || out.anyOf || out.allOf) return { anyOf: [out, { type: "null" }] };
    } else {
      return { anyOf: [out, { type: "null" }] };
    }
  }
  return out;
}

function newAjv(options) {
  const AjvClass = openapi31 ? Ajv2020 : Ajv;
  const ajv = new AjvClass({ strict: false, allErrors: true, validateFormats: true, ...options });
  addFormats(ajv);
  // OpenAPI's formats that JSON Schema does not define (and GitHub's own): accepted as they are.
  for (const format of ["int32", "int64", "float", "double", "byte", "binary", "password", "timestamp", "repo.nwo"]) {
    ajv.addFormat(format, true);
  }
  return ajv;
}
const bodyAjv = newAjv({});
// Path and query parameters arrive as strings: coerced to the schema's type ("42" → 42, one value → [value]).
const paramAjv = newAjv({ coerceTypes: "array" });

// --- routes: path templates, most literal first --------------------------------------------------

function escapeRegExp(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * Each path template as segments: literal text, `{param}`, or a mix such as `{base}...{head}`. A
 * parameter the description marks `x-multi-segment` (a file path, a branch or ref such as
 * `heads/feature/x`) may take several segments.
 */
const routes = Object.entries(description.paths).map(([template, item]) => {
  const multi = new Set();
  for (const method of METHODS) {
    for (const parameter of [...(item.parameters ?? []), ...(item[method]?.parameters ?? [])]) {
      if (parameter.in === "path" && parameter["x-multi-segment"]) multi.add(parameter.name);
    }
  }
  const segments = template.split("/").slice(1).map((text) => {
    const whole = /^\{([^}]+)\}$/.exec(text);
    if (whole) return { kind: "param", name: whole[1], multi: multi.has(whole[1]) };
    if (!text.includes("{")) return { kind: "literal", text };
    const names = [];
    const source = text.split(/(\{[^}]+\})/).map((part) => {
      const param = /^\{([^}]+)\}$/.exec(part);
      if (!param) return escapeRegExp(part);
      names.push(param[1]);
      return "(.+?)";
    });
    return { kind: "mixed", regex: new RegExp(`^${source.join("")}$`), names };
  });
  return { template, item, segments, multi: multi.size > 0 };
});

/**
 * A match's rank: every multi-segment parameter on one segment before one taking several; then
 * literal > mixed > parameter, segment by segment.
 */
function rank(match) {
  const weights = match.route.segments.map((s) => (s.kind === "literal" ? 2 : s.kind === "mixed" ? 1 : 0));
  return [match.spans ? 0 : 1, ...weights];
}

function compareRanks(a, b) {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (b[i] ?? -1) - (a[i] ?? -1);
    if (d) return d;
  }
  return 0;
}

function decode(segment) {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** Matches `parts[j..]` to `segments[i..]`: `{params, spans}` (spans: parameters taking several segments), or null. */
function matchSegments(segments, parts, i, j, params) {
  if (i === segments.length) return j === parts.length ? { params, spans: 0 } : null;
  if (j >= parts.length) return null;
  const segment = segments[i];
  if (segment.kind === "literal") {
    return parts[j] === segment.text ? matchSegments(segments, parts, i + 1, j + 1, params) : null;
  }
  if (parts[j] === "") return null;
  if (segment.kind === "mixed") {
    const found = segment.regex.exec(decode(parts[j]));
    if (!found) return null;
    const named = { ...params };
    segment.names.forEach((name, k) => (named[name] = found[k + 1]));
    return matchSegments(segments, parts, i + 1, j + 1, named);
  }
  const most = segment.multi ? parts.length - j : 1;
  for (let n = 1; n <= most; n++) {
    if (n > 1 && parts[j + n - 1] === "") break;
    const value = parts.slice(j, j + n).map(decode).join("/");
    const rest = matchSegments(segments, parts, i + 1, j + n, { ...params, [segment.name]: value });
    if (rest) return { params: rest.params, spans: rest.spans + (n > 1 ? 1 : 0) };
  }
  return null;
}

/**
 * The path templates matching an API path (such as `/repos/o/r/issues/1`), best first: the first
 * one that has the request's method wins (two templates can differ only in a parameter's name, such
 * as GET /orgs/{org}/attestations/{subject_digest} and DELETE /orgs/{org}/attestations/{attestation_id}).
 */
function matchRoutes(apiPath) {
  const parts = apiPath.split("/").slice(1);
  const matches = [];
  for (const route of routes) {
    const { segments } = route;
    if (route.multi ? parts.length < segments.length : parts.length !== segments.length) continue;
    const found = matchSegments(segments, parts, 0, 0, {});
    if (found) matches.push({ route, params: found.params, spans: found.spans });
  }
  return matches.sort((a, b) => compareRanks(rank(a), rank(b)));
}

function methodsOf(item) {
  return METHODS.filter((method) => item[method]).map((method) => method.toUpperCase()).join(", ");
}

const operationsById = new Map();
for (const { template, item } of routes) {
  for (const method of METHODS) {
    const operation = item[method];
    if (operation?.operationId) operationsById.set(operation.operationId, { template, method, operation, item });
  }
}

// --- checking a request --------------------------------------------------------------------------

const validators = new WeakMap();

/** Compiled checks for an operation (made on first use, then kept). */
function checksFor(operation, item) {
  let checks = validators.get(operation);
  if (checks) return checks;
  const parameters = new Map();
  for (const parameter of [...(item.parameters ?? []), ...(operation.parameters ?? [])]) {
    parameters.set(`${parameter.in}:${parameter.name}`, parameter);
  }
  checks = { path: [], query: [], header: [], body: null, bodyRequired: false, bodyTypes: [] };
  for (const parameter of parameters.values()) {
    const schema = toJsonSchema(parameter.schema ?? parameter.content?.["application/json"]?.schema ?? {});
    const check = {
      name: parameter.name,
      required: parameter.required === true || parameter.in === "path",
      explode: parameter.explode ?? true,
      schema,
      validate: compile(paramAjv, { type: "object", properties: { value: schema } }),
    };
    if (checks[parameter.in]) checks[parameter.in].push(check);
  }
  if (operation.requestBody) {
    checks.bodyRequired = operation.requestBody.required === true;
    checks.bodyTypes = Object.keys(operation.requestBody.content ?? {});
    const json = operation.requestBody.content?.["application/json"];
    if (json) checks.body = compile(bodyAjv, toJsonSchema(json.schema ?? {}));
  }
  validators.set(operation, checks);
  return checks;
}

function compile(ajv, schema) {
  try {
    return ajv.compile(schema);
  } catch (error) {
    log(`a schema did not compile (${error.message}); values for it are not checked`);
    return Object.assign(() => true, { errors: null });
  }
}

/** Ajv's errors as sentences: `body.labels[0]: must be string`. */
function describeErrors(where, errors) {
  return (errors ?? []).map((error) => {
    const path = error.instancePath
      .split("/")
      .slice(1)
      .map((part) => (/^\d+$/.test(part) ? `[${part}]` : `.${part.replace(/~1/g, "/").replace(/~0/g, "~")}`))
      .join("");
    let message = error.message;
    if (error.keyword === "enum") message += `: ${error.params.allowedValues.map((v) => JSON.stringify(v)).join(", ")}`;
    if (error.keyword === "additionalProperties") message += `: ${JSON.stringify(error.params.additionalProperty)}`;
    return `${where}${path}: ${message}`;
  });
}

function checkParameter(check, raw, where, errors) {
  if (raw === undefined) {
    if (check.required) errors.push(`${where} parameter ${check.name} is required`);
    return;
  }
  let value = raw;
  const types = [].concat(check.schema.type ?? []);
  if (types.includes("array") && typeof raw === "string" && check.explode === false) value = raw.split(",");
  const holder = { value };
  if (!check.validate(holder)) {
    for (const error of check.validate.errors ?? []) {
      const path = error.instancePath.replace(/^\/value/, "");
      const message = describeErrors("", [{ ...error, instancePath: "" }])[0].slice(2);
      errors.push(`${where} parameter ${check.name}${path} = ${JSON.stringify(raw)}: ${message}`);
    }
  }
}

/** Everything wrong with a request for `operation` (an empty list when it matches the description). */
function checkRequest(request, match, operation) {
  const errors = [];
  const checks = checksFor(operation, match.route.item);
  for (const check of checks.path) checkParameter(check, match.params[check.name], "path", errors);
  const known = new Set(checks.query.map((check) => check.name));
  for (const check of checks.query) checkParameter(check, request.query[check.name], "query", errors);
  for (const name of Object.keys(request.query)) {
    if (!known.has(name)) {
      errors.push(`query parameter ${name} is not in the description (it takes: ${[...known].join(", ") || "none"})`);
    }
  }
  for (const check of checks.header) checkParameter(check, request.headers[check.name.toLowerCase()], "header", errors);
  if (!request.headers["user-agent"]) errors.push("header User-Agent is missing (GitHub refuses requests without one)");
  if (!request.headers["accept"]) {
    errors.push("header Accept is missing (GitHub recommends application/vnd.github+json)");
  }

  const hasBody = request.rawBody.length > 0;
  if (!operation.requestBody) {
    if (hasBody) errors.push(`${match.route.template} ${request.method} takes no request body, but one was sent`);
  } else if (!hasBody) {
    if (checks.bodyRequired) errors.push("the request body is required");
  } else if (checks.body) {
    const type = (request.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase();
    if (!type) errors.push("header Content-Type is missing (the body is application/json)");
    else if (!checks.bodyTypes.includes(type) && !/[/+]json$/.test(type)) {
      errors.push(`header Content-Type is ${type}, the operation takes ${checks.bodyTypes.join(", ")}`);
    }
    if (request.body === undefined) errors.push(`the request body is not JSON: ${request.jsonError}`);
    else if (!checks.body(request.body)) errors.push(...describeErrors("body", checks.body.errors));
  }
  return errors;
}

// --- answers ---------------------------------------------------------------------------------------

/** The example of a response object: `examples.<first>.value` or `example` (JSON preferred). */
function exampleOf(response) {
  const content = response?.content;
  if (!content) return null;
  const type = content["application/json"] ? "application/json" : Object.keys(content)[0];
  const media = content[type];
  const examples = media.examples ? Object.values(media.examples) : [];
  if (examples.length && "value" in examples[0]) return { type, value: examples[0].value };
  if ("example" in media) return { type, value: media.example };
  if (media.schema?.example !== undefined) return { type, value: media.schema.example };
  return { type, value: null };
}

/** The operation's first 2xx response (or its first response of any kind). */
function successOf(operation) {
  const codes = Object.keys(operation.responses ?? {}).filter((code) => /^\d{3}$/.test(code)).sort();
  const code = codes.find((c) => c.startsWith("2")) ?? codes[0] ?? "200";
  return { status: Number(code), response: operation.responses?.[code] };
}

const DEFAULT_MESSAGES = {
  400: "Problems parsing JSON",
  401: "Bad credentials",
  403: "Resource not accessible by personal access token",
  404: "Not Found",
  409: "Conflict",
  410: "Issues are disabled for this repo",
  422: "Validation Failed",
  500: "Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
};

function epochSeconds(offset = 0) {
  return Math.floor(Date.now() / 1000) + Math.ceil(offset);
}

function requestId() {
  const hex = (n) => randomBytes(n).toString("hex").toUpperCase();
  return `${hex(2)}:${hex(2)}:${hex(3)}:${hex(3)}:${hex(4)}`;
}

function githubHeaders() {
  return {
    "x-ratelimit-limit": "5000",
    "x-ratelimit-remaining": "4999",
    "x-ratelimit-reset": String(epochSeconds(3600)),
    "x-ratelimit-used": "1",
    "x-ratelimit-resource": "core",
    "x-github-request-id": requestId(),
    "x-github-media-type": "github.v3; format=json",
    "x-github-api-version-selected": "2022-11-28",
  };
}

// --- state set by the control endpoints --------------------------------------------------------

let rateLimit = null; // { remaining, status, retryAfter, secondary }
let overrides = []; // { operationId, status, remaining, body, headers }
let counter = 0;

function rateLimitAnswer(limit) {
  const retryAfter = limit.retryAfter ?? 1;
  if (limit.secondary) {
    return {
      status: limit.status,
      headers: { ...githubHeaders(), "retry-after": String(Math.ceil(retryAfter)) },
      body: {
        message:
          "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. " +
          "If you reach out to GitHub Support for help, please include the request ID.",
        documentation_url:
          "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits",
      },
    };
  }
  return {
    status: limit.status,
    headers: {
      ...githubHeaders(),
      "x-ratelimit-remaining": "0",
      "x-ratelimit-used": "5000",
      "x-ratelimit-reset": String(epochSeconds(retryAfter)),
    },
    body: {
      message: "API rate limit exceeded for installation ID 1.",
      documentation_url: "https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting",
    },
  };
}

function overrideAnswer(override, operation) {
  let body = override.body;
  if (body === undefined && override.patch !== undefined) {
    const described = operation.responses?.[String(override.status)] ?? successOf(operation).response;
    body = deepMerge(structuredClone(exampleOf(described)?.value ?? {}), override.patch);
  } else if (body === undefined) {
    const described = operation.responses?.[String(override.status)];
    const example = described ? exampleOf(described) : null;
    if (example && example.value !== null) body = example.value;
    else if (override.status >= 200 && override.status < 300 && override.status !== 204) {
      body = exampleOf(successOf(operation).response)?.value ?? null;
    } else if (override.status !== 204 && override.status !== 304) {
      body = {
        message: DEFAULT_MESSAGES[override.status] ?? STATUS_CODES[override.status] ?? "Error",
        documentation_url: operation.externalDocs?.url ?? "https://docs.github.com/rest",
        status: String(override.status),
      };
    } else body = null;
  }
  return { status: override.status, headers: { ...githubHeaders(), ...(override.headers ?? {}) }, body };
}

// --- records -----------------------------------------------------------------------------------------

function writeRecord(record) {
  const file = join(args.records, `${record.n}.json`);
  const temp = join(args.records, `.${record.n}.json.tmp`);
  writeFileSync(temp, JSON.stringify(record, null, 2));
  renameSync(temp, file);
}

// --- webhooks ------------------------------------------------------------------------------------------

const webhookExamples = require("@octokit/webhooks-examples/api.github.com/index.json");
const webhookEvents = new Map(webhookExamples.map((event) => [event.name, event]));
const webhookSchemas = description["x-webhooks"] ?? {};
const webhookValidators = new Map();

/** The description's schema for `issue_comment`/`created` (its x-webhooks `issue-comment-created`), as a validator. */
function webhookValidator(event, action) {
  const key = [event.replace(/_/g, "-"), action].filter(Boolean).join("-");
  if (!webhookValidators.has(key)) {
    const schema = webhookSchemas[key]?.post?.requestBody?.content?.["application/json"]?.schema;
    webhookValidators.set(key, schema ? compile(bodyAjv, toJsonSchema(schema)) : null);
  }
  return webhookValidators.get(key);
}

/** The actions GitHub has for an event: the examples' list and the description's x-webhooks (`issues/closed`). */
function declaredActions(event) {
  const actions = new Set(webhookEvents.get(event)?.actions ?? []);
  const name = event.replace(/_/g, "-");
  for (const webhook of Object.values(webhookSchemas)) {
    const [of, action] = String(webhook?.post?.operationId ?? "").split("/");
    if (of === name && action) actions.add(action);
  }
  return [...actions].sort();
}

function actionsWithExamples(event) {
  const examples = webhookEvents.get(event)?.examples ?? [];
  return [...new Set(examples.map((example) => example.action).filter(Boolean))].sort();
}

function deepMerge(target, patch) {
  if (!patch || typeof patch !== "object" || Array.isArray(patch)) return patch;
  const out = target && typeof target === "object" && !Array.isArray(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) out[key] = deepMerge(out[key], value);
  return out;
}

function unknownEvent(event) {
  return `no webhook examples for event ${JSON.stringify(event)}; events with examples: ${eventsSummary()}`;
}

function eventsSummary() {
  return [...webhookEvents.keys()]
    .sort()
    .map((name) => {
      const actions = actionsWithExamples(name);
      return actions.length ? `${name} (${actions.join(", ")})` : name;
    })
    .join("; ");
}

/**
 * The first example for event/action, or, when the event declares the action but no example has
 * it (issues/closed has none), the event's example that best fits the description's schema for the
 * action once its `action` is set (the answer says so in `example`).
 */
function webhookPayload(event, action) {
  const known = webhookEvents.get(event);
  if (!known) throw new Error(unknownEvent(event));
  const examples = known.examples ?? [];
  if (!action) {
    if (!examples.length) throw new Error(`no examples for event ${event}`);
    const first = examples[0];
    return { payload: structuredClone(first), example: `${event}${first.action ? `/${first.action}` : ""} #1` };
  }
  const index = examples.findIndex((example) => example.action === action);
  if (index >= 0) {
    const number = examples.slice(0, index + 1).filter((example) => example.action === action).length;
    return { payload: structuredClone(examples[index]), example: `${event}/${action} #${number}` };
  }
  const declared = declaredActions(event);
  if (!declared.includes(action) || !examples.length) {
    throw new Error(
      `no example for ${event}/${action}: ` +
        `${event} has examples for ${actionsWithExamples(event).join(", ") || "no action"}` +
        (declared.length ? `; GitHub's actions for it are ${declared.join(", ")}` : "") +
        `. Events with examples: ${eventsSummary()}`,
    );
  }
  const validate = webhookValidator(event, action);
  let best = null;
  examples.forEach((example, i) => {
    const candidate = { ...structuredClone(example), action };
    const misfits = validate && !validate(candidate) ? validate.errors.length : 0;
    if (!best || misfits < best.misfits) {
      best = { candidate, misfits, from: `${event}/${example.action} (example ${i + 1})` };
    }
  });
  return {
    payload: best.candidate,
    example: `${best.from} with action set to ${action}: @octokit/webhooks-examples has no ${event}/${action} example`,
  };
}

async function signedWebhook(request) {
  const { event, action, secret, patch } = request;
  if (typeof event !== "string" || !event) throw new Error('"event" (such as "issues") is required');
  if (typeof secret !== "string" || !secret) throw new Error('"secret" is required');
  const { payload, example } = webhookPayload(event, action ?? null);
  const merged = patch === undefined || patch === null ? payload : deepMerge(payload, patch);
  const body = JSON.stringify(merged);
  const signature = await sign(secret, body);
  const deliveryId = randomUUID();
  const validate = webhookValidator(event, merged.action);
  const schemaErrors = validate && !validate(merged) ? describeErrors("payload", validate.errors) : [];
  return {
    body,
    signature,
    event,
    deliveryId,
    example,
    schemaErrors,
    headers: {
      "content-type": "application/json",
      "user-agent": "GitHub-Hookshot/7ab1e5d",
      "x-github-event": event,
      "x-github-delivery": deliveryId,
      "x-github-hook-id": "1",
      "x-github-hook-installation-target-type": merged.installation ? "integration" : "repository",
      "x-github-hook-installation-target-id": String(merged.installation?.id ?? merged.repository?.id ?? 1),
      "x-hub-signature": `sha1=${createHmac("sha1", secret).update(body).digest("hex")}`,
      "x-hub-signature-256": signature,
    },
  };
}

// --- HTTP --------------------------------------------------------------------------------------------

function send(res, status, headers, body) {
  const out = { ...headers };
  let payload = "";
  if (body !== null && body !== undefined && status !== 204 && status !== 304) {
    const type = out["content-type"] ?? "application/json; charset=utf-8";
    out["content-type"] = type;
    payload = typeof body === "string" && !/json/.test(type) ? body : JSON.stringify(body);
  }
  if (status !== 204 && status !== 304) out["content-length"] = String(Buffer.byteLength(payload));
  res.writeHead(status, out);
  res.end(payload);
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

function queryObject(url) {
  const query = {};
  for (const [name, value] of url.searchParams) {
    if (name in query) query[name] = [].concat(query[name], value);
    else query[name] = value;
  }
  return query;
}

async function control(req, res, url, raw) {
  const route = `${req.method} ${url.pathname}`;
  let input = {};
  if (raw.length) {
    try {
      input = JSON.parse(raw.toString("utf8"));
    } catch (error) {
      return send(res, 400, {}, { message: `the body is not JSON: ${error.message}` });
    }
  }
  switch (route) {
    case "POST /_control/rate-limit": {
      const status = input.status ?? 403;
      if (status !== 403 && status !== 429) return send(res, 400, {}, { message: '"status" is 403 or 429' });
      rateLimit = {
        remaining: input.count ?? 1,
        status,
        retryAfter: input.retryAfter,
        secondary: input.secondary ?? status === 429,
      };
      return send(res, 200, {}, { ok: true, rateLimit });
    }
    case "POST /_control/respond": {
      const found = operationsById.get(input.operationId);
      if (!found) {
        const group = String(input.operationId).split("/")[0];
        const near = [...operationsById.keys()].filter((id) => id.split("/")[0] === group);
        const also = near.length ? `; ${group}/ has ${near.join(", ")}` : "";
        const message = `no operation ${JSON.stringify(input.operationId)} in the description${also}`;
        return send(res, 400, {}, { message });
      }
      if (!Number.isInteger(input.status) || input.status < 100 || input.status > 599) {
        return send(res, 400, {}, { message: '"status" is an HTTP status code' });
      }
      overrides.push({
        operationId: input.operationId,
        status: input.status,
        remaining: input.count ?? 1,
        body: input.body,
        patch: input.patch,
        headers: input.headers,
      });
      return send(res, 200, {}, { ok: true, operation: `${found.method.toUpperCase()} ${found.template}` });
    }
    case "POST /_control/webhook": {
      try {
        return send(res, 200, {}, await signedWebhook(input));
      } catch (error) {
        return send(res, 400, {}, { message: error.message });
      }
    }
    case "GET /_control/webhook-actions": {
      const event = url.searchParams.get("event");
      if (!webhookEvents.has(event)) {
        return send(res, 400, {}, { message: unknownEvent(event) });
      }
      return send(res, 200, {}, actionsWithExamples(event));
    }
    case "POST /_control/reset": {
      rateLimit = null;
      overrides = [];
      return send(res, 200, {}, { ok: true });
    }
    default:
      return send(res, 404, {}, {
        message:
          `no control endpoint ${route}; there are POST /_control/rate-limit, POST /_control/respond, ` +
          "POST /_control/webhook, GET /_control/webhook-actions?event=, POST /_control/reset",
      });
  }
}

async function api(req, res, url, raw, n) {
  const path = url.pathname;
  const apiPath = path === "/api/v3" ? "/" : path.startsWith("/api/v3/") ? path.slice("/api/v3".length) : path;
  const request = {
    method: req.method,
    query: queryObject(url),
    headers: { ...req.headers },
    rawBody: raw,
    body: null,
  };
  if (raw.length) {
    try {
      request.body = JSON.parse(raw.toString("utf8"));
    } catch (error) {
      request.body = undefined;
      request.jsonError = error.message;
    }
  }

  const matches = matchRoutes(apiPath);
  const method = req.method.toLowerCase();
  const match = matches.find((m) => m.route.item[method]) ?? matches[0] ?? null;
  const found = match ? match.route.item[method] ?? null : null;
  let errors;
  let answer;
  if (!found) {
    errors = [
      match
        ? `no operation ${req.method} ${match.route.template} in the description ` +
          `(it has ${methodsOf(match.route.item)})`
        : `no path in the description matches ${apiPath}`,
    ];
    const body = { message: "Not Found", documentation_url: "https://docs.github.com/rest" };
    answer = { status: 404, headers: githubHeaders(), body };
  } else {
    errors = checkRequest(request, match, found);
  }

  if (found && rateLimit && rateLimit.remaining > 0) {
    rateLimit.remaining--;
    answer = rateLimitAnswer(rateLimit);
    if (rateLimit.remaining <= 0) rateLimit = null;
  } else if (found && errors.length) {
    answer = {
      status: 422,
      headers: githubHeaders(),
      body: { message: "Request does not match GitHub's REST API description", errors },
    };
  } else if (found) {
    const index = overrides.findIndex((override) => override.operationId === found.operationId);
    if (index >= 0) {
      const override = overrides[index];
      answer = overrideAnswer(override, found);
      if (--override.remaining <= 0) overrides.splice(index, 1);
    } else {
      const { status, response } = successOf(found);
      const example = exampleOf(response);
      const headers = githubHeaders();
      if (example && example.type !== "application/json") headers["content-type"] = example.type;
      answer = { status, headers, body: example ? example.value : null };
    }
  }

  const record = {
    n,
    method: req.method,
    path,
    apiPath,
    template: match?.route.template ?? null,
    operationId: found?.operationId ?? null,
    query: request.query,
    headers: request.headers,
    body: request.body === undefined ? null : request.body,
    valid: errors.length === 0,
    errors,
    status: answer.status,
  };
  if (request.body === undefined) record.rawBody = raw.toString("utf8");
  writeRecord(record);
  if (errors.length) verbose(`#${n} ${req.method} ${path} → ${answer.status}: ${errors.join("; ")}`);
  send(res, answer.status, answer.headers, answer.body);
}

const server = createServer(async (req, res) => {
  let url;
  try {
    url = new URL(req.url, "http://127.0.0.1");
  } catch {
    return send(res, 400, {}, { message: "a request target that is not a URL" });
  }
  const isControl = url.pathname.startsWith("/_control/");
  const n = isControl ? 0 : ++counter; // numbered in arrival order
  try {
    const raw = await readBody(req);
    if (isControl) await control(req, res, url, raw);
    else await api(req, res, url, raw, n);
  } catch (error) {
    log(`${req.method} ${req.url}: ${error.stack ?? error}`);
    if (!res.headersSent) send(res, 500, {}, { message: `the test server failed: ${error.message}` });
  }
});

server.keepAliveTimeout = 5000;
server.listen(args.port, "127.0.0.1", () => {
  process.stdout.write(`PORT ${server.address().port}\n`);
  verbose(`listening on http://127.0.0.1:${server.address().port} (and /api/v3), records in ${args.records}`);
});

// Gone with the test that started it, even when that test could not stop it.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) process.exit(0);
}, 1000).unref();
for (const signal of ["SIGTERM", "SIGINT"]) process.on(signal, () => process.exit(0));
