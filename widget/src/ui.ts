// The widget's host element: one open shadow root, styles through adoptedStyleSheets (fallback
// `<style nonce>`), no inline style strings, system fonts, px units. The loader draws only the
// launcher; the panel comes from a lazy part.

import type { Settings } from './options';

const MASCOT_COLORS: Record<string, string> = {
  gecko: '#4caf50', owl: '#8d6e63', fox: '#f57c00', cat: '#607d8b', axolotl: '#ec407a',
  raccoon: '#546e7a', chameleon: '#26a69a', otter: '#795548', robot: '#5c6bc0', blob: '#7e57c2',
};

/** Adds a stylesheet to a shadow root (constructable sheet, else `<style nonce>`). */
export function addStyles(root: ShadowRoot, css: string, nonce?: string): void {
  try {
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(css);
    root.adoptedStyleSheets = [...root.adoptedStyleSheets, sheet];
    return;
  } catch {
    /* older engines */
  }
  const style = document.createElement('style');
  if (nonce) style.setAttribute('nonce', nonce);
  style.textContent = css;
  root.appendChild(style);
}

export function hostCss(s: Settings): string {
  const [v, h] = s.anchor.split('-');
  const edge = s.shape === 'frame-tab' || s.triggerVariant === 'frame-tab' ? 0 : 16;
  const rules: string[] = ['position:fixed', 'z-index:2147483000'];
  const transforms: string[] = [];
  if (v === 'top') rules.push('top:' + (edge + s.offsetY) + 'px');
  else if (v === 'bottom') rules.push('bottom:' + (edge + s.offsetY) + 'px');
  else rules.push('top:calc(50% + ' + s.offsetY + 'px)'), transforms.push('translateY(-50%)');
  if (h === 'left') rules.push('left:' + (edge + s.offsetX) + 'px');
  else if (h === 'right') rules.push('right:' + (edge + s.offsetX) + 'px');
  else rules.push('left:calc(50% + ' + s.offsetX + 'px)'), transforms.push('translateX(-50%)');
  if (transforms.length) rules.push('transform:' + transforms.join(' '));
  const color = MASCOT_COLORS[s.mascot] || '#f57c00';
  const size = s.size;
  return `:host{all:initial;${rules.join(';')};font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d1d1f}
:host([hidden]),.off{display:none!important}
.launcher{all:unset;box-sizing:border-box;cursor:pointer;display:flex;align-items:center;justify-content:center;gap:6px;min-width:${size}px;height:${size}px;background:${color};color:#fff;box-shadow:0 2px 8px rgba(0,0,0,.25)}
.launcher:focus-visible{outline:2px solid #1a73e8;outline-offset:2px}
.launcher svg{width:${Math.round(size * 0.6)}px;height:${Math.round(size * 0.6)}px}
.bubble{border-radius:50%;width:${size}px}
.pill{border-radius:${size}px;padding:0 14px}
.tab{border-radius:8px 8px 0 0;padding:0 12px}
.blob{border-radius:60% 40% 55% 45%/50% 60% 40% 50%;width:${size}px}
.frame-tab{border-radius:8px 0 0 8px;width:${Math.round(size * 0.8)}px}
.devwidget{border-radius:6px;height:28px;min-width:0;padding:0 10px;font:12px/1 ui-monospace,monospace;background:#1d1d1f}
.label{font-weight:600}`;
}

/** The configured mascot's face (the others come with the panel). */
function mascotSvg(): string {
  return '<svg viewBox="0 0 24 24" aria-hidden="true" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round"><path d="M4 5h16v11H9l-5 4z"/><circle cx="9.5" cy="10.5" r=".6"/><circle cx="14.5" cy="10.5" r=".6"/></svg>';
}

export class Ui {
  host: HTMLElement;
  root: ShadowRoot;
  private _launcher: HTMLButtonElement | null = null;

  constructor(
    s: Settings,
    private _nonce: string | undefined,
    onLaunch: () => void,
    label: string,
  ) {
    const existing = document.getElementById(s.widgetId);
    if (existing && existing.hasAttribute('data-svc-widget')) existing.remove();
    this.host = document.createElement('div');
    this.host.id = s.widgetId;
    this.host.setAttribute('data-svc-widget', '');
    this.root = this.host.attachShadow({ mode: 'open' });
    addStyles(this.root, hostCss(s), _nonce);
    if (s.triggerVariant !== 'none') {
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'launcher ' + (s.triggerVariant === 'devwidget' ? 'devwidget' : s.triggerVariant === 'frame-tab' && s.shape === 'bubble' ? 'frame-tab' : s.shape);
      b.setAttribute('aria-label', label);
      b.setAttribute('part', 'launcher');
      b.innerHTML = s.triggerVariant === 'devwidget' ? '<span class="label"></span>' : mascotSvg();
      if (s.triggerVariant === 'devwidget') (b.firstChild as HTMLElement).textContent = label;
      b.addEventListener('click', onLaunch);
      this._launcher = b;
      this.root.appendChild(b);
    }
    (document.body || document.documentElement).appendChild(this.host);
  }

  /** Shows or hides the launcher (the panel, when open, follows `widgetVisible`). */
  update(widgetVisible: boolean, launcherVisible: boolean): void {
    this.host.hidden = !widgetVisible;
    if (this._launcher) this._launcher.classList.toggle('off', !launcherVisible);
  }

  addStyles(css: string): void {
    addStyles(this.root, css, this._nonce);
  }

  remove(): void {
    this.host.remove();
  }
}
