// The report panel (lazy part): the draft thread's blocks, a text box, a send button and the
// History list. Loaded by `Svc.openForm()` and the launcher.

import type { PartHost, PartInstance } from '../widget';
import type { Block } from '../types';


const STRINGS = {
  en: {
    title: 'Feedback', placeholder: 'What happened? What did you expect?', send: 'Send', sending: 'Sending…',
    sent: 'Thank you! Your report was sent.', queued: 'You are offline: the report will be sent when you are back.',
    failed: 'Could not send: ', close: 'Close', history: 'History', empty: 'Nothing sent yet.', remove: 'Remove',
    queuedTag: 'queued', channel: 'Channel',
  },
  ru: {
    title: 'Обратная связь', placeholder: 'Что случилось? Чего вы ожидали?', send: 'Отправить', sending: 'Отправка…',
    sent: 'Спасибо! Отчёт отправлен.', queued: 'Нет сети: отчёт отправится, когда связь вернётся.',
    failed: 'Не удалось отправить: ', close: 'Закрыть', history: 'История', empty: 'Пока ничего не отправлено.',
    remove: 'Убрать', queuedTag: 'в очереди', channel: 'Канал',
  },
};

const CSS = `.panel{position:fixed;z-index:2147483001;right:16px;bottom:16px;width:340px;max-width:calc(100vw - 32px);max-height:calc(100vh - 32px);display:flex;flex-direction:column;gap:8px;box-sizing:border-box;padding:12px;background:#fff;color:#1d1d1f;border-radius:12px;box-shadow:0 8px 32px rgba(0,0,0,.25);font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
.panel[hidden]{display:none}
.head{display:flex;align-items:center;gap:8px}
.head h2{flex:1;margin:0;font-size:16px}
.chip{font-size:12px;padding:2px 8px;border-radius:10px;background:#eef}
.blocks{list-style:none;margin:0;padding:0;overflow:auto;max-height:160px;display:flex;flex-direction:column;gap:4px}
.blocks li{display:flex;gap:6px;align-items:center;padding:4px 6px;background:#f5f5f7;border-radius:6px;font-size:13px}
.blocks li span{flex:1;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
textarea{box-sizing:border-box;width:100%;min-height:90px;resize:vertical;padding:8px;border:1px solid #ccc;border-radius:8px;font:inherit}
.row{display:flex;gap:8px;align-items:center}
.row .status{flex:1;font-size:12px;color:#555}
button{font:inherit;cursor:pointer;border-radius:8px;border:1px solid #ccc;background:#fff;padding:6px 12px}
button.primary{background:#1a73e8;border-color:#1a73e8;color:#fff}
button:disabled{opacity:.6;cursor:default}
.history{list-style:none;margin:0;padding:0;max-height:160px;overflow:auto;font-size:13px}
.history li{padding:3px 0;border-bottom:1px solid #eee}`;

function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function describe(b: Block): string {
  if (b.type === 'text') return String(b.text || '');
  if (b.type === 'file') return '📎 ' + String(b.name || 'file');
  if (typeof b.comment === 'string' && b.comment) return b.type + ': ' + b.comment;
  if (typeof b.text === 'string') return b.type + ': ' + b.text;
  return b.type;
}

function panel({ root: shadow, locale, addStyles, widget, core }: PartHost): PartInstance {
  const t = STRINGS[locale] || STRINGS.en;
  addStyles(CSS);
  const root = el('section', 'panel');
  root.setAttribute('role', 'dialog');
  root.setAttribute('aria-label', t.title);
  root.setAttribute('part', 'panel');
  root.hidden = true;

  const head = el('div', 'head');
  const title = el('h2', undefined, t.title);
  const chip = el('span', 'chip');
  chip.title = t.channel;
  const flags = el('span');
  const close = el('button', undefined, '×');
  close.type = 'button';
  close.setAttribute('aria-label', t.close);
  head.append(title, flags, chip, close);

  const blocks = el('ul', 'blocks');
  const text = el('textarea');
  text.placeholder = t.placeholder;
  text.setAttribute('aria-label', t.placeholder);
  const row = el('div', 'row');
  const status = el('span', 'status');
  status.setAttribute('role', 'status');
  const historyButton = el('button', undefined, t.history);
  historyButton.type = 'button';
  const send = el('button', 'primary', t.send);
  send.type = 'button';
  row.append(status, historyButton, send);
  const history = el('ul', 'history');
  history.hidden = true;
  root.append(head, blocks, text, row, history);
  shadow.appendChild(root);

  function render(): void {
    const ch = widget.getChannel();
    chip.textContent = ch ? String(ch.name || ch.key) : '';
    chip.hidden = !ch;
    flags.replaceChildren(...core.flags().map((f) => el('span', 'chip', f)));
    blocks.replaceChildren(
      ...widget.draft().map((b, i) => {
        const li = el('li');
        const remove = el('button', undefined, '×');
        remove.type = 'button';
        remove.setAttribute('aria-label', t.remove);
        remove.addEventListener('click', () => {
          const d = widget.draft();
          d.splice(i, 1);
          widget.saveDraft(d);
          render();
        });
        li.append(el('span', undefined, describe(b)), remove);
        return li;
      }),
    );
    blocks.hidden = !blocks.children.length;
    if (!history.hidden) renderHistory();
  }

  function renderHistory(): void {
    const items = widget.history();
    history.replaceChildren(
      ...(items.length
        ? items.map((h) => el('li', undefined, (h.status === 'queued' ? '[' + t.queuedTag + '] ' : '') + h.title + ' · ' + new Date(h.at).toLocaleString()))
        : [el('li', undefined, t.empty)]),
    );
  }

  close.addEventListener('click', () => api.close());
  historyButton.addEventListener('click', () => {
    history.hidden = !history.hidden;
    render();
  });
  send.addEventListener('click', async () => {
    send.disabled = true;
    status.textContent = t.sending;
    try {
      const r = await core.sendDraft(text.value);
      text.value = '';
      status.textContent = r.queued ? t.queued : t.sent;
    } catch (e) {
      status.textContent = t.failed + String((e as { code?: string }).code || (e as Error).message || e);
    } finally {
      send.disabled = false;
      render();
    }
  });
  root.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') api.close();
  });

  const api: PartInstance = {
    open() {
      render();
      root.hidden = false;
      text.focus();
    },
    close() {
      root.hidden = true;
    },
    destroy() {
      root.remove();
    },
  };
  return api;
}

const define = (window as unknown as { __svcDefine?: (name: string, value: unknown) => void }).__svcDefine;
if (define) define('panel', panel);
