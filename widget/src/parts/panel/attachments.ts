// The draft thread's blocks in the panel: the list of what the report holds so far (text,
// screenshots with their thumbnails, voice notes, selections and quotes, pinpoints, files), each
// with a Remove button; adding a block; and attaching files, from the Files tool or dropped on the
// panel. The blocks live in local storage (the widget's draft), so a reload keeps them.

import { button, el, icon } from '../../dom';
import { fill, formatBytes, formatDuration, plural, type Locale, type Strings } from '../../i18n';
import type { Core } from '../../core';
import type { RawBlock } from '../../types';
import type { Widget } from '../../widget';
import { errorCode, tool, type Render, type Say } from './shared';

const FILE_MAX_DEFAULT = 5 * 1024 * 1024;

export interface Attachments {
  /**
   * For the shell to place: the list of blocks with its heading, the Files tool, the hidden file
   * picker behind it, and what covers the panel while files are dragged over it.
   */
  nodes: [thread: HTMLElement, filesButton: HTMLButtonElement, fileInput: HTMLInputElement, drop: HTMLElement];
  /** adds a block to the draft thread; `picture` becomes a screenshot's thumbnail */
  add(block: RawBlock, picture?: Blob): void;
  /** forgets the thumbnails of blocks no longer in `keep` */
  dropThumbs(keep: RawBlock[]): void;
  render(): void;
}

/** `root` is the dialog (files dropped on it are attached); `focusMessage` takes the focus when the last block goes. */
export function attachments(
  t: Strings,
  locale: Locale,
  widget: Widget,
  core: Core,
  root: HTMLElement,
  say: Say,
  render: Render,
  focusMessage: () => void,
): Attachments {
  const thread = el('div', 'thread');
  const removeWord = el('span', 'vh', t.remove);
  removeWord.id = 'svc-rm';
  const threadTitle = el('h3');
  threadTitle.id = 'svc-thread';
  const blocks = el('ul', 'blocks');
  blocks.setAttribute('aria-labelledby', 'svc-thread');
  thread.append(removeWord, threadTitle, blocks);

  // Thumbnails of this session's screenshots (object URLs of the uploaded pictures), by blob id.
  const thumbs = new Map<string, string>();
  const dropThumbs = (keep: RawBlock[]) => {
    for (const [id, url] of thumbs) if (!keep.some((b) => b.blobId === id)) URL.revokeObjectURL(url), thumbs.delete(id);
  };

  /** A block in words: its icon, what it is, a short description. */
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

  function add(block: RawBlock, picture?: Blob): void {
    if (picture) thumbs.set(String(block.blobId), URL.createObjectURL(picture));
    widget.saveDraft([...widget.draft(), block]);
    render();
    say(fill(t.added, { what: describe(block)[1] }));
  }

  function renderThread(): void {
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
          const next = rest[Math.min(i, rest.length - 1)] as HTMLElement | undefined;
          if (next) next.focus();
          else focusMessage();
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
  }

  // ---- files ---------------------------------------------------------------------------------
  const fileInput = el('input', 'vh');
  const filesButton = tool('clip', t.attachFiles, t.attachFilesLong, () => fileInput.click());
  fileInput.type = 'file';
  fileInput.multiple = true;
  fileInput.tabIndex = -1;
  fileInput.setAttribute('aria-hidden', 'true');
  fileInput.addEventListener('change', () => {
    const files = Array.from(fileInput.files || []);
    fileInput.value = '';
    void addFiles(files);
  });

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

  // Files dropped anywhere on the panel.
  const drop = el('div', 'drop', t.drop);
  drop.hidden = true;
  let dragDepth = 0;
  const hasFiles = (e: DragEvent) => !!e.dataTransfer && Array.from(e.dataTransfer.types).includes('Files');
  root.addEventListener('dragenter', (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault();
    dragDepth++;
    drop.hidden = false;
  });
  root.addEventListener('dragover', (e) => {
    if (hasFiles(e)) e.preventDefault();
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

  return { nodes: [thread, filesButton, fileInput, drop], add, dropThumbs, render: renderThread };
}
