// Svc.init options: type checks, defaults, clamps. A wrong option logs a warning and falls back; it
// never throws (except a missing projectKey, which leaves nothing to run).

import { DEFAULT_STRUCTURED } from './selector';
import { isObject, warn } from './util';
import type { ArtifactMeta, InitOptions, Reporter, StructuredAttribute } from './types';

export const MASCOTS = ['gecko', 'owl', 'fox', 'cat', 'axolotl', 'raccoon', 'chameleon', 'otter', 'robot', 'blob'];
export const SHAPES = ['frame-tab', 'bubble', 'tab', 'pill', 'blob'];
export const ANCHORS = ['top-left', 'top-center', 'top-right', 'middle-left', 'middle-right', 'bottom-left', 'bottom-center', 'bottom-right'];
export const TRIGGERS = ['frame-tab', 'devwidget', 'none'];

export interface Settings {
  projectKey: string;
  locale: 'en' | 'ru';
  apiUrl: string;
  userId?: string;
  extra: Record<string, unknown>;
  captureConsoleErrors: boolean;
  captureNetworkErrors: boolean;
  mascot: string;
  shape: string;
  anchor: string;
  triggerVariant: string;
  size: number;
  offsetX: number;
  offsetY: number;
  widgetId: string;
  attributes: Record<string, unknown>;
  onChannelChange?: InitOptions['onChannelChange'];
  beforeReport?: InitOptions['beforeReport'];
  pushToTalkKey?: string;
  mode: 'default' | 'artifact-review';
  artifact?: ArtifactMeta;
  reporter?: Reporter;
  selector?: InitOptions['selector'];
  testIdAttributes: string[];
  structuredAttributes: StructuredAttribute[];
  /** behave as if the page matched the project's urlPatterns */
  ignoreUrlPatterns: boolean;
  /** the options as given to init */
  raw: Record<string, unknown>;
  /** set once `complete` checked the options the lazy parts use */
  complete?: boolean;
}

export function detectLocale(language: string | undefined): 'en' | 'ru' {
  return /^ru\b/i.test(language || '') ? 'ru' : 'en';
}

const str = (v: unknown): v is string => typeof v === 'string';

/** Checks ArtifactMeta (id 1 to 200 characters, url http or https); the first invalid field, or null. */
export function artifactProblem(a: unknown): string | null {
  if (!isObject(a)) return 'artifact';
  if (!str(a.id) || !(a.id as string).length || (a.id as string).length > 200) return 'id';
  for (const k of ['title', 'tool', 'source', 'goal']) if (a[k] != null && !str(a[k])) return k;
  if (a.constraints != null && !(Array.isArray(a.constraints) && a.constraints.every(str))) return 'constraints';
  if (a.url != null && !(str(a.url) && /^https?:\/\//i.test(a.url as string))) return 'url';
  if (a.meta != null && !(isObject(a.meta) && Object.values(a.meta).every(str))) return 'meta';
  return null;
}

function stringList(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((s) => str(s) && s.length > 0);
}

/** `pick(name, check, default)` over the raw options: a wrong value warns and gives the default. */
function picker(o: Record<string, unknown>) {
  return <T>(name: string, check: (v: unknown) => boolean, dflt: T): T => {
    const v = o[name];
    if (v === undefined || v === null) return dflt;
    if (check(v)) return v as T;
    warn('invalid init option ' + name + ' (see /v1/svc.d.ts): default used');
    return dflt;
  };
}
const oneOf = (list: string[]) => (v: unknown) => str(v) && list.includes(v);
const fn = (v: unknown) => typeof v === 'function';

/**
 * Normalizes raw options over the project's widget configuration (`project`) and the built-in
 * defaults: what the loader needs at once (the launcher, routing, capture). The options only the
 * lazy parts use (mode and artifact, extra, beforeReport, reporter, pushToTalkKey and the selector
 * options) are checked by [`complete`] when the core part starts, before any of them is read.
 * `fallbackApiUrl` is the loader script's origin (else the service's base address).
 */
export function normalize(raw: InitOptions, project: Record<string, unknown>, fallbackApiUrl: string, language?: string): Settings {
  const o = (isObject(raw) ? raw : {}) as Record<string, unknown>;
  const projectKey = str(o.projectKey) ? o.projectKey.trim() : '';
  if (!projectKey) throw new TypeError('[Svc] init: projectKey (string) is required');

  const pick = picker(o);
  const num = (v: unknown) => typeof v === 'number' && isFinite(v);
  const bool = (v: unknown) => typeof v === 'boolean';
  const proj = (name: string, list: string[] | null, dflt: string | number) => {
    const v = project[name];
    if (list ? str(v) && list.includes(v) : num(v)) return v as string | number;
    return dflt;
  };

  const apiUrl = pick<string>('apiUrl', (v) => str(v) && /^https?:\/\//i.test(v), fallbackApiUrl).replace(/\/+$/, '');
  let size = pick<number>('size', num, proj('size', null, 44) as number);
  if (size < 32 || size > 64) {
    if (o.size != null) warn('init option size clamped to 32..64');
    size = Math.min(64, Math.max(32, size));
  }
  const userId = pick<string | undefined>('userId', (v) => str(v) && v.length <= 200, undefined);
  const widgetId = pick<string>('widgetId', (v) => str(v) && /^[A-Za-z][\w-]{0,63}$/.test(v), 'svc-' + projectKey.replace(/^pr_/, '').slice(0, 12));

  return {
    projectKey,
    locale: pick('locale', oneOf(['en', 'ru']), detectLocale(language)),
    apiUrl,
    userId: userId || undefined,
    captureConsoleErrors: pick('captureConsoleErrors', bool, true),
    captureNetworkErrors: pick('captureNetworkErrors', bool, true),
    mascot: pick('mascot', oneOf(MASCOTS), proj('mascot', MASCOTS, 'fox') as string),
    shape: pick('shape', oneOf(SHAPES), proj('shape', SHAPES, 'bubble') as string),
    anchor: pick('anchor', oneOf(ANCHORS), proj('anchor', ANCHORS, 'middle-right') as string),
    triggerVariant: pick('triggerVariant', oneOf(TRIGGERS), proj('triggerVariant', TRIGGERS, 'frame-tab') as string),
    size,
    offsetX: pick('offsetX', num, proj('offsetX', null, 0) as number),
    offsetY: pick('offsetY', num, proj('offsetY', null, 0) as number),
    widgetId,
    attributes: pick('attributes', isObject, {}),
    onChannelChange: pick('onChannelChange', fn, undefined),
    ignoreUrlPatterns: o.ignoreUrlPatterns === true,
    raw: o,
  } as Settings;
}

/**
 * The rest of the options, checked once (by the core part, before the panel, the selector code or
 * a report reads them): mode and artifact, extra, beforeReport, reporter, pushToTalkKey, selector,
 * testIdAttributes and structuredAttributes (a script tag's `data-structured-attrs` arrives as
 * its text and is parsed here).
 */
export function complete(s: Settings): Settings {
  if (s.complete) return s;
  const o = s.raw;
  const pick = picker(o);
  let mode = pick<'default' | 'artifact-review'>('mode', oneOf(['default', 'artifact-review']), 'default');
  let artifact: ArtifactMeta | undefined;
  if (o.artifact != null) {
    const problem = artifactProblem(o.artifact);
    if (problem) warn('invalid init option artifact.' + problem + ': ignored');
    else artifact = o.artifact as ArtifactMeta;
  }
  if (mode === 'artifact-review' && !artifact) {
    warn('artifact-review mode needs an artifact: default mode used');
    mode = 'default';
  }

  let reporter: Reporter | undefined;
  if (o.reporter != null) {
    const r = o.reporter as Record<string, unknown>;
    if (isObject(r) && (r.token === undefined || str(r.token)) && (r.profile === undefined || isObject(r.profile))) {
      reporter = { token: r.token as string | undefined, profile: r.profile as Record<string, unknown> | undefined };
    } else pick('reporter', () => false, undefined);
  }

  let structured = DEFAULT_STRUCTURED;
  let list = o.structuredAttributes;
  if (str(list)) list = parseStructured(list);
  if (list != null) {
    if (Array.isArray(list) && list.every((x) => isObject(x) && str(x.attr) && x.attr && stringList(x.keys))) {
      structured = list as StructuredAttribute[];
    } else pick('structuredAttributes', () => false, undefined);
  }

  return Object.assign(s, {
    complete: true,
    extra: pick('extra', isObject, {}),
    beforeReport: pick('beforeReport', fn, undefined),
    pushToTalkKey: pick('pushToTalkKey', (v) => str(v) && v.length > 0, undefined),
    mode,
    artifact,
    reporter,
    selector: pick('selector', fn, undefined),
    testIdAttributes: pick('testIdAttributes', stringList, []),
    structuredAttributes: structured,
  });
}

/** `data-structured-attrs`: entries separated by `;`, each `attr:key1,key2`. */
export function parseStructured(text: string): StructuredAttribute[] {
  return text
    .split(';')
    .map((entry) => {
      const i = entry.indexOf(':');
      return { attr: i < 0 ? '' : entry.slice(0, i).trim(), keys: entry.slice(i + 1).split(',').map((k) => k.trim()).filter(Boolean) };
    })
    .filter((x) => x.attr && x.keys.length);
}

/** Options from a script tag's data-* attributes. */
export function fromScriptTag(el: HTMLOrSVGScriptElement | null): Partial<InitOptions> {
  const out: Partial<InitOptions> = {};
  if (!el || !el.getAttribute) return out;
  const get = (name: string) => {
    const v = el.getAttribute('data-' + name);
    return v == null || v.trim() === '' ? undefined : v.trim();
  };
  const key = get('project-key');
  if (key) out.projectKey = key;
  const mode = get('mode');
  if (mode) out.mode = mode as InitOptions['mode'];
  const artifactId = get('artifact-id');
  if (artifactId) out.artifact = { id: artifactId };
  if (el.hasAttribute('data-ignore-url-patterns')) out.ignoreUrlPatterns = true;
  const testIds = get('testid-attrs');
  if (testIds) out.testIdAttributes = testIds.split(',').map((s) => s.trim()).filter(Boolean);
  // Parsed with the other lazily checked options (see `complete`).
  const structured = get('structured-attrs');
  if (structured) out.structuredAttributes = structured as unknown as StructuredAttribute[];
  return out;
}
