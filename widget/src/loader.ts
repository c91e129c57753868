// The loader: defines `window.Svc`, replays calls queued by an early stub, starts console capture,
// and initializes itself from the baked-in project (per-project loader) or from the script tag's
// `data-project-key` (shared bundle). Lazy parts are fetched on demand from `/v1/parts/`.

import { ErrorBuffer, installCapture } from './console-capture';
import { installNetwork, type NetEntry } from './network-capture';
import { fromScriptTag } from './options';
import type { Api, InitOptions, Preset } from './types';
import { warn } from './util';
import { Widget, type Env } from './widget';

declare const __SVC_PARTS__: Record<string, string>;
declare const __SVC_VERSION__: string;
/** Set by the per-project loader, which wraps this file in `(function (__svcPreset) {...})(config)`. */
declare const __svcPreset: Preset | undefined;

type Win = Window &
  typeof globalThis & {
    Svc?: unknown;
    __svcErrors?: ErrorBuffer;
    __svcNet?: NetEntry[];
    __svcDefine?: (name: string, factory: unknown) => void;
    __svcParts?: Record<string, { promise: Promise<unknown>; resolve: (f: unknown) => void }>;
  };

const win = window as Win;
const script = document.currentScript as HTMLScriptElement | null;
const preset: Preset | null = typeof __svcPreset !== 'undefined' && __svcPreset ? __svcPreset : null;
let scriptOrigin = '';
try {
  if (script && script.src) scriptOrigin = new URL(script.src, location.href).origin;
} catch {
  /* inlined */
}
const nonce = (script && (script.nonce || script.getAttribute('nonce'))) || undefined;

const errors = (win.__svcErrors = win.__svcErrors || new ErrorBuffer());
installCapture(win, errors);
const net = (win.__svcNet = win.__svcNet || []);
installNetwork(win, net);

const parts = (win.__svcParts = win.__svcParts || {});
function slot(name: string) {
  if (!parts[name]) {
    let resolve!: (f: unknown) => void;
    const promise = new Promise<unknown>((r) => (resolve = r));
    parts[name] = { promise, resolve };
  }
  return parts[name];
}
win.__svcDefine =
  win.__svcDefine ||
  ((name: string, factory: unknown) => {
    slot(name).resolve(factory);
  });

const requested: Record<string, Promise<unknown>> = {};
function loadPart(name: string, base: string, partNonce?: string): Promise<unknown> {
  const file = __SVC_PARTS__[name];
  if (!file) return Promise.reject(new Error('[Svc] no part ' + name));
  if (!requested[name]) {
    requested[name] = new Promise<unknown>((resolve, reject) => {
      const s = document.createElement('script');
      s.src = base + '/v1/parts/' + file;
      s.async = true;
      if (partNonce) s.nonce = partNonce;
      s.onerror = () => {
        delete requested[name];
        s.remove();
        reject(new Error('[Svc] could not load the ' + name + ' part'));
      };
      slot(name).promise.then(resolve);
      (document.head || document.documentElement).appendChild(s);
    });
  }
  return requested[name];
}

const env: Env = { partsBase: scriptOrigin, nonce, errors, net, loadPart };

const METHODS = [
  'report', 'attachFile', 'alpha', 'show', 'hide', 'openForm', 'setAttribute', 'setAttributes',
  'setChannel', 'clearChannel', 'getChannel', 'getChannels', 'getHistory', 'selectorFor',
] as const satisfies readonly (keyof Api)[];

export function makeApi(initialPreset: Preset | null) {
  let current: Widget | null = null;
  // The loader's own auto-init, waiting for its task (see `autoInit` below).
  let pending: InitOptions | null = null;
  const start = (options: InitOptions) => {
    pending = null;
    if (current) current.destroy();
    current = null;
    try {
      current = new Widget(options, initialPreset, env);
    } catch (e) {
      console.warn(String((e as Error)?.message || e));
    }
  };
  const settle = () => {
    if (pending) start(pending);
  };
  const need = (name: string): Widget => {
    settle();
    if (!current || current.destroyed) throw new Error('[Svc] ' + name + '() needs Svc.init({projectKey}) first');
    return current;
  };
  const api: Record<string, unknown> = {
    version: __SVC_VERSION__,
    __svc: true,
    instances: {} as Record<string, unknown>,
    init: start,
    destroy() {
      pending = null;
      if (current) current.destroy();
      current = null;
    },
    isInitialized: () => !!pending || (!!current && !current.destroyed),
    /** The reports this browser sent for the project (last 20) plus the queued ones. */
    getHistory: () => need('getHistory').history(),
  };
  for (const m of METHODS) {
    if (api[m]) continue;
    api[m] = (...args: unknown[]) => {
      const w = need(m);
      return (w[m as keyof Widget] as (...a: unknown[]) => unknown).apply(w, args);
    };
  }
  /**
   * The loader's auto-init: in a task of its own, right after the loader script (which may run
   * inside the page's HTML parsing task: the two together made one long task). Any call that needs
   * the widget before then initializes it at once.
   */
  const autoInit = (options: InitOptions) => {
    pending = options;
    window.setTimeout(settle, 0);
  };
  return { api, autoInit };
}

function boot(): void {
  const existing = win.Svc as unknown as Record<string, unknown> | ((...a: unknown[]) => void) | undefined;
  const tag = fromScriptTag(script);
  const auto: InitOptions | null = preset
    ? ({ ...tag, projectKey: tag.projectKey || preset.projectKey } as InitOptions)
    : tag.projectKey
      ? (tag as InitOptions)
      : null;

  if (existing && (existing as Record<string, unknown>).__svc) {
    // A second loader on the page: another project's widget lives beside the first.
    if (!auto) return;
    const svc = existing as Record<string, unknown> & { isInitialized(): boolean; init(o: InitOptions): void };
    if (!svc.isInitialized()) {
      svc.init(auto);
      return;
    }
    const other = makeApi(preset).api;
    (other.init as (o: InitOptions) => void)(auto);
    (svc.instances as Record<string, unknown>)[auto.projectKey] = other;
    return;
  }

  const { api, autoInit } = makeApi(preset);
  const queued = existing && Array.isArray((existing as { q?: unknown }).q) ? ((existing as { q: unknown[] }).q as ArrayLike<unknown>[]) : [];
  win.Svc = api as unknown as Win['Svc'];
  if (auto) autoInit(auto);
  // Calls made through an early stub: Svc('init', {...}), Svc('setAttribute', 'plan', 'pro'), ...
  for (const call of queued) {
    const [name, ...args] = Array.prototype.slice.call(call) as [string, ...unknown[]];
    try {
      const fn = api[name];
      if (typeof fn === 'function') {
        const r = fn(...args);
        if (r && typeof (r as Promise<unknown>).catch === 'function') (r as Promise<unknown>).catch((e) => warn(name + ': ' + String(e)));
      } else warn('unknown queued call ' + name);
    } catch (e) {
      warn(name + ': ' + String((e as Error)?.message || e));
    }
  }
}

boot();
