// The widget's host element: one open shadow root, styles through adoptedStyleSheets (fallback
// `<style nonce>`), no inline style attributes, system fonts, px units. The host itself is a
// zero-size box; the launcher and the panel are fixed-positioned inside it, so nothing of ours
// covers the page beyond what is drawn. The loader draws only the launcher (with the configured
// mascot, baked into the per-project loader); the panel comes from a lazy part.

import type { Settings } from './options';

/** Adds a stylesheet to a shadow root (constructable sheet, else `<style nonce>`); returns a function that replaces its text. */
export function addStyles(root: ShadowRoot, css: string, nonce?: string): (css: string) => void {
  try {
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(css);
    root.adoptedStyleSheets = [...root.adoptedStyleSheets, sheet];
    return (next) => sheet.replaceSync(next);
  } catch {
    /* older engines */
  }
  const style = document.createElement('style');
  if (nonce) style.setAttribute('nonce', nonce);
  style.textContent = css;
  root.appendChild(style);
  return (next) => (style.textContent = next);
}

/** The launcher's styles: anchor, offsets (positive is inward), shape and size. */
export function hostCss(s: Settings): string {
  const [v, h] = s.anchor.split('-');
  const tab = s.shape === 'frame-tab' && s.triggerVariant !== 'devwidget';
  const edge = tab ? 0 : 16;
  const size = s.size;
  const rules: string[] = [];
  const shift: string[] = ['0', '0'];
  if (v === 'middle') rules.push('top:calc(50% + ' + s.offsetY + 'px)'), (shift[1] = '-50%');
  else rules.push(v + ':' + (edge + s.offsetY) + 'px');
  if (h === 'center') rules.push('left:calc(50% + ' + s.offsetX + 'px)'), (shift[0] = '-50%');
  else rules.push(h + ':' + (edge + s.offsetX) + 'px');
  // A frame tab sits flush with the nearest edge and is rounded on its inner side.
  const side = h === 'left' ? 0 : h === 'right' ? 1 : v === 'top' ? 2 : 3;
  const shapes: Record<string, string> = {
    bubble: `border-radius:50%;width:${size}px`,
    pill: `border-radius:${size}px;padding:0 14px 0 8px`,
    tab: 'border-radius:10px;padding:0 12px 0 8px',
    blob: `border-radius:60% 40% 55% 45%/50% 60% 40% 50%;width:${size}px`,
    'frame-tab': `border-radius:${['0 12px 12px 0', '12px 0 0 12px', '0 0 12px 12px', '12px 12px 0 0'][side]};width:${Math.round(size * 0.85)}px`,
  };
  const icon = Math.round(size * (s.shape === 'bubble' || s.shape === 'blob' ? 0.72 : 0.62));
  return `:host{all:initial!important;display:block!important;position:fixed!important;top:0!important;left:0!important;width:0!important;height:0!important;z-index:2147483647!important}
:host([hidden]),.off{display:none!important}
.launcher{all:unset;position:fixed;${rules.join(';')};transform:translate(${shift.join(',')});box-sizing:border-box;cursor:pointer;display:flex;align-items:center;justify-content:center;gap:6px;min-width:${size}px;height:${size}px;background:#fff;color:#1d1d1f;border:1px solid rgba(0,0,0,.12);box-shadow:0 2px 10px rgba(0,0,0,.22);font:600 14px/1 system-ui,sans-serif;${shapes[s.shape] || shapes.bubble}}
.launcher:focus-visible{outline:3px solid #1a56db;outline-offset:2px}
.m,.m svg{display:block;width:${icon}px;height:${icon}px;flex:none}
.devwidget{border-radius:6px;height:30px;min-width:0;width:auto;padding:0 10px 0 6px;background:#1d1d1f;color:#fff;border-color:#1d1d1f;font:600 12px/1 ui-monospace,monospace}
.devwidget .m,.devwidget .m svg{width:20px;height:20px}
@media (prefers-reduced-motion:no-preference){.launcher{transition:translate .15s,box-shadow .15s}.launcher:hover{translate:0 -2px;box-shadow:0 4px 14px rgba(0,0,0,.28)}}`;
}

export class Ui {
  host: HTMLElement;
  root: ShadowRoot;
  launcher: HTMLButtonElement | null = null;
  private _mascot: HTMLElement | null = null;

  constructor(
    s: Settings,
    private _nonce: string | undefined,
    onLaunch: () => void,
    onHover: () => void,
    labels: string[],
  ) {
    const existing = document.getElementById(s.widgetId);
    if (existing && existing.hasAttribute('data-svc-widget')) existing.remove();
    this.host = document.createElement('div');
    this.host.id = s.widgetId;
    this.host.setAttribute('data-svc-widget', '');
    this.root = this.host.attachShadow({ mode: 'open' });
    addStyles(this.root, hostCss(s), _nonce);
    if (s.triggerVariant !== 'none') {
      const b = (this.launcher = document.createElement('button'));
      const dev = s.triggerVariant === 'devwidget';
      b.type = 'button';
      b.className = 'launcher ' + (dev ? 'devwidget' : s.shape);
      b.setAttribute('aria-label', labels[0]);
      b.setAttribute('aria-haspopup', 'dialog');
      b.setAttribute('aria-expanded', 'false');
      b.setAttribute('part', 'launcher');
      const m = (this._mascot = document.createElement('span'));
      m.className = 'm';
      m.setAttribute('aria-hidden', 'true');
      b.appendChild(m);
      // Pills, tabs and the developer widget carry a visible label as well.
      if (dev || s.shape === 'pill' || s.shape === 'tab') b.appendChild(document.createTextNode(labels[1]));
      b.addEventListener('click', onLaunch);
      b.addEventListener('pointerenter', onHover);
      b.addEventListener('focus', onHover);
      this.root.appendChild(b);
    }
    (document.body || document.documentElement).appendChild(this.host);
  }

  /** Draws the mascot (an SVG of ours: the baked-in one or one from the `mascots` part). */
  mascot(svg: string | undefined): void {
    if (this._mascot && svg) this._mascot.innerHTML = svg;
  }

  /** Shows or hides the launcher (the panel, when open, follows `widgetVisible`). */
  update(widgetVisible: boolean, launcherVisible: boolean): void {
    this.host.hidden = !widgetVisible;
    if (this.launcher) this.launcher.classList.toggle('off', !launcherVisible);
  }

  addStyles(css: string): (css: string) => void {
    return addStyles(this.root, css, this._nonce);
  }

  remove(): void {
    this.host.remove();
  }
}
