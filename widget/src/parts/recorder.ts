// The steps recorder, a lazy part the loader fetches when the page is idle (docs/widget.md, "Steps"):
// the last 50 user actions on the page, kept in memory and in sessionStorage (so a reload or a
// navigation inside the site keeps them), sent only inside a report. A handler does no more than
// note the action and its element; the element's selector is worked out later, when the page is
// idle (or the page is left, or a report is sent), so an action costs the page almost nothing.
//
// Never kept: what is typed into a field (only its type, length and whether it changed), unless
// the site marks the field `data-svc-record`; anything inside `[data-svc-mask]` but the fact that
// something happened there. A select's chosen option and a checkbox's or radio's state are kept.

import type { SelectorInfo } from '../types';

/** A step as recorded: `at` is its time (ms since the epoch); `_el` its element until resolved. */
export type RecordedStep = Record<string, unknown> & { kind: string; at: number; _el?: Element };

export interface RecorderHost {
  /** the sessionStorage key of this widget's steps */
  key: string;
  /** the element's SelectorInfo (the selector part) */
  info(el: Element): SelectorInfo;
}

export interface Recorder {
  /** the steps so far, oldest first, their elements resolved */
  steps(): RecordedStep[];
  /** forgets every step (after a report took them) */
  clear(): void;
  stop(): void;
}

const MAX_STEPS = 50;
const PRIVATE = '[data-svc-mask]';
const FIELD = /^(input|select|textarea)$/;
const TICKED = /^(checkbox|radio)$/;
// What a click is described by: the control around the clicked element (found when resolving).
const CONTROL = 'a,button,summary,label,[role],[data-testid],[onclick]';

function start(host: RecorderHost): Recorder {
  const store = window.sessionStorage;
  const offs: Array<() => void> = [];
  let steps: RecordedStep[] = [];
  try {
    const kept = JSON.parse(store.getItem(host.key) || '[]');
    if (Array.isArray(kept)) steps = kept;
  } catch {
    /* nothing kept, or storage refused */
  }
  let idle = 0;
  // The input step being typed, and its field: further typing in the same field updates it.
  let typing: RecordedStep | null = null;
  let field: Element | null = null;

  const last = () => steps[steps.length - 1];
  const resolve = () => {
    for (const step of steps) {
      let el = step._el;
      if (!el) continue;
      delete step._el;
      if (step.kind === 'click') el = el.closest(CONTROL) || el;
      try {
        const info = host.info(el);
        const target: Record<string, unknown> = { css: info.css, tag: el.localName };
        if (info.testIds && info.testIds.length) target.testIds = info.testIds.slice(0, 10);
        if (info.text) target.text = info.text;
        if (info.accessibleName) target.accessibleName = info.accessibleName;
        step.target = target;
      } catch {
        /* a step without its element still says what happened */
      }
    }
  };
  const save = () => {
    idle = 0;
    resolve();
    try {
      store.setItem(host.key, JSON.stringify(steps));
    } catch {
      /* storage full or refused: the steps stay in memory */
    }
  };
  // A timer, then an idle callback from it: registering an idle callback costs a click handler
  // several times what a timer does (measured at 4x CPU throttling).
  const later = () => {
    const ric = window.requestIdleCallback;
    if (!idle) idle = window.setTimeout(() => (ric ? ric(save, { timeout: 2000 }) : save()), 300);
  };
  const push = (step: RecordedStep) => {
    steps.push(step);
    if (steps.length > MAX_STEPS) steps.splice(0, steps.length - MAX_STEPS);
    later();
    return step;
  };
  /** The last step when it is of `kind` (so a burst is one step), else a new one; its time is now. */
  const coalesced = (kind: string) => {
    const prev = last();
    const step = prev && prev.kind === kind ? prev : push({ kind, at: 0 });
    step.at = Date.now();
    later();
    return step;
  };
  const on = (target: EventTarget, type: string, fn: (e: Event) => void) => {
    target.addEventListener(type, fn, { capture: true, passive: true });
    offs.push(() => target.removeEventListener(type, fn, true));
  };
  /** The page element a person's event acted on; null for the widget's own and scripted events. */
  const element = (e: Event): Element | null => {
    const target = e.target as Element;
    // Inside the widget's shadow root the event is retargeted to its host; inside a page's own
    // open shadow root the inner element is the one to describe (the path is built only then).
    if (!e.isTrusted || !target || target.nodeType !== 1 || target.hasAttribute('data-svc-widget')) return null;
    const el = (target.shadowRoot ? e.composedPath()[0] : target) as Element;
    if (el.nodeType !== 1) return null;
    if (el.closest(PRIVATE)) {
      coalesced('private');
      return null;
    }
    return el;
  };
  const act = (kind: string, el: Element, more?: Record<string, unknown>) => {
    typing = null;
    const step: RecordedStep = { kind, at: Date.now(), _el: el };
    push(more ? Object.assign(step, more) : step);
  };

  on(document, 'click', (e) => {
    const el = element(e);
    // A field's own steps (input, change) say what happened to it; a button-like input is a button.
    if (!el || (FIELD.test(el.localName) && !/^(button|submit|reset|image)$/.test((el as HTMLInputElement).type))) return;
    act('click', el);
  });
  on(document, 'input', (e) => {
    const el = element(e) as HTMLInputElement | null;
    if (!el) return;
    const tag = el.localName;
    const editable = !FIELD.test(tag);
    if (tag === 'select' || TICKED.test(el.type) || (editable && !el.isContentEditable)) return;
    const value = editable ? el.innerText || '' : el.value;
    if (el !== field || typing !== last()) {
      act('input', el, { inputType: editable ? 'contenteditable' : tag === 'textarea' ? 'textarea' : el.type });
      typing = last();
      field = el;
    }
    const step = typing as RecordedStep;
    step.at = Date.now();
    // A password's length is left out too.
    if (el.type !== 'password') step.length = value.length;
    step.changed = value !== (editable ? '' : el.defaultValue);
    if (el.closest('[data-svc-record]')) step.value = value.slice(0, 500);
    later();
  });
  on(document, 'change', (e) => {
    const el = element(e) as HTMLSelectElement | null;
    if (!el) return;
    if (el.localName === 'select') {
      act('change', el, { value: Array.from(el.selectedOptions, (o) => o.text.trim()).join(', ').slice(0, 500) });
    } else if (TICKED.test(el.type)) {
      act('change', el, { value: (el as unknown as HTMLInputElement).checked ? 'checked' : 'unchecked' });
    }
  });
  on(document, 'keydown', (e) => {
    const key = (e as KeyboardEvent).key;
    if (key !== 'Enter' && key !== 'Escape' && key !== 'Tab') return;
    const el = element(e);
    if (el && (key !== 'Tab' || FIELD.test(el.localName))) act('key', el, { key });
  });
  on(window, 'scroll', (e) => {
    if (e.target !== document) return;
    const step = coalesced('scroll');
    step.x = Math.round(window.scrollX);
    step.y = Math.round(window.scrollY);
  });
  on(window, 'resize', () => {
    const step = coalesced('resize');
    step.width = window.innerWidth;
    step.height = window.innerHeight;
  });

  const navigate = (via: string, at = Date.now()) => {
    const prev = last();
    if (via !== 'load' && prev && prev.kind === 'navigate' && prev.url === location.href) return;
    typing = null;
    push({ kind: 'navigate', at: Math.round(at), url: location.href, via });
  };
  for (const [name, via] of [
    ['pushState', 'push'],
    ['replaceState', 'replace'],
  ] as const) {
    const original = history[name];
    history[name] = function (this: History) {
      const result = original.apply(this, arguments as unknown as Parameters<History['pushState']>);
      navigate(via);
      return result;
    };
    offs.push(() => (history[name] = original));
  }
  on(window, 'popstate', () => navigate('pop'));
  on(window, 'hashchange', () => navigate('hash'));
  on(window, 'pagehide', save);
  // This page's own load, at the time it began.
  navigate('load', performance.timeOrigin || Date.now());

  return {
    steps() {
      resolve();
      return steps.map((step) => ({ ...step }));
    },
    clear() {
      steps = [];
      typing = null;
      save();
    },
    stop() {
      offs.forEach((off) => off());
      offs.length = 0;
    },
  };
}

const define = (window as unknown as { __svcDefine?: (name: string, value: unknown) => void }).__svcDefine;
if (define) define('recorder', start);
