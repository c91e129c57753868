// Failed requests, from the moment the script runs: fetch and XMLHttpRequest calls that answered
// 400 or more, or did not answer at all (status 0). The last 10 are kept in memory, as they were;
// the core part shapes, filters (the widget's own requests) and redacts them before a report
// takes them along (context.network), and only when captureNetworkErrors is on.

/** A failed request as recorded: [method, url, status (0: no answer), duration in ms, start time in ms]. */
export type NetEntry = [unknown, unknown, number, number, number];

export const MAX_REQUESTS = 10;

/** Hooks fetch and XMLHttpRequest once per page; every widget shares `list`. */
export function installNetwork(win: Window & typeof globalThis, list: NetEntry[]): void {
  const marked = win as unknown as { __svcNetHook?: boolean };
  if (marked.__svcNetHook) return;
  marked.__svcNetHook = true;
  const push = (method: unknown, url: unknown, status: number, start: number) => {
    list.push([method, url, status, Date.now() - start, start]);
    if (list.length > MAX_REQUESTS) list.shift();
  };
  const fetch = win.fetch;
  if (fetch) {
    win.fetch = function (this: unknown, input: RequestInfo | URL, init?: RequestInit) {
      const start = Date.now();
      const request = input && typeof input === 'object' && 'method' in input ? (input as Request) : null;
      const method = (init && init.method) || (request && request.method);
      const url = request ? request.url : input;
      return fetch.apply(this, arguments as unknown as [RequestInfo, RequestInit]).then(
        (r) => {
          if (r.status >= 400) push(method, r.url || url, r.status, start);
          return r;
        },
        (e) => {
          push(method, url, 0, start);
          throw e;
        },
      );
    } as typeof fetch;
  }
  const xhr = win.XMLHttpRequest && win.XMLHttpRequest.prototype;
  if (xhr) {
    const open = xhr.open;
    const send = xhr.send;
    type Tagged = XMLHttpRequest & { __svcReq?: unknown[] };
    xhr.open = function (this: Tagged) {
      this.__svcReq = [arguments[0], arguments[1]];
      return open.apply(this, arguments as unknown as Parameters<typeof open>);
    } as typeof xhr.open;
    xhr.send = function (this: Tagged) {
      const req = this.__svcReq;
      if (req) {
        const start = Date.now();
        this.addEventListener('load', () => this.status >= 400 && push(req[0], this.responseURL || req[1], this.status, start));
        for (const type of ['error', 'timeout']) this.addEventListener(type, () => push(req[0], req[1], 0, start));
      }
      return send.apply(this, arguments as unknown as [Document]);
    };
  }
}
