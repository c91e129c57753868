import { describe, expect, it } from 'vitest';
import { installNetwork, MAX_REQUESTS, type NetEntry } from '../src/network-capture';
import { networkEntries } from '../src/core';

/** A window with a fake fetch and XMLHttpRequest. */
function fakeWindow(answer: (url: string) => number | Error) {
  class FakeXhr {
    status = 0;
    responseURL = '';
    private listeners: Record<string, Array<() => void>> = {};
    private url = '';
    open(_method: string, url: string) {
      this.url = url;
    }
    addEventListener(type: string, fn: () => void) {
      (this.listeners[type] = this.listeners[type] || []).push(fn);
    }
    send() {
      const a = answer(this.url);
      if (a instanceof Error) (this.listeners.error || []).forEach((f) => f());
      else {
        this.status = a;
        this.responseURL = 'https://app.test' + this.url;
        (this.listeners.load || []).forEach((f) => f());
      }
    }
  }
  const win = {
    fetch: async (input: unknown) => {
      const url = String(input);
      const a = answer(url);
      if (a instanceof Error) throw a;
      return { status: a, url: 'https://app.test' + url } as Response;
    },
    XMLHttpRequest: FakeXhr,
  };
  return win as unknown as Window & typeof globalThis;
}

describe('failed requests', () => {
  it('records fetch and XHR calls that failed or got no answer, the last ten', async () => {
    const list: NetEntry[] = [];
    const win = fakeWindow((url) => (url.includes('down') ? new TypeError('Failed to fetch') : url.includes('500') ? 500 : 200));
    installNetwork(win, list);
    installNetwork(win, list); // once per page
    await win.fetch('/ok');
    await win.fetch('/api/500', { method: 'post' });
    await expect(win.fetch('/down')).rejects.toThrow('Failed to fetch');
    const xhr = new win.XMLHttpRequest();
    xhr.open('PUT', '/xhr/500?id=7');
    xhr.send();
    const gone = new win.XMLHttpRequest();
    gone.open('GET', '/xhr/down');
    gone.send();
    expect(list.map(([method, url, status]) => [method, url, status])).toEqual([
      ['post', 'https://app.test/api/500', 500],
      [null, '/down', 0],
      ['PUT', 'https://app.test/xhr/500?id=7', 500],
      ['GET', '/xhr/down', 0],
    ]);
    for (let i = 0; i < 12; i++) await win.fetch('/many/500/' + i);
    expect(list.length).toBe(MAX_REQUESTS);
    expect(list[MAX_REQUESTS - 1][1]).toBe('https://app.test/many/500/11');
  });

  it('leaves the widget out, resolves URLs and masks every query value before sending', () => {
    const start = Date.UTC(2026, 4, 1, 9, 30);
    const entries: NetEntry[] = [
      ['post', 'https://app.test/api/pay?cart=42&token=abc', 500, 132, start],
      [undefined, '/api/me', 0, 30001, start],
      ['POST', 'https://svc.test/ingest/report', 503, 10, start],
    ];
    expect(networkEntries(entries, 'https://svc.test')).toEqual([
      { method: 'POST', url: 'https://app.test/api/pay?cart=[redacted]&token=[redacted]', status: 500, durationMs: 132, time: '2026-05-01T09:30:00.000Z' },
      { method: 'GET', url: new URL('/api/me', location.href).href, status: 0, durationMs: 30001, time: '2026-05-01T09:30:00.000Z' },
    ]);
  });
});
