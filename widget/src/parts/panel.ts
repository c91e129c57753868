// The report panel (lazy part): the face of the draft thread. The reporter stacks blocks (text,
// screenshots with annotations, voice notes, selected text and quotes, pinpoints, files), reviews
// and removes them, picks the channel and sends the whole thread as one report. History lists what
// this browser sent, from local storage only. The screenshot, voice and pinpoint code are lazy parts
// of their own, loaded on first use.

import { button, deepActive, el, focusables, icon, ours, trapTab } from '../dom';
import { fill, formatBytes, formatDuration, plural, STRINGS, type Locale } from '../i18n';
import type { RawBlock, HistoryEntry, SelectorInfo } from '../types';
import type { PartHost, PartInstance } from '../widget';
import type { Annotated } from '../capture/annotate';
import type { Recording } from './voice';
import type { Picked } from './pinpoint';
import { reporterUi } from '../reporter-ui';

const TEXT_MAX = 10000;
const VOICE_MAX_MS = 5 * 60 * 1000;
const FILE_MAX_DEFAULT = 5 * 1024 * 1024;

interface ScreenshotPart {
  capture(): Promise<HTMLCanvasElement>;
  annotate(o: { root: ShadowRoot; addStyles: PartHost['addStyles']; canvas: HTMLCanvasElement; t: typeof STRINGS.en }): Promise<Annotated | null>;
}
interface VoicePart {
  start(maxMs: number, onLimit: () => void): Promise<Recording>;
}
interface PinpointPart {
  pick(o: { root: ShadowRoot; addStyles: PartHost['addStyles']; hint: string; cancel: string }): Promise<Picked | null>;
}
type SelectorPart = { selectorInfo(el: Element, o: unknown): SelectorInfo };

/** The panel's place: beside the launcher's anchor; a full-width sheet on narrow screens. */
function panelCss(anchor: string): string {
  const [v, h] = anchor.split('-');
  const x = h === 'center' ? 'left:50%;transform:translateX(-50%)' : h + ':12px';
  const y = v === 'top' ? 'top:12px' : 'bottom:12px';
  return `.panel,.toast{${x};${y}}`;
}

const CSS = `.ui,.ui *{box-sizing:border-box}
.ui{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:#1d1d1f;text-align:left;letter-spacing:normal;text-transform:none;-webkit-font-smoothing:antialiased}
.ui button{font:inherit;font-weight:500;cursor:pointer;border-radius:8px;border:1px solid #c4c4cc;background:#fff;color:#1d1d1f;padding:5px 12px;min-height:32px;display:inline-flex;align-items:center;justify-content:center;gap:6px;margin:0;line-height:1.2}
.ui button:hover{background:#f3f3f6}
.ui button:focus-visible,.ui textarea:focus-visible,.ui select:focus-visible,.ui input:focus-visible{outline:3px solid #1a56db;outline-offset:1px}
.ui button:disabled{opacity:.55;cursor:default}
.ui button.primary{background:#1a56db;border-color:#1a56db;color:#fff;font-weight:600;padding:5px 18px}
.ui button.primary:hover{background:#1648b8}
.ui button.icon{padding:0;width:32px;border-color:transparent;background:transparent;color:#3c3c43}
.ui button.icon:hover{background:#ececf0}
.ui button[aria-pressed=true]{background:#1d1d1f;color:#fff;border-color:#1d1d1f}
.i{width:16px;height:16px;fill:none;stroke:currentColor;stroke-width:1.6;stroke-linecap:round;stroke-linejoin:round;flex:none}
.vh{position:absolute!important;width:1px!important;height:1px!important;overflow:hidden!important;clip:rect(0 0 0 0)!important;white-space:nowrap!important;opacity:0;pointer-events:none}
.panel{position:fixed;z-index:2;display:flex;flex-direction:column;width:380px;max-width:calc(100vw - 24px);max-height:calc(100vh - 24px);background:#fff;border:1px solid rgba(0,0,0,.12);border-radius:14px;box-shadow:0 16px 48px rgba(0,0,0,.3);overflow:hidden}
.panel[hidden],.ui [hidden]{display:none!important}
.head{display:flex;align-items:center;gap:10px;padding:10px 8px 10px 14px;border-bottom:1px solid #e6e6eb}
.av{width:34px;height:34px;border-radius:50%;background:#f3f3f6;display:flex;align-items:center;justify-content:center;flex:none}
.av svg{width:28px;height:28px;display:block}
.ht{flex:1;min-width:0;display:flex;flex-direction:column;gap:2px}
.ht h2{margin:0;font-size:16px;font-weight:650;line-height:1.25;color:#1d1d1f}
.ch{display:flex;align-items:center;gap:6px;font-size:12px;color:#4b4b55}
.ch select{font:inherit;font-size:12px;color:#1d1d1f;background:#fff;border:1px solid #c4c4cc;border-radius:6px;padding:2px 4px;max-width:190px;min-height:24px}
.flags{display:flex;gap:4px;flex-wrap:wrap}
.chip{font-size:11px;padding:1px 7px;border-radius:10px;background:#e8edff;color:#1e3a8a}
.body{flex:1 1 auto;overflow:auto;padding:12px 14px;display:flex;flex-direction:column;gap:10px;min-height:0}
.thread h3{margin:0 0 6px;font-size:12px;font-weight:600;color:#4b4b55;text-transform:uppercase;letter-spacing:.04em}
.blocks{list-style:none;margin:0;padding:0;display:flex;flex-direction:column;gap:6px}
.blocks li{display:flex;gap:8px;align-items:center;padding:6px 4px 6px 10px;background:#f5f5f8;border:1px solid #e6e6eb;border-radius:8px;font-size:13px;min-height:40px}
.blocks li .i{color:#4b4b55}
.blocks .thumb{width:48px;height:30px;object-fit:cover;object-position:top left;border-radius:4px;border:1px solid #c4c4cc;flex:none;background:#fff}
.toast{position:fixed;z-index:2;display:flex;align-items:center;gap:10px;max-width:calc(100vw - 24px);padding:8px 16px 8px 8px;background:#1d1d1f;color:#fff;border-radius:12px;box-shadow:0 8px 28px rgba(0,0,0,.3);font-weight:600}
.toast .av{background:#fff}
.blocks .sum{flex:1;min-width:0;display:flex;flex-direction:column}
.blocks .kind{font-weight:600;font-size:12px;color:#1d1d1f}
.blocks .what{overflow:hidden;text-overflow:ellipsis;white-space:nowrap;color:#4b4b55}
.box{border:1px solid #c9d6ff;background:#f4f7ff;border-radius:10px;padding:10px;display:flex;flex-direction:column;gap:6px}
.box .lbl{margin:0;font-size:12px;font-weight:600;color:#1e3a8a}
.box blockquote{margin:0;padding:2px 0 2px 10px;border-left:3px solid #1a56db;color:#1d1d1f;max-height:84px;overflow:auto;white-space:pre-wrap;word-break:break-word}
.box code{font:12px ui-monospace,SFMono-Regular,Menlo,monospace;color:#1d1d1f;word-break:break-all}
.row{display:flex;gap:8px;align-items:center;justify-content:flex-end;flex-wrap:wrap}
.ui textarea{display:block;width:100%;min-height:96px;resize:vertical;padding:8px 10px;border:1px solid #b9b9c3;border-radius:8px;font:inherit;color:#1d1d1f;background:#fff;margin:0}
.ui textarea::placeholder{color:#6b6b76;opacity:1}
.box textarea{min-height:56px}
.ui label{font-size:12px;color:#4b4b55}
.count{font-size:12px;color:#4b4b55;text-align:right;margin-top:-6px}
.count.near{color:#b3261e}
.tools{display:flex;gap:6px;flex-wrap:wrap}
.tools button{flex:1 1 auto;font-size:13px;padding:5px 8px}
.rec{display:flex;align-items:center;flex-wrap:wrap;gap:6px 8px;padding:8px 10px;border-radius:10px;background:#fdecea;color:#8c1d18;font-weight:600}
.rec>span{white-space:nowrap}
.rec button{padding:4px 10px;font-size:13px}
.rec .dot{width:10px;height:10px;border-radius:50%;background:#d93025;flex:none}
@media (prefers-reduced-motion:no-preference){.rec .dot{animation:svcpulse 1s ease-in-out infinite alternate}}
@keyframes svcpulse{to{opacity:.3}}
.rec .t{flex:1 0 auto;font-variant-numeric:tabular-nums}
.hint{margin:0;font-size:12px;color:#4b4b55}
.foot{display:flex;align-items:center;gap:8px;padding:10px 14px;border-top:1px solid #e6e6eb;background:#fafafc}
.status{flex:1;margin:0;font-size:12px;color:#1d1d1f;min-height:16px}
.history{list-style:none;margin:0;padding:4px 14px 10px;max-height:min(45vh,360px);overflow:auto;border-top:1px solid #e6e6eb;background:#fafafc}
.history li{padding:7px 0;border-bottom:1px solid #ececf0;display:flex;flex-direction:column;gap:2px}
.history li:last-child{border-bottom:0}
.history .ttl{font-weight:600;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.history .meta{font-size:12px;color:#4b4b55;display:flex;gap:6px;align-items:center;flex-wrap:wrap}
.st{font-size:11px;font-weight:600;padding:0 6px;border-radius:8px}
.st.sent,.st.verified{background:#e6f4ea;color:#1b5e20}.st.queued,.st.fixed{background:#fff4e0;color:#7a4100}.st.failed,.st.news{background:#fdecea;color:#a8231b}.st{background:#ececf0}
.cm{margin:2px 0 0;white-space:pre-wrap;word-break:break-word}
.history .row{justify-content:flex-start}.history .lbl{margin:0;font-weight:600}
.ui input{font:inherit;padding:6px 10px;border:1px solid #b9b9c3;border-radius:8px;width:100%}
.err{margin:0;font-size:12px;color:#a8231b}
.ui button.link{border:0;background:none;padding:0;min-height:0;color:#1a56db;text-decoration:underline}
.drop{position:absolute;inset:0;display:flex;align-items:center;justify-content:center;background:rgba(26,86,219,.92);color:#fff;font-weight:600;font-size:16px;border-radius:14px;pointer-events:none;text-align:center;padding:20px}
@media (max-width:480px){.panel{left:0!important;right:0!important;bottom:0!important;top:auto!important;transform:none!important;width:100%;max-width:none;max-height:92vh;border-radius:14px 14px 0 0}}`;

function panel(host: PartHost): PartInstance {
  const { root: shadow, launcher, settings: s, widget, core } = host;
  const locale: Locale = s.locale === 'ru' ? 'ru' : 'en';
  const t = STRINGS[locale];
  host.addStyles(CSS + '\n' + panelCss(s.anchor));

  // ---- structure -----------------------------------------------------------------------------
  const root = el('section', 'panel ui');
  root.setAttribute('role', 'dialog');
  root.setAttribute('aria-labelledby', 'svc-title');
  root.setAttribute('part', 'panel');
  root.hidden = true;

  const avatar = el('span', 'av');
  avatar.setAttribute('aria-hidden', 'true');
  const title = el('h2', undefined, t.title);
  title.id = 'svc-title';
  const channelRow = el('div', 'ch');
  const channelLabel = el('label', undefined, t.channel);
  channelLabel.htmlFor = 'svc-channel';
  const select = el('select');
  select.id = 'svc-channel';
  select.setAttribute('translate', 'no');
  const flags = el('span', 'flags');
  flags.setAttribute('translate', 'no');
  channelRow.append(channelLabel, select, flags);
  const headText = el('div', 'ht');
  headText.append(title, channelRow);
  const closeButton = button('icon', '', () => api.close(), t.close);
  closeButton.append(icon('x'));
  const head = el('header', 'head');
  head.append(avatar, headText, closeButton);

  const thread = el('div', 'thread');
  const removeWord = el('span', 'vh', t.remove);
  removeWord.id = 'svc-rm';
  const threadTitle = el('h3');
  threadTitle.id = 'svc-thread';
  const blocks = el('ul', 'blocks');
  blocks.setAttribute('aria-labelledby', 'svc-thread');
  thread.append(removeWord, threadTitle, blocks);

  // Selected page text, kept as a selection or (with a comment) as a quote.
  const selBox = el('div', 'box');
  const selQuote = el('blockquote');
  selQuote.setAttribute('translate', 'no');
  const selComment = el('textarea');
  selComment.id = 'svc-sel-comment';
  const selCommentLabel = el('label', undefined, t.comment);
  selCommentLabel.htmlFor = selComment.id;
  selBox.append(
    el('p', 'lbl', t.selected),
    selQuote,
    selCommentLabel,
    selComment,
    row(button('', t.cancel, () => dropSelection(true)), button('', t.add, () => void addSelection())),
  );

  // A picked element waiting for its comment.
  const pinBox = el('div', 'box');
  const pinCss = el('code');
  pinCss.setAttribute('translate', 'no');
  const pinComment = el('textarea');
  pinComment.id = 'svc-pin-comment';
  const pinCommentLabel = el('label', undefined, t.pinComment);
  pinCommentLabel.htmlFor = pinComment.id;
  pinBox.append(
    el('p', 'lbl', t.pinpoint),
    pinCss,
    pinCommentLabel,
    pinComment,
    row(button('', t.cancel, () => dropPin(true)), button('', t.add, () => void addPin())),
  );

  // The recording bar.
  const recBar = el('div', 'rec');
  const recTime = el('span', 't');
  recTime.setAttribute('role', 'timer');
  recBar.append(el('span', 'dot'), el('span', undefined, t.recording), recTime, button('', t.stopAdd, () => void stopRecording(true)), button('', t.cancel, () => void stopRecording(false)));

  const msgLabel = el('label', 'vh', t.message);
  msgLabel.htmlFor = 'svc-msg';
  const msg = el('textarea', 'msg');
  msg.id = 'svc-msg';
  msg.placeholder = t.placeholder;
  msg.maxLength = TEXT_MAX;
  msg.setAttribute('aria-describedby', 'svc-count');
  const count = el('div', 'count');
  count.id = 'svc-count';

  const tools = el('div', 'tools');
  tools.setAttribute('role', 'group');
  tools.setAttribute('aria-label', t.tools);
  const tool = (name: string, text: string, long: string, fn: () => void) => {
    const b = button('', text, fn);
    b.prepend(icon(name));
    b.title = long;
    b.setAttribute('aria-label', long);
    tools.append(b);
    return b;
  };
  const shotButton = tool('camera', t.takeScreenshot, t.takeScreenshotLong, () => void screenshot());
  const voiceButton = tool('mic', t.recordVoice, t.recordVoiceLong, () => void (recording ? stopRecording(true) : startRecording(false)));
  const quoteButton = tool('quote', t.quoteSelection, t.quoteSelectionLong, () => {
    readSelection();
    if (pending) selComment.focus();
    else say(t.noSelection);
  });
  // Artifact review comments on elements; everywhere else the reporter can point at one.
  const review = s.mode === 'artifact-review';
  const pinButton = tool('pin', review ? t.pinpointElement : t.pointAtIt, review ? t.pinpointElementLong : t.pointAtItLong, () => void pinpoint());
  const filesButton = tool('clip', t.attachFiles, t.attachFilesLong, () => fileInput.click());
  const fileInput = el('input', 'vh');
  fileInput.type = 'file';
  fileInput.multiple = true;
  fileInput.tabIndex = -1;
  fileInput.setAttribute('aria-hidden', 'true');
  fileInput.addEventListener('change', () => {
    const files = Array.from(fileInput.files || []);
    fileInput.value = '';
    void addFiles(files);
  });
  const pttHint = s.pushToTalkKey ? el('p', 'hint', fill(t.holdToTalk, { key: s.pushToTalkKey })) : null;

  // Signing in (when the project offers it) and who is signed in.
  const rep = reporterUi(core, t, (text) => say(text), locale, s.apiUrl, s.projectKey);
  const body = el('div', 'body');
  body.append(rep.who, rep.gate, thread, selBox, pinBox, recBar, msgLabel, msg, count, tools, fileInput);
  if (pttHint) body.append(pttHint);

  const status = el('p', 'status');
  status.setAttribute('role', 'status');
  status.setAttribute('aria-live', 'polite');
  const historyButton = button('', t.history, () => {
    history.hidden = !history.hidden;
    historyButton.setAttribute('aria-expanded', String(!history.hidden));
    renderHistory();
  });
  historyButton.setAttribute('aria-expanded', 'false');
  historyButton.setAttribute('aria-controls', 'svc-history');
  const send = button('primary', t.send, () => void submit());
  const foot = el('footer', 'foot');
  foot.append(status, historyButton, send);
  const history = el('ul', 'history');
  history.id = 'svc-history';
  history.setAttribute('aria-label', t.history);
  history.hidden = true;
  const drop = el('div', 'drop', t.drop);
  drop.hidden = true;

  root.append(head, body, foot, history, drop);
  shadow.appendChild(root);

  // ---- state ---------------------------------------------------------------------------------
  let opened = false;
  let returnTo: Element | null = null;
  let picked: string | undefined;
  let pending: { text: string; el: Element } | null = null;
  let pin: Picked | null = null;
  let recording: { rec: Recording; ptt: boolean; timer: number } | null = null;
  let mascots: Record<string, string> | null = null;
  // Thumbnails of this session's screenshots (object URLs of the uploaded pictures), by blob id.
  const thumbs = new Map<string, string>();
  const dropThumbs = (keep: RawBlock[]) => {
    for (const [id, url] of thumbs) if (!keep.some((b) => b.blobId === id)) URL.revokeObjectURL(url), thumbs.delete(id);
  };
  const textKey = widget.draftKey() + ':text';
  core.onDraft = () => opened && render();
  // The channels (shared bundle) and the limits arrive with the configuration.
  core.ready.then(() => opened && render());
  const listeners: Array<[EventTarget, string, EventListener, boolean]> = [];
  const listen = (target: EventTarget, type: string, fn: EventListener, capture = false) => {
    target.addEventListener(type, fn, capture);
    listeners.push([target, type, fn, capture]);
  };

  function row(...children: HTMLElement[]): HTMLElement {
    const r = el('div', 'row');
    r.append(...children);
    return r;
  }

  function say(text: string): void {
    status.textContent = '';
    // A fresh text node, so a repeated message is announced again.
    setTimeout(() => (status.textContent = text), 30);
  }

  const errorCode = (e: unknown) => String((e as { code?: string }).code || (e as Error).message || e);

  // ---- blocks --------------------------------------------------------------------------------
  function describe(b: RawBlock): [string, string, string] {
    const str = (v: unknown) => (typeof v === 'string' ? v : '');
    switch (b.type) {
      case 'text':
        return ['text', t.text, str(b.text)];
      case 'screenshot': {
        const marks = Array.isArray(b.annotations) ? b.annotations.length : 0;
        return ['camera', t.screenshot, b.width + '×' + b.height + (marks ? ' · ' + plural(locale, marks, t.marks) : '')];
      }
      case 'audio':
        return ['mic', t.voice, formatDuration(Number(b.durationMs) || 0)];
      case 'selection':
        return ['quote', t.selection, '“' + str(b.text) + '”'];
      case 'quote':
        return ['quote', t.quote, '“' + str(b.text) + '” — ' + str(b.comment)];
      case 'pinpoint':
        return ['pin', t.pinpoint, str(b.selector) + (b.comment ? ' — ' + str(b.comment) : '')];
      case 'file':
        return ['file', t.file, str(b.name) + (typeof b.bytes === 'number' ? ' · ' + formatBytes(locale, b.bytes) : '')];
    }
    return ['file', b.type, ''];
  }

  function addBlock(block: RawBlock): void {
    widget.saveDraft([...widget.draft(), block]);
    render();
    say(fill(t.added, { what: describe(block)[1] }));
  }

  function render(): void {
    rep.render();
    const list = widget.draft();
    blocks.replaceChildren(
      ...list.map((b, i) => {
        const [ic, kind, what] = describe(b);
        const li = el('li');
        const sum = el('span', 'sum');
        sum.id = 'svc-b' + i;
        const detail = el('span', 'what', what);
        detail.setAttribute('translate', 'no');
        sum.append(el('span', 'kind', kind), detail);
        const remove = button('icon', '', () => {
          const d = widget.draft();
          d.splice(i, 1);
          widget.saveDraft(d);
          dropThumbs(d);
          render();
          say(fill(t.removed, { what: kind }));
          // Keep the focus in the list (or on the message box when it is empty).
          const rest = blocks.querySelectorAll('button');
          ((rest[Math.min(i, rest.length - 1)] as HTMLElement) || msg).focus();
        });
        // Named "Remove" plus the block's own words.
        remove.setAttribute('aria-labelledby', 'svc-rm ' + sum.id);
        remove.append(icon('x'));
        const thumb = b.type === 'screenshot' && thumbs.get(String(b.blobId));
        const picture = thumb ? el('img', 'thumb') : null;
        if (picture) (picture.src = thumb as string), (picture.alt = '');
        li.append(picture || icon(ic), sum, remove);
        return li;
      }),
    );
    thread.hidden = !list.length;
    threadTitle.textContent = t.thread + ' · ' + plural(locale, list.length, t.items);
    selBox.hidden = !pending;
    if (pending) selQuote.textContent = pending.text;
    pinBox.hidden = !pin;
    recBar.hidden = !recording;
    voiceButton.setAttribute('aria-pressed', String(!!recording));
    renderChannels();
    renderCount();
    if (!history.hidden) renderHistory();
  }

  function renderCount(): void {
    const n = msg.value.length;
    count.textContent = fill(t.counter, { n: n.toLocaleString(locale), max: TEXT_MAX.toLocaleString(locale) });
    count.classList.toggle('near', n > TEXT_MAX * 0.9);
  }

  function renderChannels(): void {
    const channels = widget.getChannels();
    const active = picked || (widget.getChannel() || { key: '' }).key;
    const names = channels.map((c) => c.key + '\u0000' + (c.name || c.key)).join('\u0001');
    if (select.dataset.names !== names) {
      select.dataset.names = names;
      select.replaceChildren(
        ...channels.map((c) => {
          const o = el('option', undefined, String(c.name || c.key));
          o.value = c.key;
          return o;
        }),
      );
    }
    select.value = active;
    channelLabel.hidden = select.hidden = channels.length < 2;
    flags.replaceChildren(...core.flags().map((f) => el('span', 'chip', f)));
    // The launcher's mascot, so the panel is recognisably the one it opened.
    const mascot = s.mascot;
    if (mascots && mascots[mascot] && avatar.dataset.m !== mascot) {
      avatar.dataset.m = mascot;
      avatar.innerHTML = mascots[mascot];
    }
  }

  function renderHistory(): void {
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
    if (r && r.token) void rep.thread(history, items.filter((h) => h.status !== 'sent'), local);
    else history.replaceChildren(...(items.length ? items.map(local) : [el('li', 'hint', t.historyEmpty)]));
  }

  // ---- text ----------------------------------------------------------------------------------
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
  select.addEventListener('change', () => {
    picked = select.value;
    renderChannels();
  });

  // ---- selection and quote -------------------------------------------------------------------
  function readSelection(): void {
    const sel = document.getSelection();
    if (!sel || sel.isCollapsed || !sel.rangeCount) return;
    const text = sel.toString().trim();
    if (!text) return;
    // The smallest element holding the whole text (a triple click may reach into the next block).
    const start = sel.getRangeAt(0).startContainer;
    let element = start.nodeType === 1 ? (start as Element) : start.parentElement;
    const norm = (v: string) => v.replace(/\s+/g, ' ').trim();
    const want = norm(text);
    while (element && element.parentElement && !norm(element.textContent || '').includes(want)) element = element.parentElement;
    if (!element || ours(element)) return;
    pending = { text: text.slice(0, TEXT_MAX), el: element };
    if (opened) render();
  }
  listen(document, 'selectionchange', () => readSelection());

  function dropSelection(refocus: boolean): void {
    pending = null;
    selComment.value = '';
    render();
    if (refocus) quoteButton.focus();
  }

  async function addSelection(): Promise<void> {
    if (!pending) return;
    const { text, el: target } = pending;
    try {
      const info = (await host.part<SelectorPart>('selector')).selectorInfo(target, s);
      const comment = selComment.value.trim();
      const block: RawBlock = comment
        ? { type: 'quote', text, selector: info.css, target: info, comment: comment.slice(0, TEXT_MAX) }
        : { type: 'selection', text, selector: info.css, target: info };
      dropSelection(false);
      addBlock(block);
      quoteButton.focus();
    } catch (e) {
      say(fill(t.failed, { code: errorCode(e) }));
    }
  }

  // ---- pinpoint ------------------------------------------------------------------------------
  async function pinpoint(): Promise<void> {
    try {
      const part = await host.part<PinpointPart>('pinpoint');
      root.hidden = true;
      const hit = await part.pick({ root: shadow, addStyles: host.addStyles, hint: t.pinHint, cancel: t.cancel });
      root.hidden = !opened;
      if (hit) {
        pin = hit;
        const info = (await host.part<SelectorPart>('selector')).selectorInfo(hit.el, s);
        pin.info = info;
        pinCss.textContent = info.css;
        render();
        pinComment.focus();
      } else pinButton.focus();
    } catch (e) {
      root.hidden = !opened;
      say(fill(t.failed, { code: errorCode(e) }));
    }
  }

  function dropPin(refocus: boolean): void {
    pin = null;
    pinComment.value = '';
    render();
    if (refocus) pinButton.focus();
  }

  async function addPin(): Promise<void> {
    if (!pin || !pin.info) return;
    const block: RawBlock = { type: 'pinpoint', selector: pin.info.css, target: pin.info, point: pin.point, rect: pin.rect };
    const comment = pinComment.value.trim();
    if (comment) block.comment = comment.slice(0, TEXT_MAX);
    dropPin(false);
    addBlock(block);
    pinButton.focus();
  }

  // ---- screenshot ----------------------------------------------------------------------------
  async function screenshot(): Promise<void> {
    shotButton.disabled = true;
    say(t.capturing);
    try {
      const part = await host.part<ScreenshotPart>('screenshot');
      const canvas = await part.capture();
      root.hidden = true;
      const result = await part.annotate({ root: shadow, addStyles: host.addStyles, canvas, t });
      root.hidden = !opened;
      if (result) {
        say(fill(t.uploading, { name: t.screenshot }));
        const up = await core.upload('screenshot', result.blob, 'screenshot.' + (result.blob.type === 'image/webp' ? 'webp' : 'jpg'), {
          width: String(result.width),
          height: String(result.height),
        });
        const block: RawBlock = { type: 'screenshot', blobId: up.blobId, width: result.width, height: result.height, mime: up.mime, bytes: up.bytes };
        if (result.annotations.length) block.annotations = result.annotations;
        thumbs.set(up.blobId, URL.createObjectURL(result.blob));
        addBlock(block);
      } else say('');
    } catch (e) {
      root.hidden = !opened;
      say(t.captureFailed + ' ' + errorCode(e));
    } finally {
      shotButton.disabled = false;
      if (opened) shotButton.focus();
    }
  }

  // ---- voice ---------------------------------------------------------------------------------
  async function startRecording(ptt: boolean): Promise<void> {
    if (recording) return;
    try {
      const part = await host.part<VoicePart>('voice');
      const rec = await part.start(VOICE_MAX_MS, () => void stopRecording(true));
      const tick = () => (recTime.textContent = formatDuration(Date.now() - rec.startedAt) + ' / ' + formatDuration(VOICE_MAX_MS));
      tick();
      recording = { rec, ptt, timer: window.setInterval(tick, 250) };
      render();
    } catch {
      say(t.micUnavailable);
    }
  }

  async function stopRecording(keep: boolean): Promise<void> {
    const r = recording;
    if (!r) return;
    recording = null;
    clearInterval(r.timer);
    render();
    if (opened) voiceButton.focus();
    if (!keep) {
      r.rec.cancel();
      return;
    }
    try {
      const note = await r.rec.stop();
      say(fill(t.uploading, { name: t.voice }));
      const up = await core.upload('audio', note.blob, 'voice.' + (/mp4/.test(note.mime) ? 'm4a' : 'webm'), { durationMs: String(note.durationMs) });
      addBlock({ type: 'audio', blobId: up.blobId, durationMs: note.durationMs, mime: up.mime, bytes: up.bytes });
    } catch (e) {
      say(fill(t.uploadFailed, { name: t.voice }) + ' ' + errorCode(e));
    }
  }

  // Push-to-talk: hold the key while the panel is open (not while typing a character into a field).
  const typing = (e: KeyboardEvent) => {
    const a = deepActive() as HTMLElement | null;
    return e.key.length === 1 && !!a && (/^(INPUT|TEXTAREA|SELECT)$/.test(a.tagName) || a.isContentEditable);
  };
  listen(
    window,
    'keydown',
    ((e: KeyboardEvent) => {
      if (!opened || !s.pushToTalkKey || e.key !== s.pushToTalkKey || typing(e)) return;
      e.preventDefault();
      if (!e.repeat && !recording) void startRecording(true);
    }) as EventListener,
    true,
  );
  listen(
    window,
    'keyup',
    ((e: KeyboardEvent) => {
      if (s.pushToTalkKey && e.key === s.pushToTalkKey && recording && recording.ptt) void stopRecording(true);
    }) as EventListener,
    true,
  );

  // ---- files ---------------------------------------------------------------------------------
  async function addFiles(files: File[]): Promise<void> {
    const max = core.limits().fileMaxBytes || FILE_MAX_DEFAULT;
    for (const f of files) {
      if (f.size > max) {
        say(fill(t.tooLarge, { name: f.name, size: formatBytes(locale, max) }));
        continue;
      }
      say(fill(t.uploading, { name: f.name }));
      try {
        await widget.attachFile(f);
        say(fill(t.added, { what: f.name + ' · ' + formatBytes(locale, f.size) }));
      } catch (e) {
        say(fill(t.uploadFailed, { name: f.name }) + ' ' + errorCode(e));
      }
    }
  }
  let dragDepth = 0;
  root.addEventListener('dragenter', (e) => {
    if (!e.dataTransfer || !Array.from(e.dataTransfer.types).includes('Files')) return;
    e.preventDefault();
    dragDepth++;
    drop.hidden = false;
  });
  root.addEventListener('dragover', (e) => {
    if (e.dataTransfer && Array.from(e.dataTransfer.types).includes('Files')) e.preventDefault();
  });
  root.addEventListener('dragleave', () => {
    if (--dragDepth <= 0) (dragDepth = 0), (drop.hidden = true);
  });
  root.addEventListener('drop', (e) => {
    e.preventDefault();
    dragDepth = 0;
    drop.hidden = true;
    void addFiles(Array.from((e.dataTransfer && e.dataTransfer.files) || []));
  });

  // ---- sending -------------------------------------------------------------------------------
  async function submit(): Promise<void> {
    if (send.disabled) return;
    if (rep.blocked()) {
      say(t.signInToSend);
      (rep.gate.querySelector('input,button.primary') as HTMLElement | null)?.focus();
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
      const r = await core.sendDraft(msg.value, picked);
      msg.value = '';
      try {
        localStorage.removeItem(textKey);
      } catch {
        /* nothing stored */
      }
      dropThumbs([]);
      const done = r.queued ? t.queued : t.sent;
      say(done);
      // Sent (or saved for later): the panel steps back, a short confirmation stays a moment.
      api.close();
      confirm(done);
    } catch (e) {
      say(fill(t.failed, { code: errorCode(e) }));
    } finally {
      send.disabled = false;
      render();
    }
  }

  /** A confirmation beside the launcher for a few seconds, announced politely. */
  function confirm(text: string): void {
    shadow.querySelectorAll('.toast').forEach((old) => old.remove());
    const toast = el('div', 'toast ui');
    toast.setAttribute('role', 'status');
    toast.setAttribute('part', 'toast');
    const face = el('span', 'av');
    face.setAttribute('aria-hidden', 'true');
    if (mascots && mascots[s.mascot]) face.innerHTML = mascots[s.mascot];
    const words = el('span');
    toast.append(face, words);
    shadow.appendChild(toast);
    setTimeout(() => (words.textContent = text), 30);
    setTimeout(() => toast.remove(), 4000);
  }

  // ---- dialog behaviour ----------------------------------------------------------------------
  root.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') {
      e.preventDefault();
      e.stopPropagation();
      api.close();
    } else trapTab(e, root, shadow.activeElement);
  });

  const api: PartInstance = {
    open() {
      if (!opened) {
        const active = deepActive();
        returnTo = active && !ours(active) ? active : null;
      }
      opened = true;
      try {
        if (!msg.value) msg.value = localStorage.getItem(textKey) || '';
      } catch {
        /* no storage */
      }
      if (!root.hidden) readSelection();
      else {
        // Only what is selected now is offered, not a selection made and dropped long ago.
        pending = null;
        readSelection();
      }
      render();
      root.hidden = false;
      if (launcher) launcher.setAttribute('aria-expanded', 'true');
      host.part<Record<string, string>>('mascots').then((m) => ((mascots = m), renderChannels()), () => undefined);
      (pending ? selComment : focusables(root).includes(msg) ? msg : closeButton).focus();
    },
    close() {
      if (!opened) return;
      opened = false;
      if (recording) void stopRecording(false);
      root.hidden = true;
      if (launcher) launcher.setAttribute('aria-expanded', 'false');
      const back = launcher && launcher.getClientRects().length ? launcher : (returnTo as HTMLElement | null);
      if (back && typeof back.focus === 'function') back.focus();
    },
    isOpen: () => opened,
    destroy() {
      core.onDraft = undefined;
      dropThumbs([]);
      shadow.querySelectorAll('.toast').forEach((toast) => toast.remove());
      if (recording) void stopRecording(false);
      for (const [target, type, fn, capture] of listeners) target.removeEventListener(type, fn, capture);
      rep.destroy();
      root.remove();
    },
  };
  return api;
}

const define = (window as unknown as { __svcDefine?: (name: string, value: unknown) => void }).__svcDefine;
if (define) define('panel', panel);
