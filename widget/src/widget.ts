// One initialized widget: settings, channels and routing, context, draft thread, delivery queue,
// history, the launcher and the lazy parts.

import type { Configured, Core, CoreHost } from './core';
import type { ErrorBuffer } from './console-capture';
import type { NetEntry } from './network-capture';
import { urlAllowed } from './glob';
import { historyList } from './history';
import { detectLocale, normalize, type Settings } from './options';
import type { QueueItem } from './queue';
import { route, type Override, type RouteEnv } from './routing';
import type { SelectorPart } from './parts/selector';
import type { RawBlock, Channel, FileAttachmentInput, Hint, HistoryEntry, InitOptions, Preset, SelectorInfo, Weight } from './types';
import { Ui } from './ui';
import { isObject, load, save, warn } from './util';

const argError = (method: string) => new TypeError('[Svc] ' + method + ': invalid arguments (see /v1/svc.d.ts)');
const copy = <T>(v: T): T => JSON.parse(JSON.stringify(v));

export interface Env {
  /** where lazy parts are fetched from (the loader script's origin, else apiUrl) */
  partsBase: string;
  nonce?: string;
  errors: ErrorBuffer;
  /** failed requests since the script ran (see network-capture.ts) */
  net: NetEntry[];
  loadPart: (name: string, base: string, nonce?: string) => Promise<unknown>;
}

/** What the panel part gets from the loader: its shadow root, the widget and the sending engine. */
export interface PartHost {
  root: ShadowRoot;
  /** the launcher button (null when triggerVariant is 'none') */
  launcher: HTMLButtonElement | null;
  settings: Settings;
  /** adds a stylesheet; the result replaces its text (for positions that change) */
  addStyles(css: string): (css: string) => void;
  /** loads another lazy part (screenshot, voice, pinpoint, selector, mascots) */
  part<T>(name: string): Promise<T>;
  widget: Widget;
  core: Core;
}

export interface PartInstance {
  open(): void;
  close(): void;
  isOpen(): boolean;
  destroy(): void;
}

export type PartFactory = (host: PartHost) => PartInstance;

const LABELS = { en: ['Send feedback', 'Feedback'], ru: ['Отправить отзыв', 'Отзыв'] };

export class Widget {
  s: Settings;
  private _channelList: Channel[] = [];
  private _defaultKey?: string;
  private _urlPatterns?: string[];
  private _hints: Hint[] = [];
  private _limits: Record<string, number> = {};
  private _attributes: Record<string, unknown>;
  private _override: Override | null = null;
  private _active: string | null = null;
  private _source = 'default';
  private _ui: Ui | null = null;
  private _visible = true;
  private _forced = false;
  private _timers: number[] = [];
  private _listeners: Array<[EventTarget, string, EventListener]> = [];
  private _lastHref = '';
  private _panel: PartInstance | null = null;
  private _panelLoading: Promise<PartInstance> | null = null;
  private _corePromise: Promise<Core> | null = null;
  private _coreNow: Core | null = null;
  destroyed = false;
  private _ns: string;
  private _svg?: string;
  private _full = false;

  constructor(
    private _raw: InitOptions,
    preset: Preset | null,
    private _env: Env,
  ) {
    const options = _raw;
    const own = preset && preset.projectKey === (options && options.projectKey) ? preset : null;
    this.s = normalize(options, (own && own.widgetConfig) || {}, _env.partsBase || (own && own.apiUrl) || location.origin, navigator.language);
    const s = this.s;
    this._ns = 'svc:' + s.widgetId + ':';
    this._attributes = { ...s.attributes };
    if (own) {
      this._applyProject(own);
      // The per-project loader carries the configured mascot; any other comes from the mascots part.
      if (own.widgetConfig && own.widgetConfig.mascot === s.mascot) this._svg = own.mascotSvg;
    }
    this._full = !own;

    this._lastHref = location.href;
    this._reroute();
    this._mount();
    this._listen(window, 'popstate', () => this._checkUrl());
    this._listen(window, 'hashchange', () => this._checkUrl());
    this._timers.push(window.setInterval(() => this._checkUrl(), 1000));
    // The sending engine comes right after: it loads the hints and limits (and, for the shared
    // bundle, the project), flushes the retry queue and keeps reports made offline later.
    this._timers.push(window.setTimeout(() => this._core().catch(() => undefined), 0));
  }

  // ---- project data --------------------------------------------------------------------------

  private _applyProject(p: Partial<Preset>): void {
    if (Array.isArray(p.channels)) this._channelList = p.channels.filter((c) => c && typeof c.key === 'string');
    if (typeof p.defaultChannelKey === 'string') this._defaultKey = p.defaultChannelKey;
    if (Array.isArray(p.urlPatterns)) this._urlPatterns = p.urlPatterns;
  }

  /**
   * What the core part fetched: hints and limits, and in shared-bundle mode the project (the
   * appearance it gives, already normalized under the init options, arrives as `look`).
   */
  private _configure(c: Configured): void {
    if (this.destroyed) return;
    this._hints = c.hints;
    this._limits = c.limits;
    if (c.project) this._applyProject(c.project);
    const look = c.look || {};
    const keys = Object.keys(look).filter((k) => (this.s as unknown as Record<string, unknown>)[k] !== look[k]);
    for (const k of keys) (this.s as unknown as Record<string, unknown>)[k] = look[k];
    if (keys.length) this._remount();
    this._reroute();
    this._updateUi();
  }

  // ---- routing -------------------------------------------------------------------------------

  private _envForRouting(): RouteEnv {
    return {
      url: location.href,
      path: location.pathname,
      host: location.host,
      userId: this.s.userId,
      locale: this.s.locale,
      attributes: this._attributes,
    };
  }

  _reroute(): void {
    if (this.destroyed) return;
    const r = route(this._channelList, this._envForRouting(), this._hints, this._override, this._defaultKey);
    this._source = r.source;
    if (r.key !== this._active) {
      const prev = this._active;
      this._active = r.key;
      const cb = this.s.onChannelChange;
      if (cb) {
        const next = r.key ? { key: r.key } : null;
        const before = prev ? { key: prev } : null;
        queueMicrotask(() => {
          if (this.destroyed) return;
          try {
            cb(next, before);
          } catch (e) {
            warn('onChannelChange threw: ' + String(e));
          }
        });
      }
    }
  }

  private _checkUrl(): void {
    if (location.href === this._lastHref) return;
    this._lastHref = location.href;
    this._reroute();
    this._updateUi();
  }

  _allowed(): boolean {
    return this.s.ignoreUrlPatterns || urlAllowed(this._urlPatterns, location.href);
  }

  // ---- UI ------------------------------------------------------------------------------------

  private _mount(): void {
    const go = () => {
      if (this.destroyed || this._ui) return;
      const ui = (this._ui = new Ui(
        this.s,
        this._env.nonce,
        () => (this._panel && this._panel.isOpen() ? this._panel.close() : void this.openForm()),
        () => this._prefetch(),
        LABELS[this.s.locale],
      ));
      if (ui.launcher) {
        // In a task of its own: the first SVG a page parses is slow, and the launcher, the styles
        // and the mascot together made one long task.
        if (this._svg) this._timers.push(window.setTimeout(() => ui.mascot(this._svg), 0));
        else this._part<Record<string, string>>('mascots').then((m) => ui.mascot(m[this.s.mascot]), () => undefined);
      }
      this._updateUi();
    };
    if (document.body) go();
    else this._listen(document, 'DOMContentLoaded', go);
  }

  private _remount(): void {
    if (!this._ui) return;
    const panelOpen = !!this._panel;
    if (this._panel) this._panel.destroy();
    this._panel = null;
    this._panelLoading = null;
    this._ui.remove();
    this._ui = null;
    this._mount();
    if (panelOpen) void this.openForm();
  }

  private _updateUi(): void {
    if (this._ui) this._ui.update(this._visible, this._forced || this._allowed());
  }

  show(): void {
    this._visible = true;
    this._forced = true;
    this._updateUi();
  }

  hide(): void {
    this._visible = false;
    this._forced = false;
    this._updateUi();
  }

  /** Launcher hover or focus: the panel is fetched before the click. */
  private _prefetch(): void {
    for (const name of ['panel', 'mascots']) this._part(name).catch(() => undefined);
  }

  async openForm(): Promise<void> {
    if (!this._ui) this._mount();
    if (!this._ui) throw new Error('[Svc] the page has no document body yet');
    this._visible = true;
    this._updateUi();
    if (!this._panelLoading) {
      this._panelLoading = Promise.all([this._part<PartFactory>('panel'), this._core()]).then(([factory, core]) => {
        const ui = this._ui as Ui;
        return (this._panel = factory({
          root: ui.root,
          launcher: ui.launcher,
          settings: this.s,
          addStyles: (css) => ui.addStyles(css),
          part: (name) => this._part(name),
          widget: this,
          core,
        }));
      });
      this._panelLoading.catch(() => (this._panelLoading = null));
    }
    const panel = await this._panelLoading;
    if (!this.destroyed) panel.open();
  }

  // ---- draft thread --------------------------------------------------------------------------

  /** Local storage key of the draft thread (the panel keeps its unsent text beside it, under key + ':text'). */
  draftKey(): string {
    const id = this.s.mode === 'artifact-review' && this.s.artifact ? this.s.artifact.id : this.s.projectKey;
    return this._ns + 'draft:' + id;
  }

  draft(): RawBlock[] {
    const d = load<RawBlock[]>(this.draftKey(), []);
    return Array.isArray(d) ? d : [];
  }

  saveDraft(blocks: RawBlock[]): void {
    save(this.draftKey(), blocks.length ? blocks : null);
  }

  // ---- attributes and channels ---------------------------------------------------------------

  setAttribute(key: string, value: unknown): void {
    if (typeof key !== 'string' || !key) throw argError('setAttribute');
    if (value === undefined) delete this._attributes[key];
    else this._attributes[key] = value;
    this._reroute();
  }

  setAttributes(values: Record<string, unknown>): void {
    if (!isObject(values)) throw argError('setAttributes');
    for (const k of Object.keys(values)) {
      if (values[k] === undefined) delete this._attributes[k];
      else this._attributes[k] = values[k];
    }
    this._reroute();
  }

  setChannel(key: string, opts?: { weight?: Weight }): void {
    if (typeof key !== 'string' || !key) throw argError('setChannel');
    let weight: Weight = 'max';
    const w = opts && opts.weight;
    if (w !== undefined) {
      if (w === 'max' || w === 'suggest' || (typeof w === 'number' && isFinite(w))) weight = w;
      else warn('setChannel: invalid weight, "max" used');
    }
    if (this._channelList.length && !this._channelList.some((c) => c.key === key)) warn('setChannel: unknown channel ' + key);
    this._override = { key, weight };
    this._reroute();
  }

  clearChannel(): void {
    this._override = null;
    this._reroute();
  }

  getChannel(): Channel | null {
    if (!this._active) return null;
    const c = this._channelList.find((ch) => ch.key === this._active);
    return c ? copy(c) : { key: this._active };
  }

  getChannels(): Channel[] {
    return copy(this._channelList);
  }

  // ---- sending (the lazy core part) ---------------------------------------------------------

  private _core(): Promise<Core> {
    if (!this._corePromise) {
      const p = this._part<(h: CoreHost) => Core>('core').then((make) => (this._coreNow = make(this._coreHost())));
      p.catch(() => (this._corePromise = null));
      this._corePromise = p;
    }
    return this._corePromise;
  }

  private _coreHost(): CoreHost {
    return {
      settings: this.s,
      ns: this._ns,
      queueKey: this._key('queue'),
      historyKey: this._key('history'),
      destroyed: () => this.destroyed,
      limits: () => this._limits,
      raw: this._full ? this._raw : null,
      configure: (c) => this._configure(c),
      channel: () => {
        this._reroute();
        return { key: this._active, source: this._source };
      },
      attributes: () => this._attributes,
      errors: () => (this.s.captureConsoleErrors && this._allowed() ? this._env.errors.list() : []),
      network: () => (this.s.captureNetworkErrors && this._allowed() ? this._env.net.slice() : []),
      allowed: () => this._allowed(),
      part: (name) => this._part(name),
      draft: () => this.draft(),
      saveDraft: (blocks) => this.saveDraft(blocks),
      sent: () => this.history().map((e) => e.reportId as string).filter(Boolean),
      ui: () => this._ui,
      normalize,
    };
  }

  async report(input: { message: string; extra?: Record<string, unknown>; files?: FileAttachmentInput[] }): Promise<{ reportId: string }> {
    return (await this._core()).report(input);
  }

  async attachFile(input: FileAttachmentInput): Promise<RawBlock> {
    return (await this._core()).attachFile(input);
  }

  async alpha(key: string): Promise<boolean> {
    return (await this._core()).alpha(key);
  }

  /** Local storage key of the project's `queue` or `history`. */
  private _key(kind: string): string {
    return this._ns + kind + ':' + this.s.projectKey;
  }

  history(): HistoryEntry[] {
    return historyList(this._key('history'), load<QueueItem[]>(this._key('queue'), []));
  }

  // ---- selectors and teardown ----------------------------------------------------------------

  private _part<T>(name: string): Promise<T> {
    return this._env.loadPart(name, this._env.partsBase || this.s.apiUrl, this._env.nonce) as Promise<T>;
  }

  /** The SelectorInfo of an element (the selector code is a lazy part). */
  async selectorFor(node: Element): Promise<SelectorInfo> {
    if (!node || node.nodeType !== 1) throw argError('selectorFor');
    // The core part checks the selector options first.
    const [part] = await Promise.all([this._part<SelectorPart>('selector'), this._core()]);
    return part.selectorInfo(node, this.s);
  }

  private _listen(target: EventTarget, type: string, fn: EventListener): void {
    target.addEventListener(type, fn);
    this._listeners.push([target, type, fn]);
  }

  destroy(): void {
    this.destroyed = true;
    for (const t of this._timers) window.clearInterval(t);
    if (this._coreNow) this._coreNow.stop();
    for (const [t, type, fn] of this._listeners) t.removeEventListener(type, fn);
    if (this._panel) this._panel.destroy();
    if (this._ui) this._ui.remove();
    this._ui = null;
    this._panel = null;
  }
}

export { detectLocale };
