// Reliable delivery: a report is written to a queue in local storage before it is sent, carries
// one Idempotency-Key for all its attempts (so a retry never duplicates it), and is retried with
// exponential backoff after network errors, 429 and 5xx. The queue survives reloads.

import { load, save } from './util';
import type { Payload } from './types';

export interface QueueItem {
  /** also the Idempotency-Key */
  id: string;
  apiUrl: string;
  projectKey: string;
  identity?: string;
  payload: Payload;
  title: string;
  attempts: number;
  nextAt: number;
  createdAt: number;
  lastError?: string;
}

export type Outcome =
  | { ok: true; reportId: string }
  | { ok: false; retry: boolean; error: string; retryAfterMs?: number };

export const BACKOFF_BASE_MS = 2000;
export const BACKOFF_MAX_MS = 5 * 60 * 1000;
/** Items older than this are dropped (the server remembers idempotency keys for 24 hours). */
export const QUEUE_MAX_AGE_MS = 24 * 60 * 60 * 1000;
export const QUEUE_MAX_ITEMS = 50;

/** Delay before attempt `attempts + 1`: 2 s doubling up to 5 min, with ±20% jitter. */
export function backoffMs(attempts: number, random: () => number = Math.random): number {
  const base = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * Math.pow(2, Math.max(0, attempts - 1)));
  return Math.round(base * (0.8 + 0.4 * random()));
}

/** Whether an HTTP status is worth retrying. */
export function retryable(status: number): boolean {
  return status === 0 || status === 408 || status === 425 || status === 429 || status >= 500;
}

export class DeliveryQueue {
  private _inflight = new Set<string>();
  /** called when an item is dropped undelivered (refused by the server, or expired) */
  onFailed: (item: QueueItem, error: string) => void = () => undefined;
  private _flushing: Promise<void> | null = null;

  constructor(
    readonly key: string,
    private _send: (item: QueueItem) => Promise<Outcome>,
    private _onSent: (item: QueueItem, reportId: string) => void,
    private _now: () => number = Date.now,
    private _random: () => number = Math.random,
  ) {}

  items(): QueueItem[] {
    const items = load<QueueItem[]>(this.key, []);
    return Array.isArray(items) ? items.filter((i) => i && typeof i.id === 'string' && i.payload) : [];
  }

  private _write(items: QueueItem[]): void {
    save(this.key, items.length ? items : null);
  }

  private _update(id: string, change: (item: QueueItem) => QueueItem | null): void {
    const items: QueueItem[] = [];
    for (const item of this.items()) {
      if (item.id !== id) items.push(item);
      else {
        const next = change(item);
        if (next) items.push(next);
      }
    }
    this._write(items);
  }

  /** Stores an item (oldest dropped past the limit); false when storage refused it. */
  add(item: QueueItem): boolean {
    const items = this.items().filter((i) => i.id !== item.id);
    items.push(item);
    while (items.length > QUEUE_MAX_ITEMS) items.shift();
    this._write(items);
    return this.items().some((i) => i.id === item.id);
  }

  remove(id: string): void {
    this._update(id, () => null);
  }

  /** One attempt for one item; the stored copy is updated with the result. */
  async attempt(item: QueueItem): Promise<Outcome> {
    if (this._inflight.has(item.id)) return { ok: false, retry: true, error: 'in_flight' };
    this._inflight.add(item.id);
    let outcome: Outcome;
    try {
      outcome = await this._send(item);
    } catch (e) {
      outcome = { ok: false, retry: true, error: String((e as Error)?.message || e) };
    } finally {
      this._inflight.delete(item.id);
    }
    if (outcome.ok) {
      this.remove(item.id);
      this._onSent(item, outcome.reportId);
    } else if (!outcome.retry) {
      this.remove(item.id);
      this.onFailed(item, outcome.error);
    } else {
      const attempts = item.attempts + 1;
      const delay = Math.max(outcome.retryAfterMs || 0, backoffMs(attempts, this._random));
      this._update(item.id, (stored) => ({ ...stored, attempts, nextAt: this._now() + delay, lastError: outcome.ok ? undefined : outcome.error }));
    }
    return outcome;
  }

  /** Sends every due item, one at a time; expired items are dropped. */
  flush(force = false): Promise<void> {
    if (!this._flushing) this._flushing = this._run(force).finally(() => (this._flushing = null));
    return this._flushing;
  }

  private async _run(force: boolean): Promise<void> {
    const now = this._now();
    for (const item of this.items()) {
      if (now - item.createdAt > QUEUE_MAX_AGE_MS) {
        this.remove(item.id);
        this.onFailed(item, 'expired');
        continue;
      }
      if (!force && item.nextAt > now) continue;
      const outcome = await this.attempt(item);
      if (!outcome.ok && outcome.retry && outcome.error !== 'in_flight') break; // still offline: wait
    }
  }

  /** Milliseconds until the next item is due, or null when the queue is empty. */
  nextDelay(): number | null {
    const items = this.items();
    if (!items.length) return null;
    return Math.max(0, Math.min(...items.map((i) => i.nextAt)) - this._now());
  }
}
