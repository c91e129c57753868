// The panel's shell: the dialog with its header (the launcher's mascot, the title, the channel
// picker, the flags, Close), body and footer (status line, History, Send); opening and closing it
// (focus in and back, Escape, Tab kept inside); drawing every piece again when the draft changes;
// the confirmation beside the launcher after sending; and tearing it all down. The pieces:
//
//   sign-in.ts      signing in when the project asks for it, who is signed in, their reports
//   attachments.ts  the draft thread's blocks, adding one, attaching and dropping files
//   capture.ts      the capture tools: screenshot, voice (push-to-talk), quote, pinpoint
//   composer.ts     the message box, its counter, Send
//   history.ts      the History button and list
//   styles.ts       the stylesheet of all of them
//
// Each is a function given what it uses as parameters (the words, the widget, the sending engine,
// the shell's status line and redraw; shared.ts) that answers its elements for the shell to place
// and what the shell calls on it.

// The stylesheet first: bundled ahead of the code, it leaves the code within gzip's 32 KB window of
// the words (i18n) it names, which keeps the part smaller.
import { CSS, panelCss } from './styles';
import { button, deepActive, el, focusables, icon, ours, trapTab } from '../../dom';
import { STRINGS, type Locale } from '../../i18n';
import type { PartHost, PartInstance } from '../../widget';
import { attachments } from './attachments';
import { captureTools } from './capture';
import { composer } from './composer';
import { historySection } from './history';
import type { Listen, Say } from './shared';
import { reporterUi } from './sign-in';

export function panel(host: PartHost): PartInstance {
  const { root: shadow, launcher, settings: s, widget, core } = host;
  const locale: Locale = s.locale === 'ru' ? 'ru' : 'en';
  const t = STRINGS[locale];
  host.addStyles(CSS + '\n' + panelCss(s.anchor));

  // ---- state ---------------------------------------------------------------------------------
  let opened = false;
  let returnTo: Element | null = null;
  let picked: string | undefined;
  let mascots: Record<string, string> | null = null;
  const listeners: Array<[EventTarget, string, EventListener, boolean]> = [];

  const root = el('section', 'panel ui');
  root.setAttribute('role', 'dialog');
  root.setAttribute('aria-labelledby', 'svc-title');
  root.setAttribute('part', 'panel');
  root.hidden = true;

  const status = el('p', 'status');
  status.setAttribute('role', 'status');
  status.setAttribute('aria-live', 'polite');

  const isOpen = () => opened;
  const say: Say = (text) => {
    status.textContent = '';
    // A fresh text node, so a repeated message is announced again.
    setTimeout(() => (status.textContent = text), 30);
  };
  const listen: Listen = (target, type, fn, capture = false) => {
    target.addEventListener(type, fn, capture);
    listeners.push([target, type, fn, capture]);
  };

  // ---- header --------------------------------------------------------------------------------
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
  select.addEventListener('change', () => {
    picked = select.value;
    renderChannels();
  });

  // ---- the pieces ----------------------------------------------------------------------------
  const signIn = reporterUi(core, t, say, locale, s.apiUrl, s.projectKey);
  const blocks = attachments(t, locale, widget, core, root, say, render, () => msg.focus());
  const capture = captureTools(t, host, root, isOpen, say, render, listen, blocks.add);
  const text = composer(
    t,
    locale,
    widget,
    core,
    say,
    render,
    signIn,
    () => picked,
    // Sent (or saved for later): the panel steps back, a short confirmation stays a moment.
    (words) => {
      blocks.dropThumbs([]);
      api.close();
      confirm(words);
    },
  );
  const history = historySection(t, locale, widget, core, signIn);

  // ---- layout --------------------------------------------------------------------------------
  const [thread, filesButton, fileInput, drop] = blocks.nodes;
  const [selBox, pinBox, recBar, tools, pttHint] = capture.nodes;
  const [msgLabel, msg, count, send] = text.nodes;
  const [historyButton, historyList] = history.nodes;
  tools.append(filesButton);
  const body = el('div', 'body');
  body.append(signIn.who, signIn.gate, thread, selBox, pinBox, recBar, msgLabel, msg, count, tools, fileInput);
  if (pttHint) body.append(pttHint);
  const foot = el('footer', 'foot');
  foot.append(status, historyButton, send);
  root.append(head, body, foot, historyList, drop);
  shadow.appendChild(root);

  core.onDraft = () => opened && render();
  // The channels (shared bundle) and the limits arrive with the configuration.
  core.ready.then(() => opened && render());

  function render(): void {
    signIn.render();
    blocks.render();
    capture.render();
    renderChannels();
    text.render();
    history.render();
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

  /** A confirmation beside the launcher for a few seconds, announced politely. */
  function confirm(words: string): void {
    shadow.querySelectorAll('.toast').forEach((old) => old.remove());
    const toast = el('div', 'toast ui');
    toast.setAttribute('role', 'status');
    toast.setAttribute('part', 'toast');
    const face = el('span', 'av');
    face.setAttribute('aria-hidden', 'true');
    if (mascots && mascots[s.mascot]) face.innerHTML = mascots[s.mascot];
    const line = el('span');
    toast.append(face, line);
    shadow.appendChild(toast);
    setTimeout(() => (line.textContent = words), 30);
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
      text.restore();
      // A panel opening afresh offers only what is selected now.
      capture.readSelection(root.hidden);
      render();
      root.hidden = false;
      if (launcher) launcher.setAttribute('aria-expanded', 'true');
      host.part<Record<string, string>>('mascots').then((m) => ((mascots = m), renderChannels()), () => undefined);
      (capture.focusTarget() || (focusables(root).includes(msg) ? msg : closeButton)).focus();
    },
    close() {
      if (!opened) return;
      opened = false;
      capture.stop();
      root.hidden = true;
      if (launcher) launcher.setAttribute('aria-expanded', 'false');
      const back = launcher && launcher.getClientRects().length ? launcher : (returnTo as HTMLElement | null);
      if (back && typeof back.focus === 'function') back.focus();
    },
    isOpen,
    destroy() {
      core.onDraft = undefined;
      blocks.dropThumbs([]);
      shadow.querySelectorAll('.toast').forEach((toast) => toast.remove());
      capture.stop();
      for (const [target, type, fn, useCapture] of listeners) target.removeEventListener(type, fn, useCapture);
      signIn.destroy();
      root.remove();
    },
  };
  return api;
}
