// History in the panel: the footer's History button and the list it opens. It shows what this
// browser sent for the project and what waits for a retry, from local storage only (see
// src/history.ts); a signed-in reporter sees their reports from the server with the team's answers
// instead, after what waits here (sign-in.ts).

import { button, el } from '../../dom';
import type { Core } from '../../core';
import type { Locale, Strings } from '../../i18n';
import type { HistoryEntry } from '../../types';
import type { Widget } from '../../widget';
import type { ReporterUi } from './sign-in';

export interface HistorySection {
  /** For the shell to place: the History button (in the footer) and the list it opens. */
  nodes: [button: HTMLButtonElement, list: HTMLElement];
  /** draws the list again when it is open */
  render(): void;
}

export function historySection(t: Strings, locale: Locale, widget: Widget, core: Core, signIn: ReporterUi): HistorySection {
  const historyButton = button('', t.history, () => {
    list.hidden = !list.hidden;
    historyButton.setAttribute('aria-expanded', String(!list.hidden));
    draw();
  });
  historyButton.setAttribute('aria-expanded', 'false');
  historyButton.setAttribute('aria-controls', 'svc-history');
  const list = el('ul', 'history');
  list.id = 'svc-history';
  list.setAttribute('aria-label', t.history);
  list.hidden = true;

  function draw(): void {
    const items: HistoryEntry[] = widget.history();
    const channels = widget.getChannels();
    const local = (h: HistoryEntry) => {
      const li = el('li');
      const ttl = el('span', 'ttl', h.title || '—');
      ttl.setAttribute('translate', 'no');
      const meta = el('span', 'meta');
      const ch = channels.find((c) => c.key === h.channelKey);
      const chName = el('span', undefined, ch ? String(ch.name || ch.key) : h.channelKey || '');
      chName.setAttribute('translate', 'no');
      const when = el('time', undefined, new Date(h.at).toLocaleString(locale, { dateStyle: 'short', timeStyle: 'short' }));
      when.dateTime = new Date(h.at).toISOString();
      const state = el('span', 'st ' + h.status, t[('state_' + h.status) as 'state_sent']);
      meta.append(chName, el('span', undefined, '·'), when, state);
      li.append(ttl, meta);
      return li;
    };
    // A signed-in reporter sees their reports with the team's answers; what waits here comes first.
    const r = core.reporter();
    if (r && r.token) void signIn.thread(list, items.filter((h) => h.status !== 'sent'), local);
    else list.replaceChildren(...(items.length ? items.map(local) : [el('li', 'hint', t.historyEmpty)]));
  }

  return {
    nodes: [historyButton, list],
    render: () => {
      if (!list.hidden) draw();
    },
  };
}
