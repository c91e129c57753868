// Pinpoint (lazy part, artifact-review mode): the reporter points at an element of the page. The
// element under the pointer is outlined; a click picks it (the page never sees that click); Esc or
// the Cancel button gives up. Our own widgets are never picked.

import type { SelectorInfo } from '../types';
import { button, el, ours } from '../dom';

export interface Picked {
  el: Element;
  /** where the click landed, relative to the element (0 to 1) */
  point: { x: number; y: number };
  /** the element's box in page coordinates (px) */
  rect: { x: number; y: number; width: number; height: number };
  /** filled in by the panel */
  info?: SelectorInfo;
}

const CSS = `.pp{position:fixed;inset:0;z-index:3;pointer-events:none}
.pp .hl{position:fixed;border:2px solid #1a56db;background:rgba(26,86,219,.12);border-radius:3px;pointer-events:none;display:none}
.pp .bar{position:fixed;top:12px;left:50%;transform:translateX(-50%);display:flex;gap:12px;align-items:center;max-width:calc(100vw - 24px);padding:8px 8px 8px 14px;background:#1d1d1f;color:#fff;border-radius:10px;box-shadow:0 6px 24px rgba(0,0,0,.3);pointer-events:auto}
.pp .bar button{background:#fff;color:#1d1d1f;border-color:#fff}`;

const round = (n: number) => Math.round(n * 100) / 100;

export function pick(o: {
  root: ShadowRoot;
  addStyles: (css: string) => (css: string) => void;
  hint: string;
  cancel: string;
}): Promise<Picked | null> {
  o.addStyles(CSS);
  const place = o.addStyles('');
  const layer = el('div', 'pp ui');
  const hl = el('div', 'hl');
  const bar = el('div', 'bar');
  bar.setAttribute('role', 'dialog');
  bar.setAttribute('aria-label', o.hint);
  const hint = el('span', undefined, o.hint);
  hint.setAttribute('role', 'status');
  layer.append(hl, bar);
  o.root.appendChild(layer);

  return new Promise((resolve) => {
    const target = (e: Event): Element | null => {
      const first = e.composedPath()[0] as Element | undefined;
      return first && first.nodeType === 1 && !ours(first) ? first : null;
    };
    const onMove = (e: Event) => {
      const t = target(e);
      if (!t) return place('.pp .hl{display:none}');
      const r = t.getBoundingClientRect();
      place(`.pp .hl{display:block;left:${r.left - 2}px;top:${r.top - 2}px;width:${r.width + 4}px;height:${r.height + 4}px}`);
    };
    const swallow = (e: Event) => {
      if (target(e)) e.preventDefault(), e.stopPropagation();
    };
    const onClick = (e: MouseEvent) => {
      const t = target(e);
      if (!t) return;
      e.preventDefault();
      e.stopPropagation();
      const r = t.getBoundingClientRect();
      const rel = (v: number, size: number) => (size > 0 ? Math.min(1, Math.max(0, round(v / size))) : 0.5);
      finish({
        el: t,
        point: { x: rel(e.clientX - r.left, r.width), y: rel(e.clientY - r.top, r.height) },
        rect: { x: Math.round(r.left + scrollX), y: Math.round(r.top + scrollY), width: Math.round(r.width), height: Math.round(r.height) },
      });
    };
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') e.preventDefault(), e.stopPropagation(), finish(null);
    };
    const events: Array<[string, EventListener]> = [
      ['mousemove', onMove],
      ['pointerdown', swallow],
      ['mousedown', swallow],
      ['pointerup', swallow],
      ['mouseup', swallow],
      ['click', onClick as EventListener],
      ['keydown', onKey as EventListener],
    ];
    for (const [type, fn] of events) window.addEventListener(type, fn, true);
    const cancel = button('', o.cancel, () => finish(null));
    bar.append(hint, cancel);
    cancel.focus();
    function finish(result: Picked | null) {
      for (const [type, fn] of events) window.removeEventListener(type, fn, true);
      layer.remove();
      place('');
      resolve(result);
    }
  });
}

const define = (window as unknown as { __svcDefine?: (name: string, value: unknown) => void }).__svcDefine;
if (define) define('pinpoint', { pick });
