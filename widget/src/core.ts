// The sending engine, a lazy part ("core") the loader fetches right after init: Svc.report,
// Svc.attachFile and the panel's send. It builds the context, runs beforeReport once, freezes the
// payload into the delivery queue and makes the first attempt.

import { callJson, SvcError, sendReport, uploadBlob, type Client, type Uploaded } from './api';
import { recordSent, titleOf } from './history';
import type { NetEntry } from './network-capture';
import type { Recorder, RecorderHost, RecordedStep } from './parts/recorder';
import type { SelectorPart } from './parts/selector';
import { complete, type normalize, type Settings } from './options';
import { redactText, redactUrl } from './redact';
import { DeliveryQueue, type QueueItem } from './queue';
import type { RawBlock, FileAttachmentInput, Hint, InitOptions, Payload, Preset, Reporter, SignInAnswer, ThreadReport } from './types';
import type { Ui } from './ui';
import { isObject, load, newId, plain, save, warn } from './util';

const TEXT_MAX = 10000;

export const APPEARANCE = ['mascot', 'shape', 'anchor', 'size', 'offsetX', 'offsetY', 'triggerVariant'] as const;

export interface Configured {
  hints: Hint[];
  /** how the project's reporters sign in */
  reporterAuth?: ReporterAuth;
  limits: Record<string, number>;
  /** shared-bundle mode: channels, default channel and URL patterns */
  project?: Partial<Preset>;
  /** shared-bundle mode: the project's appearance under the init options */
  look?: Record<string, unknown>;
}

/** GET /ingest/config (hints, limits, the project's settings) and, for the shared bundle, /ingest/channels. */
async function fetchConfig(h: CoreHost, client: Client): Promise<Configured> {
  const s = h.settings;
  const user = s.userId ? '?userId=' + encodeURIComponent(s.userId) : '';
  const [config, channels] = await Promise.all([
    callJson<Record<string, unknown>>(client, 'GET', '/ingest/config' + user),
    h.raw ? callJson<Preset>(client, 'GET', '/ingest/channels') : null,
  ]);
  const out: Configured = {
    hints: Array.isArray(config.hints) ? (config.hints as Hint[]) : [],
    limits: isObject(config.limits) ? (config.limits as Record<string, number>) : {},
    reporterAuth: isObject(config.reporterAuth) ? (config.reporterAuth as unknown as ReporterAuth) : undefined,
  };
  if (h.raw) {
    out.project = { urlPatterns: config.urlPatterns as string[], defaultChannelKey: config.defaultChannelKey as string, ...(channels || {}) };
    if (isObject(config.widgetConfig)) {
      // The appearance options init gave explicitly win; the project's fill in the rest (quietly).
      const given: Record<string, unknown> = { projectKey: s.projectKey };
      for (const k of APPEARANCE) if ((h.raw as unknown as Record<string, unknown>)[k] != null) given[k] = s[k];
      const again = h.normalize(given as unknown as InitOptions, config.widgetConfig, '', '');
      out.look = {};
      for (const k of APPEARANCE) out.look[k] = again[k];
    }
  }
  return out;
}

/** What the core part gets from the loader's widget. */
export interface CoreHost {
  settings: Settings;
  /** the widget's local storage namespace (`svc:<widgetId>:`) */
  ns: string;
  /** local storage keys of the retry queue and the History list */
  queueKey: string;
  historyKey: string;
  destroyed(): boolean;
  limits(): Record<string, number>;
  /** shared-bundle mode: the init options (the channels and the project's settings are fetched too) */
  raw: InitOptions | null;
  /** hands what was fetched (GET /ingest/config, and /ingest/channels in shared-bundle mode) to the widget */
  configure(c: Configured): void;
  /** routes again and answers the active channel and how it was chosen */
  channel(): { key: string | null; source: string };
  attributes(): Record<string, unknown>;
  /** console errors to attach, [text, time] (empty when capture is off or the page is outside urlPatterns) */
  errors(): Array<[string, number]>;
  /** failed requests to attach, as recorded (empty when capture is off or the page is outside urlPatterns) */
  network(): NetEntry[];
  /** whether the page is inside the project's urlPatterns */
  allowed(): boolean;
  /** loads a lazy part (the steps recorder and the selector code) */
  part<T>(name: string): Promise<T>;
  draft(): RawBlock[];
  saveDraft(blocks: RawBlock[]): void;
  /** ids of the reports this browser sent (History) */
  sent(): string[];
  /** the launcher's host (null before it is drawn) */
  ui(): Ui | null;
  /** the loader's option rules (so this part does not carry a second copy) */
  normalize: typeof normalize;
}

export interface ReporterAuth {
  mode: 'off' | 'email' | 'oidc';
  required: boolean;
}

export interface Core {
  report(input: { message: string; extra?: Record<string, unknown>; files?: FileAttachmentInput[] }): Promise<{ reportId: string }>;
  attachFile(input: FileAttachmentInput): Promise<RawBlock>;
  submit(blocks: RawBlock[], extra?: Record<string, unknown>): Promise<{ reportId: string }>;
  alpha(key: string): Promise<boolean>;
  /**
   * Sends the draft thread plus `text` as one report (to `channelKey` when the reporter picked one);
   * the draft is cleared once it is sent or queued.
   */
  sendDraft(text: string, channelKey?: string): Promise<{ reportId?: string; queued?: boolean }>;
  /** uploads a screenshot, audio or file blob (checked against the server's limits first) */
  upload(kind: 'screenshot' | 'audio' | 'file', blob: Blob, name: string, fields?: Record<string, string>): Promise<Uploaded>;
  /** the server's limits from /ingest/config (empty until they arrive) */
  limits(): Record<string, number>;
  /** settles once the configuration (hints, limits; the project for the shared bundle) was fetched or failed */
  ready: Promise<void>;
  /** set by the panel: called when attachFile changed the draft thread */
  onDraft?: () => void;
  /** the flag keys alpha() found enabled */
  flags(): string[];
  queue: DeliveryQueue;
  /** how reporters sign in (off until the configuration arrived) */
  auth(): ReporterAuth;
  /** the reporter reports are sent as: the one init gave, or the one who signed in here */
  reporter(): Reporter | undefined;
  signIn(answer: SignInAnswer): void;
  signOut(): Promise<void>;
  /** a reporter route, as the reporter (their token renewed first when it is about to expire) */
  ask<T>(method: string, path: string, body?: unknown): Promise<T>;
  /** the reporter's reports with their answers; counts and marks the news */
  thread(): Promise<ThreadReport[]>;
  /** the reports the reporter has looked at now: their news are seen */
  seen(reports: ThreadReport[]): void;
  /** whether a report has news since the reporter last looked */
  isNew(report: ThreadReport): boolean;
  /** flushes the retry queue when idle (-1), after `delay` ms, or when the next item is due */
  flushSoon(delay?: number): void;
  stop(): void;
}

/** Splits a message into text blocks of at most 10,000 characters. */
export function textBlocks(message: string): RawBlock[] {
  const out: RawBlock[] = [];
  for (let i = 0; i < message.length; i += TEXT_MAX) out.push({ type: 'text', text: message.slice(i, i + TEXT_MAX) });
  return out;
}

/** The attachFile input rules: a File keeps its name, a bare Blob is `file`, the object form builds one. */
export function toFile(input: FileAttachmentInput): { blob: Blob; name: string; description?: string } {
  if (typeof Blob !== 'undefined' && input instanceof Blob) {
    const name = typeof File !== 'undefined' && input instanceof File && input.name ? input.name : 'file';
    return { blob: input, name };
  }
  if (isObject(input) && typeof input.name === 'string' && input.name) {
    const { content, mime, description } = input as { content: unknown; mime?: unknown; description?: unknown };
    let blob: Blob;
    if (typeof content === 'string') blob = new Blob([content], { type: typeof mime === 'string' && mime ? mime : 'text/plain' });
    else if (content instanceof Blob) blob = typeof mime === 'string' && mime ? new Blob([content], { type: mime }) : content;
    else throw new TypeError('[Svc] attachFile: content must be a string or a Blob');
    return { blob, name: input.name as string, description: typeof description === 'string' ? description : undefined };
  }
  throw new TypeError('[Svc] attachFile takes a File, a Blob or {name, content, mime?, description?}');
}

export function deviceOf(width: number, ua: string, touchPoints = 0): 'desktop' | 'tablet' | 'mobile' {
  if (/iPad|Tablet/i.test(ua) || (/Android/i.test(ua) && !/Mobile/i.test(ua))) return 'tablet';
  if (/Mobi|iPhone|Android/i.test(ua) || width < 600) return 'mobile';
  return /Macintosh/.test(ua) && touchPoints > 1 ? 'tablet' : 'desktop';
}

/**
 * Failed requests as `context.network` takes them: the widget's own requests left out, URLs made
 * absolute, every query value and anything else that looks like a secret masked.
 */
export function networkEntries(entries: NetEntry[], apiUrl: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const [method, given, status, durationMs, start] of entries) {
    let url = String(given);
    try {
      url = new URL(url, location.href).href;
    } catch {
      /* kept as given */
    }
    if (url.startsWith(apiUrl + '/')) continue;
    out.push({
      method: String(method || 'GET').toUpperCase().slice(0, 20),
      url: redactUrl(url, true).slice(0, 2000),
      status: Math.min(999, Math.max(0, status | 0)),
      durationMs: Math.max(0, durationMs),
      time: new Date(start).toISOString(),
    });
  }
  return out;
}

/** The most steps a report carries, and the oldest (ms before the report) `context.steps` takes. */
const MAX_STEPS = 50;
const MAX_STEP_AGE = 86_400_000;

/**
 * `context.steps`: the recorded actions with the console errors and failed requests placed among
 * them by time, oldest first, the last 50 of the last day; addresses and messages redacted as in
 * `context.network` and `consoleErrors`.
 */
export function stepsOf(recorded: RecordedStep[], errors: Array<[string, number]>, network: Record<string, unknown>[], now: number): Record<string, unknown>[] {
  const all: RecordedStep[] = recorded.map((step) => (step.kind === 'navigate' ? { ...step, url: redactUrl(String(step.url), true).slice(0, 2000) } : step));
  for (const [text, at] of errors) all.push({ kind: 'console', at, message: redactText(text).slice(0, 500) });
  // The failed requests as `context.network` has them (redacted, Svc's own left out), at their start.
  for (const { method, url, status, time } of network) all.push({ kind: 'request', at: Date.parse(String(time)), method, url, status });
  return all
    .filter((step) => typeof step.at === 'number' && now - step.at <= MAX_STEP_AGE)
    .sort((a, b) => a.at - b.at)
    .slice(-MAX_STEPS)
    .map(({ at, _el, ...step }) => ({ ...step, beforeMs: Math.max(0, Math.round(now - at)) }));
}

/** The page context of decisions §3, with secrets masked in the URL, console errors and failed requests. */
export function buildContext(h: CoreHost, flags: string[], source: string, extra: Record<string, unknown>, recorder: Recorder | null): Record<string, unknown> {
  const s = h.settings;
  const ua = navigator.userAgent;
  const ctx: Record<string, unknown> = {
    url: redactUrl(location.href),
    pathname: redactUrl(location.pathname),
    host: location.host,
    userAgent: ua,
    language: navigator.language || s.locale,
    viewport: { width: window.innerWidth, height: window.innerHeight },
    device: deviceOf(window.innerWidth, ua, navigator.maxTouchPoints || 0),
    timestamp: new Date().toISOString(),
    channelSource: source,
  };
  if (flags.length) ctx.flags = flags;
  if (s.reporter && s.reporter.profile) ctx.reporter = s.reporter.profile;
  const errors = h.errors();
  if (errors.length) ctx.consoleErrors = errors.map((e) => redactText(e[0]).slice(0, 2000));
  const network = networkEntries(h.network(), s.apiUrl);
  if (network.length) ctx.network = network;
  const steps = recorder ? stepsOf(recorder.steps(), errors, network, Date.now()) : [];
  if (steps.length) ctx.steps = steps;
  if (s.userId) ctx.userId = s.userId;
  const merged = { ...s.extra, ...extra };
  if (Object.keys(merged).length) ctx.extra = merged;
  const attrs = h.attributes();
  if (Object.keys(attrs).length) ctx.custom = { ...attrs };
  if (s.mode === 'artifact-review' && s.artifact) {
    ctx.artifact = s.artifact;
    ctx.artifactId = s.artifact.id;
  }
  return ctx;
}

export function makeCore(h: CoreHost): Core {
  // The options only the lazy parts use are checked now, before anything reads them.
  const s = complete(h.settings);
  // The reporter given to init is cached for later inits that give none.
  const reporterKey = h.ns + 'reporter:' + s.projectKey;
  if (s.reporter) save(reporterKey, s.reporter);
  else {
    const cached = load<{ token?: string; profile?: Record<string, unknown> } | null>(reporterKey, null);
    if (isObject(cached)) s.reporter = cached;
  }
  const client: Client = { apiUrl: s.apiUrl, projectKey: s.projectKey, identity: s.reporter && s.reporter.token };
  let auth: ReporterAuth = { mode: 'off', required: false };
  const setReporter = (r: Reporter | undefined) => {
    s.reporter = r;
    client.identity = r && r.token;
    save(reporterKey, r || null);
  };
  // When the reporter last looked at each of their reports (ms), to mark news.
  const seenKey = h.ns + 'seen:' + s.projectKey;
  const seenAt = load<Record<string, number>>(seenKey, {});
  const isNew = (r: ThreadReport) => Date.parse(r.lastActivity) > (seenAt[r.id] || Date.parse(r.createdAt));
  // The launcher carries a mark (and says so) while the reporter has answers they have not seen.
  let marked = false;
  const news = (count: number) => {
    const ui = h.ui();
    const b = ui && ui.launcher;
    if (!b) return;
    if (!marked) (marked = true), ui.addStyles(".launcher[data-news]::after{content:'';position:absolute;top:-3px;right:-3px;width:12px;height:12px;border-radius:50%;background:#c5221f;border:2px solid #fff}");
    const label = (b.getAttribute('aria-label') || '').replace(/ \(.*\)$/, '');
    b.toggleAttribute('data-news', count > 0);
    b.setAttribute('aria-label', count ? label + ' (' + (s.locale === 'ru' ? 'есть ответы' : 'new answers') + ')' : label);
  };
  let renewing: Promise<void> | null = null;
  /** Renews a signed-in reporter's token when it expires within five minutes; a dead session signs out. */
  function fresh(): Promise<void> {
    const r = s.reporter;
    if (!r || !r.session || !r.expiresAt || Date.parse(r.expiresAt) - Date.now() > 300000) return Promise.resolve();
    return (renewing = renewing || callJson<SignInAnswer>(client, 'GET', '/auth/reporter-token', undefined, r.session)
      .then((a) => setReporter({ ...r, token: a.token, expiresAt: a.expiresAt }), (e: SvcError) => {
        if (e.status === 401) setReporter(undefined);
      })
      .finally(() => (renewing = null)));
  }
  async function ask<T>(method: string, path: string, body?: unknown): Promise<T> {
    await fresh();
    return callJson<T>(client, method, path, body);
  }
  async function thread(): Promise<ThreadReport[]> {
    const known = h.sent().slice(0, 20).join(',');
    const answer = await ask<{ reports: ThreadReport[] }>('GET', '/ingest/reporter/reports?known=' + encodeURIComponent(known));
    news(answer.reports.filter(isNew).length);
    return answer.reports;
  }
  const flagSet = new Set<string>();
  const queue = new DeliveryQueue(h.queueKey, sendReport, (item, reportId) =>
    recordSent(h.historyKey, { id: item.id, reportId, title: item.title, channelKey: item.payload.channelKey, at: Date.now(), status: 'sent' }),
  );
  // A report the server refused (or one that waited too long) stays in History as failed.
  queue.onFailed = (item, error) =>
    recordSent(h.historyKey, { id: item.id, title: item.title, channelKey: item.payload.channelKey, at: Date.now(), status: 'failed', error });
  let timer = 0;

  // Hints and limits (and in shared-bundle mode the project itself).
  const ready = fetchConfig(h, client).then((c) => {
    if (c.reporterAuth) auth = c.reporterAuth;
    h.configure(c);
    // A reporter who can see answers is told of news by a mark on the launcher.
    if (s.reporter && s.reporter.token) thread().catch(() => undefined);
  }, (e) => {
    if (h.raw) warn('could not load the project configuration: ' + String((e as Error)?.message || e));
  });

  // The steps recorder and the selector code it uses load once the configuration is known (the
  // project may turn recording off) and the page is idle.
  let started: Recorder | null = null;
  const recorder = () => (s.recordSteps && h.allowed() && started) || null;
  ready.then(() => {
    if (!s.recordSteps || h.destroyed()) return;
    (window.requestIdleCallback || setTimeout)(() =>
      Promise.all([h.part<(host: RecorderHost) => Recorder>('recorder'), h.part<SelectorPart>('selector')])
        .then(([start, part]) => {
          if (!h.destroyed() && !started) started = start({ key: h.ns + 'steps', info: (el) => part.selectorInfo(el, s) });
        })
        .catch(() => undefined),
    );
  });

  function flushSoon(delay?: number): void {
    if (h.destroyed()) return;
    clearTimeout(timer);
    const run = () => {
      if (h.destroyed()) return;
      void queue.flush(delay === 0).then(() => {
        const next = queue.nextDelay();
        if (next !== null && !h.destroyed()) {
          clearTimeout(timer);
          timer = window.setTimeout(() => flushSoon(0), Math.max(next, 500));
        }
      });
    };
    if (delay === -1) {
      const idle = (window as unknown as { requestIdleCallback?: (cb: () => void, o?: object) => number }).requestIdleCallback;
      if (idle) idle(run, { timeout: 3000 });
      else timer = window.setTimeout(run, 500);
    } else {
      const next = delay !== undefined ? delay : queue.nextDelay();
      if (next !== null) timer = window.setTimeout(run, next);
    }
  }
  const online = () => flushSoon(0);
  window.addEventListener('online', online);
  flushSoon(-1);

  async function beforeReport(): Promise<Record<string, unknown>> {
    if (!s.beforeReport) return {};
    try {
      const r = await s.beforeReport();
      return isObject(r) ? r : {};
    } catch (e) {
      warn('beforeReport failed; sending the report unchanged: ' + String(e));
      return {};
    }
  }

  async function submit(blocks: RawBlock[], extra?: Record<string, unknown>, picked?: string): Promise<{ reportId: string }> {
    await fresh();
    const routed = picked ? { key: picked, source: 'panel' } : h.channel();
    const hook = await beforeReport();
    const all = blocks.slice();
    if (Array.isArray(hook.messages)) for (const m of hook.messages) if (typeof m === 'string' && m) all.push(...textBlocks(m));
    if (Array.isArray(hook.blocks)) for (const b of hook.blocks) if (isObject(b)) all.push(b as RawBlock);
    let channelKey = routed.key || undefined;
    let source = routed.source;
    if (typeof hook.channelKey === 'string' && hook.channelKey) {
      channelKey = hook.channelKey;
      source = 'beforeReport';
    }
    const context = buildContext(h, [...flagSet], source, { ...(extra || {}), ...(isObject(hook.extra) ? hook.extra : {}) }, recorder());
    // Frozen: retries send exactly this, and never call beforeReport again.
    const payload: Payload = plain({ blocks: all, context, ...(channelKey ? { channelKey } : {}) });
    const now = Date.now();
    const item: QueueItem = {
      id: newId(),
      apiUrl: client.apiUrl,
      projectKey: client.projectKey,
      identity: client.identity,
      payload,
      title: titleOf(all),
      attempts: 0,
      nextAt: now,
      createdAt: now,
    };
    const stored = queue.add(item);
    const outcome = await queue.attempt(item);
    const queued = !outcome.ok && stored && outcome.retry;
    // The steps went with this report; the next one starts from here.
    const steps = outcome.ok || queued ? recorder() : null;
    if (steps) steps.clear();
    if (outcome.ok) return { reportId: outcome.reportId };
    if (!queued) queue.remove(item.id);
    else flushSoon();
    throw new SvcError(outcome.error, 0, queued);
  }

  function uploadKind(kind: 'screenshot' | 'audio' | 'file', blob: Blob, name: string, fields?: Record<string, string>): Promise<Uploaded> {
    const max = h.limits()[kind + 'MaxBytes'];
    if (max && blob.size > max) return Promise.reject(new SvcError('block_too_large', 413, false, '[Svc] ' + name + ' is over the ' + max + '-byte ' + kind + ' limit'));
    if (!blob.size) return Promise.reject(new SvcError('file_required', 400, false, '[Svc] ' + name + ' is empty'));
    return uploadBlob(client, kind, blob, name, fields);
  }

  async function upload(input: FileAttachmentInput): Promise<RawBlock> {
    const f = toFile(input);
    const name = f.name.slice(0, 255);
    const up = await uploadKind('file', f.blob, name);
    const block: RawBlock = { type: 'file', blobId: up.blobId, name, mime: up.mime, bytes: up.bytes };
    if (f.description) block.description = f.description.slice(0, TEXT_MAX);
    return block;
  }

  const core: Core = {
    ready,
    submit,
    upload: uploadKind,
    limits: () => h.limits(),
    async sendDraft(text, channelKey) {
      // The reporter's message first: it says what the rest is about.
      const blocks = [...textBlocks(text.trim() ? text : ''), ...h.draft()];
      if (!blocks.length) throw new SvcError('empty', 0, false, '[Svc] nothing to send');
      try {
        const r = await submit(blocks, undefined, channelKey);
        h.saveDraft([]);
        return r;
      } catch (e) {
        if (!(e as SvcError).queued) throw e;
        h.saveDraft([]);
        return { queued: true };
      }
    },
    queue,
    auth: () => auth,
    reporter: () => s.reporter,
    signIn(a) {
      setReporter({ token: a.token, expiresAt: a.expiresAt, session: a.session, profile: { email: a.reporter.email, name: a.reporter.name } });
      thread().catch(() => undefined);
    },
    async signOut() {
      const r = s.reporter;
      setReporter(undefined);
      news(0);
      if (r && r.session) await callJson(client, 'DELETE', '/auth/reporter-token', undefined, r.session).catch(() => undefined);
    },
    ask,
    thread,
    isNew,
    seen(reports) {
      for (const r of reports) seenAt[r.id] = Date.parse(r.lastActivity);
      save(seenKey, seenAt);
      news(0);
    },
    flushSoon,
    flags: () => [...flagSet],
    stop() {
      if (started) started.stop();
      clearTimeout(timer);
      window.removeEventListener('online', online);
    },
    async alpha(key) {
      if (typeof key !== 'string' || !key) throw new TypeError('[Svc] alpha(key): key must be a string');
      try {
        const r = await callJson<{ enabled?: boolean }>(client, 'GET', '/ingest/flags/' + encodeURIComponent(key));
        if (r.enabled === true) {
          flagSet.add(key);
          return true;
        }
      } catch {
        /* unknown or unreachable: off */
      }
      return false;
    },
    async report(input) {
      if (!isObject(input) || typeof input.message !== 'string' || !input.message.trim()) {
        throw new TypeError('[Svc] report({message}): message must be a non-empty string');
      }
      if (input.extra != null && !isObject(input.extra)) throw new TypeError('[Svc] report: extra must be an object');
      const files = input.files == null ? [] : input.files;
      if (!Array.isArray(files)) throw new TypeError('[Svc] report: files must be an array');
      const fileBlocks: RawBlock[] = [];
      for (const f of files) fileBlocks.push(await upload(f));
      return submit([...textBlocks(input.message), ...fileBlocks], input.extra as Record<string, unknown> | undefined);
    },
    async attachFile(input) {
      const block = await upload(input);
      h.saveDraft([...h.draft(), block]);
      if (core.onDraft) core.onDraft();
      return block;
    },
  };
  return core;
}
