import { beforeEach, describe, expect, it, vi } from 'vitest';
import { BACKOFF_BASE_MS, BACKOFF_MAX_MS, backoffMs, DeliveryQueue, QUEUE_MAX_AGE_MS, QUEUE_MAX_ITEMS, retryable, type Outcome, type QueueItem } from '../src/queue';
import { HISTORY_MAX, historyList, recordSent, titleOf } from '../src/history';
import { newId } from '../src/util';

const item = (id: string, at = 1000, text = 'report ' + id): QueueItem => ({
  id,
  apiUrl: 'http://svc.test',
  projectKey: 'pr_x',
  payload: { blocks: [{ type: 'text', text }], context: {}, channelKey: 'bug' },
  title: text,
  attempts: 0,
  nextAt: at,
  createdAt: at,
});

describe('backoff', () => {
  it('doubles from 2 s up to 5 minutes', () => {
    const mid = () => 0.5; // no jitter
    expect(backoffMs(1, mid)).toBe(BACKOFF_BASE_MS);
    expect(backoffMs(2, mid)).toBe(2 * BACKOFF_BASE_MS);
    expect(backoffMs(5, mid)).toBe(16 * BACKOFF_BASE_MS);
    expect(backoffMs(30, mid)).toBe(BACKOFF_MAX_MS);
  });
  it('jitters by at most 20%', () => {
    expect(backoffMs(3, () => 0)).toBe(0.8 * 4 * BACKOFF_BASE_MS);
    expect(backoffMs(3, () => 1)).toBe(1.2 * 4 * BACKOFF_BASE_MS);
  });
  it('retries network errors, 408, 429 and 5xx only', () => {
    for (const s of [0, 408, 429, 500, 502, 503]) expect(retryable(s)).toBe(true);
    for (const s of [400, 401, 403, 404, 409, 413, 415]) expect(retryable(s)).toBe(false);
  });
});

describe('delivery queue', () => {
  let now = 1000;
  let outcomes: Outcome[] = [];
  let sent: Array<{ id: string; idempotencyKey: string }> = [];
  let delivered: Array<[string, string]> = [];
  const make = () =>
    new DeliveryQueue(
      'svc:test:queue',
      async (i) => {
        sent.push({ id: i.id, idempotencyKey: i.id });
        return outcomes.shift() || { ok: true, reportId: 'r-' + i.id };
      },
      (i, reportId) => delivered.push([i.id, reportId]),
      () => now,
      () => 0.5,
    );

  beforeEach(() => {
    localStorage.clear();
    now = 1000;
    outcomes = [];
    sent = [];
    delivered = [];
  });

  it('keeps an item in local storage until it is delivered', async () => {
    const q = make();
    q.add(item('a'));
    expect(JSON.parse(localStorage.getItem('svc:test:queue')!)).toHaveLength(1);
    outcomes.push({ ok: false, retry: true, error: 'network_error' });
    const first = await q.attempt(q.items()[0]);
    expect(first.ok).toBe(false);
    const stored = q.items()[0];
    expect(stored.attempts).toBe(1);
    expect(stored.nextAt).toBe(1000 + BACKOFF_BASE_MS);
    expect(stored.lastError).toBe('network_error');
    // A fresh queue over the same storage (a reload) sends it again with the same key.
    const again = make();
    now += BACKOFF_BASE_MS;
    await again.flush();
    expect(sent.map((s) => s.idempotencyKey)).toEqual(['a', 'a']);
    expect(delivered).toEqual([['a', 'r-a']]);
    expect(again.items()).toEqual([]);
    expect(localStorage.getItem('svc:test:queue')).toBeNull();
  });

  it('waits for the backoff unless forced', async () => {
    const q = make();
    q.add({ ...item('a'), nextAt: 5000 });
    await q.flush();
    expect(sent).toEqual([]);
    expect(q.nextDelay()).toBe(4000);
    await q.flush(true);
    expect(sent).toHaveLength(1);
    expect(q.nextDelay()).toBeNull();
  });

  it('honours Retry-After when it is longer than the backoff', async () => {
    const q = make();
    q.add(item('a'));
    outcomes.push({ ok: false, retry: true, error: 'rate_limited', retryAfterMs: 60000 });
    await q.flush();
    expect(q.items()[0].nextAt).toBe(1000 + 60000);
  });

  it('drops an item the server refuses for good', async () => {
    const q = make();
    q.add(item('a'));
    outcomes.push({ ok: false, retry: false, error: 'blocks_invalid' });
    const failed: Array<[string, string]> = [];
    q.onFailed = (i, error) => failed.push([i.id, error]);
    await q.flush();
    expect(q.items()).toEqual([]);
    expect(delivered).toEqual([]);
    expect(failed).toEqual([['a', 'blocks_invalid']]);
  });

  it('stops at the first retryable failure (still offline) and keeps the order', async () => {
    const q = make();
    q.add(item('a'));
    q.add(item('b'));
    q.add(item('c'));
    outcomes.push({ ok: true, reportId: 'r1' }, { ok: false, retry: true, error: 'offline' });
    await q.flush();
    expect(sent.map((s) => s.id)).toEqual(['a', 'b']);
    expect(q.items().map((i) => i.id)).toEqual(['b', 'c']);
  });

  it('never sends one item twice at once, and flushes do not overlap', async () => {
    const q = make();
    q.add(item('a'));
    const [one, two] = [q.flush(), q.flush()];
    await Promise.all([one, two]);
    const i = item('a');
    q.add(i);
    const [x, y] = await Promise.all([q.attempt(i), q.attempt(i)]);
    expect(sent).toHaveLength(2);
    expect([x.ok, y.ok].sort()).toEqual([false, true]);
  });

  it('drops items older than a day and keeps at most 50', async () => {
    const q = make();
    q.add(item('old', 0));
    const failed: string[] = [];
    q.onFailed = (i, error) => failed.push(i.id + ':' + error);
    now = QUEUE_MAX_AGE_MS + 10;
    await q.flush();
    expect(sent).toEqual([]);
    expect(failed).toEqual(['old:expired']);
    expect(q.items()).toEqual([]);
    for (let i = 0; i < QUEUE_MAX_ITEMS + 5; i++) q.add(item('i' + i, now));
    expect(q.items()).toHaveLength(QUEUE_MAX_ITEMS);
    expect(q.items()[0].id).toBe('i5');
  });

  it('reads corrupt storage as empty', () => {
    localStorage.setItem('svc:test:queue', '{not json');
    expect(make().items()).toEqual([]);
    localStorage.setItem('svc:test:queue', '[1, null, {"id": "x"}]');
    expect(make().items()).toEqual([]);
  });
});

describe('history', () => {
  beforeEach(() => localStorage.clear());

  it('titles come from the first text line', () => {
    expect(titleOf([{ type: 'text', text: '\n  First line  \nsecond' }])).toBe('First line');
    expect(titleOf([{ type: 'text', text: 'x'.repeat(100) }])).toHaveLength(80);
    expect(titleOf([{ type: 'file', blobId: 'b', name: 'log.txt' }])).toBe('File log.txt');
    expect(titleOf([{ type: 'screenshot', blobId: 'b' }, { type: 'text', text: '' }])).toBe('Screenshot');
    expect(titleOf([{ type: 'audio', blobId: 'b' }])).toBe('Voice note');
    expect(titleOf([{ type: 'pinpoint', selector: '#buy', target: { css: '#buy' } }])).toBe('Pinpoint on #buy');
    // The reporter's own words come before the block's name, as the server titles it.
    expect(titleOf([{ type: 'quote', text: ' Total ', selector: '#t', comment: 'c' }])).toBe('c');
    expect(titleOf([{ type: 'selection', text: ' Total ', selector: '#t' }])).toBe('Total');
    expect(titleOf([{ type: 'screenshot', blobId: 'b' }, { type: 'audio', blobId: 'a', transcript: 'It jumps' }])).toBe('It jumps');
    expect(titleOf([{ type: 'pinpoint', selector: '#buy', target: { css: '#buy', text: ' Pay\n now' } }])).toBe('Pinpoint on “Pay”');
  });

  it('keeps the last 20 sent, newest first, without duplicates', () => {
    for (let i = 0; i < 25; i++) recordSent('h', { id: 'q' + i, reportId: 'r' + i, title: 't' + i, at: i, status: 'sent' });
    recordSent('h', { id: 'q24', reportId: 'r24', title: 't24', at: 99, status: 'sent' });
    const list = historyList('h', []);
    expect(list).toHaveLength(HISTORY_MAX);
    expect(list[0]).toMatchObject({ id: 'q24', at: 99 });
    expect(list[19].id).toBe('q5');
  });

  it('lists queued reports first, plus the sent ones', () => {
    recordSent('h', { id: 's1', reportId: 'r1', title: 'sent one', at: 5, status: 'sent' });
    const list = historyList('h', [item('a', 10), item('b', 20)]);
    expect(list.map((e) => [e.id, e.status])).toEqual([
      ['b', 'queued'],
      ['a', 'queued'],
      ['s1', 'sent'],
    ]);
    expect(list[0]).toMatchObject({ title: 'report b', channelKey: 'bug', at: 20 });
  });

  it('is kept per key (project)', () => {
    recordSent('svc:w:history:pr_a', { id: 'x', title: 'a', at: 1, status: 'sent' });
    expect(historyList('svc:w:history:pr_b', [])).toEqual([]);
  });
});

describe('idempotency keys', () => {
  const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

  it('are UUIDs version 7 that carry the time they were made in their first 48 bits', () => {
    const at = Date.UTC(2026, 11, 6, 12, 0, 0, 123);
    const real = Date.now;
    Date.now = () => at;
    try {
      const id = newId();
      expect(id).toMatch(UUID_V7);
      expect(parseInt(id.slice(0, 8) + id.slice(9, 13), 16)).toBe(at);
    } finally {
      Date.now = real;
    }
  });

  it('are UUIDs version 7 on a page without randomUUID too (plain http)', () => {
    vi.stubGlobal('crypto', {});
    try {
      const ids = Array.from({ length: 50 }, () => newId());
      for (const id of ids) expect(id).toMatch(UUID_V7);
      expect(new Set(ids).size).toBe(ids.length);
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it('sort in the order they were made, and differ within one millisecond', () => {
    const real = Date.now;
    let now = 1_700_000_000_000;
    Date.now = () => now;
    try {
      const ids: string[] = [];
      for (let i = 0; i < 200; i++) {
        if (i % 50 === 0) now += 1;
        ids.push(newId());
      }
      expect(new Set(ids).size).toBe(ids.length);
      const byTime = (id: string) => id.slice(0, 13);
      expect(ids.map(byTime)).toEqual([...ids].map(byTime).sort());
      expect(ids.slice(50).every((id) => id > ids[49].slice(0, 13))).toBe(true);
    } finally {
      Date.now = real;
    }
  });
});
