// What the pieces of the panel share: the shell's services they are given (as parameters), and
// small helpers.

import { button, el, icon } from '../../dom';

/** The longest text the reporter can type into one box. */
export const TEXT_MAX = 10000;

/** Says `text` in the status line (announced politely, again when repeated). */
export type Say = (text: string) => void;
/** Draws every piece again from the current state (the draft thread lives in local storage). */
export type Render = () => void;
/** Adds an event listener that destroying the panel removes. */
export type Listen = (target: EventTarget, type: string, fn: EventListener, capture?: boolean) => void;

/** A row of buttons, at the end of a box. */
export function row(...children: HTMLElement[]): HTMLElement {
  const r = el('div', 'row');
  r.append(...children);
  return r;
}

/** A button of the tool row: an icon and a short text, the long text as its name. */
export function tool(name: string, text: string, long: string, fn: () => void): HTMLButtonElement {
  const b = button('', text, fn);
  b.prepend(icon(name));
  b.title = long;
  b.setAttribute('aria-label', long);
  return b;
}

/** What went wrong, in a word: an ingest error code, else the message. */
export const errorCode = (e: unknown) => String((e as { code?: string }).code || (e as Error).message || e);
