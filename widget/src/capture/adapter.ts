// The screenshot engine behind a small adapter, so it can change: modern-screenshot renders the
// page's DOM into a canvas (no permission prompt). Only the viewport is taken, our own widgets are
// left out, and password fields and [data-svc-mask] elements are painted over.

import { domToCanvas } from 'modern-screenshot';
import { MASK_SELECTOR } from '../mask';

export { MASK_SELECTOR };

/** A form field whose value is empty: its placeholder is a hint, never drawn as if it were typed. */
function emptyField(node: Node): node is HTMLInputElement | HTMLTextAreaElement {
  if (node.nodeType !== 1) return false;
  const tag = (node as Element).localName;
  if (tag === 'textarea') return !(node.textContent || (node as HTMLTextAreaElement).value);
  return tag === 'input' && !(node as Element).getAttribute('value');
}

/** The viewport as a canvas (device pixels, at most 2x), with masked areas painted over. */
export async function captureViewport(): Promise<HTMLCanvasElement> {
  const width = window.innerWidth;
  const height = window.innerHeight;
  const scale = Math.min(2, window.devicePixelRatio || 1);
  const sx = window.scrollX;
  const sy = window.scrollY;
  const masks = Array.from(document.querySelectorAll(MASK_SELECTOR)).map((m) => m.getBoundingClientRect());
  const canvas = await domToCanvas(document.documentElement, {
    width,
    height,
    scale,
    backgroundColor: getComputedStyle(document.body).backgroundColor === 'rgba(0, 0, 0, 0)' ? '#ffffff' : null,
    filter: (node) => !(node.nodeType === 1 && ((node as Element).hasAttribute('data-svc-widget') || (node as Element).id.startsWith('__SANDBOX__'))),
    // The page scrolled: move the copy so the visible part lands in the picture.
    style: sx || sy ? { transform: `translate(${-sx}px, ${-sy}px)` } : undefined,
    // Password values never reach the picture, even before the mask is painted; placeholders of
    // empty fields are left out (the copy renders them like typed text).
    onCloneEachNode: (clone) => {
      if (clone.nodeType === 1 && (clone as Element).matches(MASK_SELECTOR)) {
        if ((clone as HTMLInputElement).value !== undefined) (clone as HTMLInputElement).value = '';
        (clone as Element).replaceChildren();
      }
      if (emptyField(clone)) clone.removeAttribute('placeholder');
    },
    font: false,
    timeout: 10000,
  });
  const ctx = canvas.getContext('2d') as CanvasRenderingContext2D;
  for (const r of masks) {
    if (r.right < 0 || r.bottom < 0 || r.left > width || r.top > height || !r.width || !r.height) continue;
    ctx.fillStyle = '#6b6b76';
    ctx.fillRect(r.left * scale, r.top * scale, r.width * scale, r.height * scale);
  }
  return canvas;
}
