// The capture tools of the panel's tool row: Screenshot (capture, then annotate), Voice (the
// recording bar, and push-to-talk), Quote (text selected on the page, kept as a selection or with a
// comment as a quote) and Pinpoint / Point at it (pick an element, then comment on it). Each ends
// in a block of the draft thread. The capture code itself is in lazy parts of its own (screenshot,
// voice, pinpoint, selector), loaded on first use; the panel steps aside while one covers the page.

import { button, deepActive, el, ours } from '../../dom';
import { fill, formatDuration, type Strings } from '../../i18n';
import type { RawBlock, SelectorInfo } from '../../types';
import type { PartHost } from '../../widget';
import type { Annotated } from '../../capture/annotate';
import type { Recording } from '../voice';
import type { Picked } from '../pinpoint';
import { errorCode, row, TEXT_MAX, tool, type Listen, type Render, type Say } from './shared';

const VOICE_MAX_MS = 5 * 60 * 1000;

interface ScreenshotPart {
  capture(): Promise<HTMLCanvasElement>;
  annotate(o: { root: ShadowRoot; addStyles: PartHost['addStyles']; canvas: HTMLCanvasElement; t: Strings }): Promise<Annotated | null>;
}
interface VoicePart {
  start(maxMs: number, onLimit: () => void): Promise<Recording>;
}
interface PinpointPart {
  pick(o: { root: ShadowRoot; addStyles: PartHost['addStyles']; hint: string; cancel: string }): Promise<Picked | null>;
}
type SelectorPart = { selectorInfo(el: Element, o: unknown): SelectorInfo };

export interface CaptureTools {
  /**
   * For the shell to place: the selected text waiting to be added, the picked element waiting for
   * its comment, the recording bar, the tool row (the Files tool joins it) and, when push-to-talk
   * is on, "hold the key to talk".
   */
  nodes: [selBox: HTMLElement, pinBox: HTMLElement, recBar: HTMLElement, tools: HTMLElement, pttHint: HTMLElement | null];
  /** reads the page's selection; `fresh`: forget one offered before */
  readSelection(fresh?: boolean): void;
  /** where the focus goes on opening: the comment box of an offered selection */
  focusTarget(): HTMLElement | null;
  /** stops a recording, keeping nothing */
  stop(): void;
  render(): void;
}

/**
 * `host` loads the capture parts and holds the shadow root they draw in, the settings and the
 * sending engine that uploads what they capture; `root` is the dialog, hidden while a tool covers
 * the page; `add` puts a block in the draft thread (a screenshot with its picture, for the
 * thumbnail).
 */
export function captureTools(
  t: Strings,
  host: PartHost,
  root: HTMLElement,
  isOpen: () => boolean,
  say: Say,
  render: Render,
  listen: Listen,
  add: (block: RawBlock, picture?: Blob) => void,
): CaptureTools {
  const { root: shadow, settings: s, core } = host;
  const selectorInfo = async (target: Element) => (await host.part<SelectorPart>('selector')).selectorInfo(target, s);

  let pending: { text: string; el: Element } | null = null;
  let pin: Picked | null = null;
  let recording: { rec: Recording; ptt: boolean; timer: number } | null = null;

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

  const tools = el('div', 'tools');
  tools.setAttribute('role', 'group');
  tools.setAttribute('aria-label', t.tools);
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
  tools.append(shotButton, voiceButton, quoteButton, pinButton);
  const pttHint = s.pushToTalkKey ? el('p', 'hint', fill(t.holdToTalk, { key: s.pushToTalkKey })) : null;

  // ---- selection and quote -------------------------------------------------------------------
  function readSelection(fresh?: boolean): void {
    // Only what is selected now is offered, not a selection made and dropped long ago.
    if (fresh) pending = null;
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
    if (isOpen()) render();
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
      const info = await selectorInfo(target);
      const comment = selComment.value.trim();
      const block: RawBlock = comment
        ? { type: 'quote', text, selector: info.css, target: info, comment: comment.slice(0, TEXT_MAX) }
        : { type: 'selection', text, selector: info.css, target: info };
      dropSelection(false);
      add(block);
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
      root.hidden = !isOpen();
      if (hit) {
        pin = hit;
        const info = await selectorInfo(hit.el);
        pin.info = info;
        pinCss.textContent = info.css;
        render();
        pinComment.focus();
      } else pinButton.focus();
    } catch (e) {
      root.hidden = !isOpen();
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
    add(block);
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
      root.hidden = !isOpen();
      if (result) {
        say(fill(t.uploading, { name: t.screenshot }));
        const up = await core.upload('screenshot', result.blob, 'screenshot.' + (result.blob.type === 'image/webp' ? 'webp' : 'jpg'), {
          width: String(result.width),
          height: String(result.height),
        });
        const block: RawBlock = { type: 'screenshot', blobId: up.blobId, width: result.width, height: result.height, mime: up.mime, bytes: up.bytes };
        if (result.annotations.length) block.annotations = result.annotations;
        add(block, result.blob);
      } else say('');
    } catch (e) {
      root.hidden = !isOpen();
      say(t.captureFailed + ' ' + errorCode(e));
    } finally {
      shotButton.disabled = false;
      if (isOpen()) shotButton.focus();
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
    if (isOpen()) voiceButton.focus();
    if (!keep) {
      r.rec.cancel();
      return;
    }
    try {
      const note = await r.rec.stop();
      say(fill(t.uploading, { name: t.voice }));
      const up = await core.upload('audio', note.blob, 'voice.' + (/mp4/.test(note.mime) ? 'm4a' : 'webm'), { durationMs: String(note.durationMs) });
      add({ type: 'audio', blobId: up.blobId, durationMs: note.durationMs, mime: up.mime, bytes: up.bytes });
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
      if (!isOpen() || !s.pushToTalkKey || e.key !== s.pushToTalkKey || typing(e)) return;
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

  return {
    nodes: [selBox, pinBox, recBar, tools, pttHint],
    readSelection,
    focusTarget: () => (pending ? selComment : null),
    stop: () => void stopRecording(false),
    render() {
      selBox.hidden = !pending;
      if (pending) selQuote.textContent = pending.text;
      pinBox.hidden = !pin;
      recBar.hidden = !recording;
      voiceButton.setAttribute('aria-pressed', String(!!recording));
    },
  };
}
