// History for the panel: the last 20 reports this browser sent for the project plus any queued
// for retry, from local storage only.

import { load, save } from './util';
import type { RawBlock, HistoryEntry } from './types';
import type { QueueItem } from './queue';

export const HISTORY_MAX = 20;

/**
 * As the server makes it: the first non-empty line of the first text block, else of the first
 * comment, transcript or file description; cut to 80 characters; else after the first block.
 */
export function titleOf(blocks: RawBlock[]): string {
  const line = (v: unknown) => (typeof v === 'string' ? v.split('\n').map((l) => l.trim()).find(Boolean) : undefined);
  const words =
    blocks.map((b) => (b.type === 'text' ? line(b.text) : undefined)).find(Boolean) ||
    blocks.map((b) => line(b.comment) || line(b.transcript) || line(b.description)).find(Boolean);
  if (words) return words.slice(0, 80);
  const first = blocks[0];
  if (!first) return '';
  const fixed: Record<string, string> = { screenshot: 'Screenshot', audio: 'Voice note' };
  if (fixed[first.type]) return fixed[first.type];
  if (first.type === 'file') return 'File ' + String(first.name || '');
  if (first.type === 'pinpoint') {
    const target = (first.target || {}) as { text?: string; accessibleName?: string };
    const shown = line(target.text) || line(target.accessibleName);
    return (shown ? 'Pinpoint on “' + shown + '”' : 'Pinpoint on ' + String(first.selector || '')).slice(0, 80);
  }
  return typeof first.text === 'string' ? first.text.trim().slice(0, 80) : first.type;
}

export function recordSent(key: string, entry: HistoryEntry): void {
  const list = load<HistoryEntry[]>(key, []);
  const next = [entry, ...(Array.isArray(list) ? list : []).filter((e) => e.id !== entry.id && (!entry.reportId || e.reportId !== entry.reportId))];
  save(key, next.slice(0, HISTORY_MAX));
}

/** Queued items first (newest first), then the sent ones (newest first). */
export function historyList(key: string, queued: QueueItem[]): HistoryEntry[] {
  const sent = load<HistoryEntry[]>(key, []);
  const waiting: HistoryEntry[] = queued
    .slice()
    .sort((a, b) => b.createdAt - a.createdAt)
    .map((q) => ({ id: q.id, title: q.title, channelKey: q.payload.channelKey, at: q.createdAt, status: 'queued' }));
  const ids = new Set(waiting.map((w) => w.id));
  return [...waiting, ...(Array.isArray(sent) ? sent : []).filter((e) => !ids.has(e.id)).slice(0, HISTORY_MAX)];
}
