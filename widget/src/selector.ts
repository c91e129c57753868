// SelectorInfo for an element (interface.md "SelectorInfo", decisions §10): a short css selector by
// the spec's priority list (at most three segments, `matchIndex` when still ambiguous), a positional
// xpath, test ids of the node and up to 10 ancestors, a best-effort React component name, and the
// shadow hosts and frames to go through. Hash-like ids and classes are never used.

import { MASK_SELECTOR } from './mask';
import type { SelectorInfo, StructuredAttribute } from './types';

export const BUILTIN_TEST_ATTRS = ['data-testid', 'data-test-id', 'data-test', 'data-cy'];
const MEANINGFUL_ATTRS = ['aria-label', 'name', 'placeholder', 'alt', 'for', 'href', 'title', 'type', 'role'];
export const DEFAULT_STRUCTURED: StructuredAttribute[] = [{ attr: 'data-qa-data', keys: ['name', 'el'] }];

export interface SelectorOptions {
  testIdAttributes?: string[];
  structuredAttributes?: StructuredAttribute[];
}

/** Framework and generated names that change between builds or renders. */
const GENERATED = [
  /^:.*:$/, // React useId (`:r1:`, `:R2a:`)
  /:[rR][0-9a-zA-Z]*:/, // useId inside a longer id (`radix-:r1:`)
  /«[^»]*»/, // React 19 useId
  /^(ember|ext-gen|ext-comp|yui_|gwt-uid-|jss|mui-|react-select-|rc-[a-z]+-|headlessui-[a-z-]+-|__BVID__|v-)\d/,
  /^sc-[a-zA-Z0-9]{4,}/, // styled-components
  /^(css|emotion|svelte|jsx|astro|tw)-(?=[a-zA-Z]*\d)[a-zA-Z0-9]+/, // emotion, Svelte, styled-jsx, Astro
  /^_ng(content|host)-/,
  /^data-v-/,
  /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i, // UUID
  /^[0-9]/, // starts with a digit
  /\d{4,}/, // long numbers (timestamps, counters)
];

/** A part of a name between separators that looks machine-made. */
function randomPart(part: string): boolean {
  if (part.length < 4) return false;
  const digits = (part.match(/\d/g) || []).length;
  if (digits && digits < part.length && /^[0-9a-f]+$/i.test(part) && part.length >= 5) return true; // hex
  let flips = 0;
  let humps = 0;
  for (let i = 1; i < part.length; i++) {
    const a = part[i - 1];
    const b = part[i];
    if (/\d/.test(a) !== /\d/.test(b)) flips++;
    if (/[a-z]/.test(a) && /[A-Z]/.test(b)) humps++;
  }
  if (flips >= 2) return true; // letters and digits interleaved: `3xZ9a`, `a1b2`
  return part.length >= 5 && humps / part.length > 0.25; // `bdVaJa`, `kJhGfD`
}

/** Whether an id or class name is generated (CSS modules, CSS-in-JS, UUIDs, framework ids). */
export function isHashLike(name: string): boolean {
  if (!name || name.length > 48) return true;
  if (GENERATED.some((re) => re.test(name))) return true;
  // CSS modules: `Button_primary__3xZ9a`, `styles-module__title___1bXy2`
  const m = /_{1,3}([A-Za-z0-9-]{5,})$/.exec(name);
  if (m && /\d/.test(m[1]) && /[a-zA-Z]/.test(m[1])) return true;
  return name.split(/[-_:.]+/).some(randomPart);
}

/** CSS.escape for identifiers (also where the DOM has no CSS.escape). */
export function cssEscape(value: string): string {
  const native = (globalThis as { CSS?: { escape?: (s: string) => string } }).CSS;
  if (native && native.escape) return native.escape(value);
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const ch = value[i];
    const code = value.charCodeAt(i);
    if (code === 0) out += '\uFFFD';
    else if ((code >= 1 && code <= 31) || code === 127 || (/\d/.test(ch) && (i === 0 || (i === 1 && value[0] === '-'))))
      out += '\\' + code.toString(16) + ' ';
    else if (i === 0 && ch === '-' && value.length === 1) out += '\\-';
    else if (/[A-Za-z0-9_\-\u0080-\uFFFF]/.test(ch)) out += ch;
    else out += '\\' + ch;
  }
  return out;
}

/** A CSS string literal. */
function quote(value: string): string {
  return '"' + value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\a ') + '"';
}

type Root = Document | ShadowRoot;

function tagOf(el: Element): string {
  return cssEscape(el.localName);
}

/** Parses a packed value into `[key, written entry]` pairs (`key=value` or `key:value`). */
export function structuredEntries(value: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const entry of value.split(/[;,\s]+/)) {
    const m = /^([^=:]+)[=:](.*)$/.exec(entry);
    if (m && m[2] !== '') out.push([m[1], entry]);
  }
  return out;
}

/** Candidate segments for one element, in the spec's priority order; the last always exists. */
export function segments(el: Element, opts: SelectorOptions): string[] {
  const out: string[] = [];
  for (const s of opts.structuredAttributes || DEFAULT_STRUCTURED) {
    const v = el.getAttribute(s.attr);
    if (!v) continue;
    const entries = structuredEntries(v);
    for (const key of s.keys) {
      const hit = entries.find((e) => e[0] === key);
      if (hit) {
        out.push('[' + cssEscape(s.attr) + '*=' + quote(hit[1]) + ']');
        break;
      }
    }
  }
  for (const attr of [...(opts.testIdAttributes || []), ...BUILTIN_TEST_ATTRS]) {
    const v = el.getAttribute(attr);
    if (v) out.push('[' + cssEscape(attr) + '=' + quote(v) + ']');
  }
  const id = el.getAttribute('id');
  if (id && !isHashLike(id)) out.push('#' + cssEscape(id));
  const tag = tagOf(el);
  for (const attr of MEANINGFUL_ATTRS) {
    const v = el.getAttribute(attr);
    if (v && v.length <= 120 && !(attr === 'href' && /^(javascript:|data:)/i.test(v))) {
      out.push(tag + '[' + attr + '=' + quote(v) + ']');
    }
  }
  const classes = Array.from(el.classList || []).filter((c) => !isHashLike(c));
  if (classes.length) out.push(tag + classes.slice(0, 3).map((c) => '.' + cssEscape(c)).join(''));
  out.push(nthOfType(el));
  return out;
}

export function nthOfType(el: Element): string {
  let n = 1;
  for (let s = el.previousElementSibling; s; s = s.previousElementSibling) if (s.localName === el.localName) n++;
  return tagOf(el) + ':nth-of-type(' + n + ')';
}

function count(root: Root, css: string): number {
  try {
    return root.querySelectorAll(css).length;
  } catch {
    return Infinity;
  }
}

function contains(root: Root, css: string, el: Element): boolean {
  try {
    return Array.prototype.indexOf.call(root.querySelectorAll(css), el) >= 0;
  } catch {
    return false;
  }
}

interface Chain {
  css: string;
  top: Element;
  n: number;
}

/** The best selector for `el` within its own root: unique if three segments allow it. */
export function buildCss(el: Element, opts: SelectorOptions): { css: string; matchIndex?: number } {
  const root = el.getRootNode() as Root;
  const extend = (chain: Chain | null, node: Element): Chain[] => {
    const out: Chain[] = [];
    for (const seg of segments(node, opts)) {
      let css = seg;
      if (chain) css = seg + (chain.top.parentElement === node ? ' > ' : ' ') + chain.css;
      const n = count(root, css);
      if (n >= 1 && n !== Infinity && (chain || contains(root, css, el))) out.push({ css, top: node, n });
    }
    return out;
  };
  const pick = (chains: Chain[]): Chain | null =>
    chains.reduce<Chain | null>((best, c) => (!best || c.n < best.n ? c : best), null);

  let best = pick(extend(null, el));
  for (let depth = 1; depth < 3 && best && best.n > 1; depth++) {
    const base: Chain = best;
    const found: Chain[] = [];
    let a = base.top.parentElement;
    for (let up = 0; a && up < 6; up++, a = a.parentElement) {
      const chains = extend(base, a).filter((c) => contains(root, c.css, el));
      found.push(...chains);
      if (chains.some((c) => c.n === 1)) break;
    }
    const next = pick(found);
    if (!next || next.n >= base.n) break;
    best = next;
  }
  if (!best) return { css: nthOfType(el) };
  if (best.n === 1) return { css: best.css };
  const all = Array.prototype.slice.call(root.querySelectorAll(best.css)) as Element[];
  return { css: best.css, matchIndex: all.indexOf(el) };
}

/** Positional xpath from the body element (`/html/body/div[2]/button`); relative to a shadow root inside one. */
export function xpathOf(el: Element): string {
  const parts: string[] = [];
  for (let node: Element | null = el; node; node = node.parentElement) {
    const tag = node.localName;
    let index = 0;
    let same = 0;
    const parent: Element | null = node.parentElement;
    if (parent) {
      for (const sib of Array.from(parent.children) as Element[]) {
        if (sib.localName === tag) {
          same++;
          if (sib === node) index = same;
        }
      }
    }
    parts.unshift(same > 1 ? tag + '[' + index + ']' : tag);
  }
  return '/' + parts.join('/');
}

/** Parent across shadow boundaries. */
function composedParent(el: Element): Element | null {
  if (el.parentElement) return el.parentElement;
  const root = el.getRootNode();
  return root instanceof (el.ownerDocument.defaultView || window).ShadowRoot ? (root as ShadowRoot).host : null;
}

export function testIdsOf(el: Element, opts: SelectorOptions): string[] {
  const attrs = [...(opts.testIdAttributes || []), ...BUILTIN_TEST_ATTRS];
  const out: string[] = [];
  let node: Element | null = el;
  for (let i = 0; node && i <= 10; i++, node = composedParent(node)) {
    for (const a of attrs) {
      const v = node.getAttribute(a);
      if (v) {
        out.push(v);
        break;
      }
    }
  }
  return out;
}

/** The nearest React component name from React's internal fiber (best effort). */
export function reactComponentOf(el: Element): string | undefined {
  try {
    const key = Object.keys(el).find((k) => k.startsWith('__reactFiber$') || k.startsWith('__reactInternalInstance$'));
    let fiber = key ? (el as unknown as Record<string, { type?: unknown; return?: unknown }>)[key] : undefined;
    for (let i = 0; fiber && i < 50; i++) {
      const t = fiber.type as { displayName?: string; name?: string } | string | undefined;
      if (t && typeof t !== 'string') {
        const name = t.displayName || t.name;
        if (name && name.length <= 200) return name;
      }
      fiber = fiber.return as typeof fiber;
    }
  } catch {
    /* best effort */
  }
  return undefined;
}

/** The most characters of an element's text or accessible name that are kept. */
export const TEXT_MAX = 200;

const clean = (text: string | null | undefined) => (text || '').replace(/\s+/g, ' ').trim().slice(0, TEXT_MAX);
const FIELD = /^(input|textarea|select)$/;
const BUTTON_INPUT = /^(submit|button|reset)$/;

/** Whether the element is masked (a password field, or inside `[data-svc-mask]`): none of its text is kept. */
function masked(el: Element): boolean {
  return !!el.closest(MASK_SELECTOR);
}

/**
 * What the element shows as text, white space collapsed, cut to 200 characters: its rendered text
 * (innerText), without the text of masked descendants; never a form field's value (a button-like
 * input shows its label).
 */
export function elementText(el: Element): string {
  if (masked(el)) return '';
  if (FIELD.test(el.localName)) {
    const input = el as HTMLInputElement;
    return el.localName === 'input' && BUTTON_INPUT.test(input.type) ? clean(input.value) : '';
  }
  // Fields inside have no text of their own in innerText; masked parts are taken out of a copy.
  if (el.querySelector(MASK_SELECTOR)) {
    const copy = el.cloneNode(true) as Element;
    copy.querySelectorAll(MASK_SELECTOR + ',script,style,template,noscript').forEach((n) => n.remove());
    return clean(copy.textContent);
  }
  const inner = (el as HTMLElement).innerText;
  return clean(typeof inner === 'string' ? inner : el.textContent);
}

/**
 * The element's accessible name, as assistive technology would announce it (the common cases of
 * the accname rules): `aria-labelledby`, `aria-label`, a field's labels (else its placeholder),
 * `alt`, a button's, link's or heading's own text, `title`. Cut to 200 characters.
 */
export function accessibleName(el: Element): string {
  if (masked(el)) return '';
  const doc = el.ownerDocument;
  const by = el.getAttribute('aria-labelledby');
  const named = by && clean(by.split(/\s+/).map((id) => (doc.getElementById(id) || { textContent: '' }).textContent).join(' '));
  if (named) return named;
  const label = clean(el.getAttribute('aria-label'));
  if (label) return label;
  const tag = el.localName;
  if (FIELD.test(tag)) {
    const input = el as HTMLInputElement;
    const labels = input.labels ? clean(Array.from(input.labels).map((l) => l.textContent).join(' ')) : '';
    if (labels) return labels;
    if (tag === 'input' && BUTTON_INPUT.test(input.type)) return clean(input.value);
    if (tag === 'input' && input.type === 'image') return clean(el.getAttribute('alt'));
    const placeholder = clean(el.getAttribute('placeholder'));
    if (placeholder) return placeholder;
  }
  const alt = /^(img|area)$/.test(tag) && clean(el.getAttribute('alt'));
  if (alt) return alt;
  const role = el.getAttribute('role') || '';
  const fromContent =
    /^(button|a|summary|h[1-6]|option|label|legend|th|td|li|caption|figcaption|dt)$/.test(tag) ||
    /^(button|link|tab|menuitem\w*|option|heading|checkbox|radio|switch|cell|row|treeitem)$/.test(role);
  const text = fromContent && elementText(el);
  return text || clean(el.getAttribute('title'));
}

/** A unique selector for a shadow host or iframe: the built one, or one forced unique by position. */
function hostCss(el: Element, opts: SelectorOptions): string {
  const built = buildCss(el, opts);
  if (built.matchIndex === undefined) return built.css;
  const path: string[] = [];
  for (let n: Element | null = el; n; n = n.parentElement) path.unshift(nthOfType(n));
  const css = path.join(' > ');
  return count(el.getRootNode() as Root, css) === 1 ? css : built.css;
}

/** The whole SelectorInfo of an element, with the `selector` hook merged over it. */
export function selectorInfo(
  el: Element,
  opts: SelectorOptions & { selector?: (node: Element) => Partial<SelectorInfo> | null },
): SelectorInfo {
  const built = buildCss(el, opts);
  const info: SelectorInfo = { css: built.css, xpath: xpathOf(el), testIds: testIdsOf(el, opts) };
  if (built.matchIndex !== undefined) info.matchIndex = built.matchIndex;
  const react = reactComponentOf(el);
  if (react) info.reactComponent = react;
  const text = elementText(el);
  if (text) info.text = text;
  const name = accessibleName(el);
  if (name) info.accessibleName = name;

  const hosts: string[] = [];
  const frames: string[] = [];
  let node: Element = el;
  for (let guard = 0; guard < 40; guard++) {
    const root = node.getRootNode();
    const view = node.ownerDocument.defaultView;
    if (view && root instanceof view.ShadowRoot) {
      if (frames.length) break; // a frame inside a shadow root: keep the innermost levels only
      const host: Element = (root as ShadowRoot).host;
      hosts.unshift(hostCss(host, opts));
      node = host;
      continue;
    }
    let frame: Element | null = null;
    try {
      frame = view && view.frameElement;
    } catch {
      frame = null;
    }
    if (!frame) break;
    frames.unshift(hostCss(frame, opts));
    node = frame;
  }
  if (hosts.length) info.shadowHosts = hosts;
  if (frames.length) info.frames = frames;

  if (opts.selector) {
    try {
      const custom = opts.selector(el);
      if (custom && typeof custom === 'object') Object.assign(info, custom);
    } catch {
      /* the built-in result stands */
    }
  }
  return info;
}

/** Resolves a SelectorInfo back to its element (through frames and shadow hosts). */
export function resolve(info: SelectorInfo, doc: Document = document): Element | null {
  let root: Document | ShadowRoot = doc;
  try {
    for (const f of info.frames || []) {
      const frame = root.querySelector(f) as HTMLIFrameElement | null;
      if (!frame || !frame.contentDocument) return null;
      root = frame.contentDocument;
    }
    for (const h of info.shadowHosts || []) {
      const host: Element | null = root.querySelector(h);
      if (!host || !host.shadowRoot) return null;
      root = host.shadowRoot;
    }
    return root.querySelectorAll(info.css)[info.matchIndex ?? 0] || null;
  } catch {
    return null;
  }
}
