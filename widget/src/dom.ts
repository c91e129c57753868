// Small DOM helpers shared by the panel and the capture parts (each part bundles its own copy).

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** A real `<button type=button>` with a visible text or, for icon buttons, an accessible name. */
export function button(cls: string, text: string, onClick: (e: MouseEvent) => void, label?: string): HTMLButtonElement {
  const b = el('button', cls);
  b.type = 'button';
  if (text) b.textContent = text;
  if (label) b.setAttribute('aria-label', label);
  b.addEventListener('click', onClick);
  return b;
}

/** Focusable controls inside `root`, in order, skipping hidden and disabled ones. */
export function focusables(root: Element): HTMLElement[] {
  return Array.from(root.querySelectorAll<HTMLElement>('button,textarea,select,input:not([type=file]),a[href],[tabindex]:not([tabindex="-1"])')).filter(
    (n) => !(n as HTMLButtonElement).disabled && n.getClientRects().length > 0,
  );
}

/** Keeps Tab and Shift+Tab inside `root`; returns true when it moved the focus. */
export function trapTab(e: KeyboardEvent, root: Element, active: Element | null): boolean {
  if (e.key !== 'Tab') return false;
  const list = focusables(root);
  if (!list.length) return false;
  const first = list[0];
  const last = list[list.length - 1];
  const inside = !!active && root.contains(active);
  if (!inside || (e.shiftKey && active === first) || (!e.shiftKey && active === last)) {
    e.preventDefault();
    (e.shiftKey ? (inside ? last : first) : inside ? first : first).focus();
    return true;
  }
  return false;
}

/** The focused element, looking into open shadow roots. */
export function deepActive(): Element | null {
  let a: Element | null = document.activeElement;
  while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
  return a;
}

/** Whether a node belongs to one of our widgets (host elements carry data-svc-widget). */
export function ours(node: Node | null): boolean {
  for (let n: Node | null = node; n; n = n.parentNode || (n as ShadowRoot).host || null) {
    if (n.nodeType === 1 && (n as Element).hasAttribute('data-svc-widget')) return true;
  }
  return false;
}

/** 16px line icons (stroke = currentColor). */
export const ICONS: Record<string, string> = {
  camera: 'M2 5h3l1.5-2h3L11 5h3v8H2zM8 11a2.5 2.5 0 1 0 0-5 2.5 2.5 0 0 0 0 5z',
  mic: 'M8 1.5a2 2 0 0 1 2 2v4a2 2 0 0 1-4 0v-4a2 2 0 0 1 2-2zM4 7.5a4 4 0 0 0 8 0M8 11.5v3',
  clip: 'M13 7.5l-5 5a3 3 0 0 1-4.3-4.3l5.5-5.5a2 2 0 0 1 2.8 2.8L6.6 10.9a1 1 0 0 1-1.4-1.4L10 4.7',
  quote: 'M3 4h4v4c0 2-1 3.5-3 4M9 4h4v4c0 2-1 3.5-3 4',
  pin: 'M8 14.5s-4.5-4-4.5-7.5a4.5 4.5 0 0 1 9 0c0 3.5-4.5 7.5-4.5 7.5zM8 8.5a1.5 1.5 0 1 0 0-3 1.5 1.5 0 0 0 0 3z',
  x: 'M4 4l8 8M12 4l-8 8',
  text: 'M3 4h10M3 8h10M3 12h6',
  file: 'M4 1.5h5l3.5 3.5v9.5H4zM9 1.5V5h3.5',
  clock: 'M8 14.5a6.5 6.5 0 1 0 0-13 6.5 6.5 0 0 0 0 13zM8 4.5V8l2.5 1.5',
};

export function icon(name: string): SVGSVGElement {
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('viewBox', '0 0 16 16');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('class', 'i');
  const p = document.createElementNS('http://www.w3.org/2000/svg', 'path');
  p.setAttribute('d', ICONS[name]);
  svg.appendChild(p);
  return svg;
}
