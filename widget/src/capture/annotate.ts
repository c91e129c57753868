// The annotation step after a screenshot: rectangle, arrow, pen and blur, drawn with the pointer on
// the captured picture. Everything drawn is burned into the pixels that are uploaded (blur too, so
// what was blurred cannot be recovered) and listed as `annotations` in image pixel coordinates.

import { button, el, trapTab } from '../dom';

export type Kind = 'rect' | 'arrow' | 'pen' | 'blur';
export interface Shape {
  kind: Kind;
  points: number[][];
  color?: string;
}
export interface Annotated {
  blob: Blob;
  width: number;
  height: number;
  annotations: Shape[];
}

const COLOR = '#e53935';
const KINDS: Kind[] = ['rect', 'arrow', 'pen', 'blur'];

const CSS = `.shot{position:fixed;inset:0;z-index:4;display:flex;flex-direction:column;align-items:center;justify-content:center;gap:10px;padding:12px;background:rgba(20,20,24,.78)}
.shot .bar{display:flex;gap:6px;flex-wrap:wrap;align-items:center;justify-content:center;padding:8px;background:#fff;border-radius:12px;box-shadow:0 6px 24px rgba(0,0,0,.3);max-width:100%}
.shot .bar h2{margin:0 8px 0 4px;font-size:14px;font-weight:650}
.shot .sep{width:1px;align-self:stretch;background:#e0e0e6;margin:0 4px}
.shot canvas{display:block;max-width:100%;max-height:calc(100vh - 110px);min-height:0;background:#fff;border-radius:6px;box-shadow:0 6px 24px rgba(0,0,0,.4);cursor:crosshair;touch-action:none}`;

/**
 * Blurs a region in place, for good: the region is shrunk by halving (each step averages 2x2
 * pixels) to about one sample per `cell` pixels, drawn back smoothly, then softened once more with
 * the canvas blur filter where there is one. Nothing of the original detail survives.
 */
export function blurRegion(ctx: CanvasRenderingContext2D, x: number, y: number, w: number, h: number): void {
  x = Math.max(0, Math.round(x));
  y = Math.max(0, Math.round(y));
  w = Math.min(ctx.canvas.width - x, Math.round(w));
  h = Math.min(ctx.canvas.height - y, Math.round(h));
  if (w < 1 || h < 1) return;
  const cell = Math.max(16, Math.round(Math.min(ctx.canvas.width, ctx.canvas.height) / 40));
  let src = document.createElement('canvas');
  src.width = w;
  src.height = h;
  (src.getContext('2d') as CanvasRenderingContext2D).drawImage(ctx.canvas, x, y, w, h, 0, 0, w, h);
  while (src.width / 2 >= Math.max(1, w / cell) && src.height / 2 >= Math.max(1, h / cell)) {
    const next = document.createElement('canvas');
    next.width = Math.ceil(src.width / 2);
    next.height = Math.ceil(src.height / 2);
    const nctx = next.getContext('2d') as CanvasRenderingContext2D;
    nctx.imageSmoothingQuality = 'high';
    nctx.drawImage(src, 0, 0, next.width, next.height);
    src = next;
  }
  ctx.save();
  ctx.beginPath();
  ctx.rect(x, y, w, h);
  ctx.clip();
  ctx.imageSmoothingEnabled = true;
  ctx.imageSmoothingQuality = 'high';
  ctx.drawImage(src, x, y, w, h);
  if ('filter' in ctx) {
    ctx.filter = 'blur(' + Math.round(cell / 2) + 'px)';
    ctx.drawImage(src, x, y, w, h);
  }
  ctx.restore();
}

function box(points: number[][]): [number, number, number, number] {
  const [[x1, y1], [x2, y2]] = points;
  return [Math.min(x1, x2), Math.min(y1, y2), Math.abs(x2 - x1), Math.abs(y2 - y1)];
}

/** Draws the picture with every shape: blurs first, then the marks on top. */
export function paint(ctx: CanvasRenderingContext2D, base: HTMLCanvasElement, shapes: Shape[]): void {
  const line = Math.max(3, Math.round(ctx.canvas.width / 400));
  ctx.drawImage(base, 0, 0);
  for (const s of shapes) if (s.kind === 'blur') blurRegion(ctx, ...box(s.points));
  ctx.strokeStyle = ctx.fillStyle = COLOR;
  ctx.lineWidth = line;
  ctx.lineCap = ctx.lineJoin = 'round';
  for (const s of shapes) {
    const p = s.points;
    ctx.beginPath();
    if (s.kind === 'rect') ctx.rect(...box(p));
    else if (s.kind === 'pen') p.forEach(([x, y], i) => (i ? ctx.lineTo(x, y) : ctx.moveTo(x, y)));
    else if (s.kind === 'arrow') {
      const [[x1, y1], [x2, y2]] = p;
      const a = Math.atan2(y2 - y1, x2 - x1);
      const head = line * 5;
      ctx.moveTo(x1, y1);
      ctx.lineTo(x2, y2);
      ctx.moveTo(x2 - head * Math.cos(a - 0.45), y2 - head * Math.sin(a - 0.45));
      ctx.lineTo(x2, y2);
      ctx.lineTo(x2 - head * Math.cos(a + 0.45), y2 - head * Math.sin(a + 0.45));
    }
    ctx.stroke();
  }
}

function toBlob(canvas: HTMLCanvasElement, type: string): Promise<Blob | null> {
  return new Promise((resolve) => canvas.toBlob(resolve, type, 0.85));
}

export function annotate(o: {
  root: ShadowRoot;
  addStyles: (css: string) => (css: string) => void;
  canvas: HTMLCanvasElement;
  t: Record<string, unknown>;
}): Promise<Annotated | null> {
  const t = o.t as Record<string, string>;
  o.addStyles(CSS);
  const base = o.canvas;
  const view = el('canvas');
  view.width = base.width;
  view.height = base.height;
  view.setAttribute('role', 'img');
  view.setAttribute('aria-label', t.screenshot);
  const ctx = view.getContext('2d') as CanvasRenderingContext2D;
  const shapes: Shape[] = [];
  let kind: Kind = 'rect';
  let drawing: Shape | null = null;
  const redraw = () => paint(ctx, base, drawing ? [...shapes, drawing] : shapes);
  redraw();

  const layer = el('div', 'shot ui');
  layer.setAttribute('role', 'dialog');
  layer.setAttribute('aria-modal', 'true');
  layer.setAttribute('aria-label', t.markup);
  const bar = el('div', 'bar');
  const heading = el('h2', undefined, t.markup);
  const tools = KINDS.map((k) => {
    const b = button('', t[k], () => {
      kind = k;
      for (const other of tools) other.setAttribute('aria-pressed', String(other === b));
    });
    b.setAttribute('aria-pressed', String(k === kind));
    b.dataset.kind = k;
    return b;
  });
  const undo = button('', t.undo, () => {
    shapes.pop();
    redraw();
  });
  const sep = () => el('span', 'sep');

  return new Promise((resolve) => {
    const done = async (keep: boolean) => {
      layer.remove();
      if (!keep) return resolve(null);
      drawing = null;
      redraw();
      let blob = await toBlob(view, 'image/webp');
      if (!blob || blob.type !== 'image/webp') blob = await toBlob(view, 'image/jpeg');
      if (!blob) return resolve(null);
      resolve({ blob, width: view.width, height: view.height, annotations: shapes });
    };
    const cancel = button('', t.cancel, () => void done(false));
    const add = button('primary', t.addScreenshot, () => void done(true));
    bar.append(heading, ...tools, sep(), undo, sep(), cancel, add);
    layer.append(bar, view);
    o.root.appendChild(layer);
    add.focus();

    const at = (e: PointerEvent) => {
      const r = view.getBoundingClientRect();
      const x = ((e.clientX - r.left) * view.width) / r.width;
      const y = ((e.clientY - r.top) * view.height) / r.height;
      return [Math.round(Math.min(view.width, Math.max(0, x))), Math.round(Math.min(view.height, Math.max(0, y)))];
    };
    view.addEventListener('pointerdown', (e) => {
      e.preventDefault();
      view.setPointerCapture(e.pointerId);
      const p = at(e);
      drawing = kind === 'pen' ? { kind, points: [p], color: COLOR } : { kind, points: [p, p], ...(kind === 'blur' ? {} : { color: COLOR }) };
    });
    view.addEventListener('pointermove', (e) => {
      if (!drawing) return;
      const p = at(e);
      if (drawing.kind === 'pen') {
        if (drawing.points.length < 10000) drawing.points.push(p);
      } else drawing.points[1] = p;
      redraw();
    });
    const finish = () => {
      const d = drawing;
      drawing = null;
      if (d) {
        const [, , w, h] = d.kind === 'pen' ? [0, 0, 9, 9] : box(d.points);
        if ((w > 3 || h > 3) && shapes.length < 100) shapes.push(d);
      }
      redraw();
    };
    view.addEventListener('pointerup', finish);
    view.addEventListener('pointercancel', finish);
    layer.addEventListener('keydown', (e) => {
      e.stopPropagation();
      if (e.key === 'Escape') e.preventDefault(), void done(false);
      else trapTab(e, layer, o.root.activeElement);
    });
  });
}
