// The message box and Send: what the reporter types (kept in local storage until it is sent, so a
// reload keeps it), its character counter, and sending the message with the whole draft thread as
// one report (Send, or Ctrl/Cmd+Enter in the box).

import { button, el } from '../../dom';
import type { Core } from '../../core';
import { fill, type Locale, type Strings } from '../../i18n';
import type { Widget } from '../../widget';
import { errorCode, TEXT_MAX, type Render, type Say } from './shared';
import type { ReporterUi } from './sign-in';

export interface Composer {
  /** For the shell to place: the message box's label, the box, its counter, and Send. */
  nodes: [msgLabel: HTMLElement, msg: HTMLTextAreaElement, count: HTMLElement, send: HTMLButtonElement];
  /** puts back the text kept from before (when the box is empty) */
  restore(): void;
  /** the counter */
  render(): void;
}

/**
 * `signIn` decides whether sending must wait; `channel` is the one picked in the header, if any;
 * `sent` runs once a report was sent or queued, with the words that say which.
 */
export function composer(
  t: Strings,
  locale: Locale,
  widget: Widget,
  core: Core,
  say: Say,
  render: Render,
  signIn: ReporterUi,
  channel: () => string | undefined,
  sent: (words: string) => void,
): Composer {
  const textKey = widget.draftKey() + ':text';

  const msgLabel = el('label', 'vh', t.message);
  msgLabel.htmlFor = 'svc-msg';
  const msg = el('textarea', 'msg');
  msg.id = 'svc-msg';
  msg.placeholder = t.placeholder;
  msg.maxLength = TEXT_MAX;
  msg.setAttribute('aria-describedby', 'svc-count');
  const count = el('div', 'count');
  count.id = 'svc-count';
  const send = button('primary', t.send, () => void submit());

  function renderCount(): void {
    const n = msg.value.length;
    count.textContent = fill(t.counter, { n: n.toLocaleString(locale), max: TEXT_MAX.toLocaleString(locale) });
    count.classList.toggle('near', n > TEXT_MAX * 0.9);
  }

  msg.addEventListener('input', () => {
    renderCount();
    try {
      if (msg.value) localStorage.setItem(textKey, msg.value);
      else localStorage.removeItem(textKey);
    } catch {
      /* storage refused: the text simply does not survive a reload */
    }
  });
  msg.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) void submit();
  });

  async function submit(): Promise<void> {
    if (send.disabled) return;
    if (signIn.blocked()) {
      say(t.signInToSend);
      (signIn.gate.querySelector('input,button.primary') as HTMLElement | null)?.focus();
      return;
    }
    if (!widget.draft().length && !msg.value.trim()) {
      say(t.empty);
      msg.focus();
      return;
    }
    send.disabled = true;
    say(t.sending);
    try {
      const r = await core.sendDraft(msg.value, channel());
      msg.value = '';
      try {
        localStorage.removeItem(textKey);
      } catch {
        /* nothing stored */
      }
      const done = r.queued ? t.queued : t.sent;
      say(done);
      sent(done);
    } catch (e) {
      say(fill(t.failed, { code: errorCode(e) }));
    } finally {
      send.disabled = false;
      render();
    }
  }

  return {
    nodes: [msgLabel, msg, count, send],
    restore() {
      try {
        if (!msg.value) msg.value = localStorage.getItem(textKey) || '';
      } catch {
        /* no storage */
      }
    },
    render: renderCount,
  };
}
