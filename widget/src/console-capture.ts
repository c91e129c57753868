// The console.error ring buffer: from the moment the script runs, the last 10 errors (each at most
// 2,000 characters) from console.error, uncaught errors and unhandled rejections.

export const MAX_ERRORS = 10;
export const MAX_ERROR_CHARS = 2000;

function describe(value: unknown): string {
  if (value instanceof Error) return String(value) + (value.stack ? '\n' + value.stack.replace(String(value) + '\n', '') : '');
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

export class ErrorBuffer {
  /** [text, when it happened in ms since the epoch (for the steps' timeline)] */
  private items: Array<[string, number]> = [];

  push(parts: unknown[]): void {
    const text = parts.map(describe).join(' ').slice(0, MAX_ERROR_CHARS);
    if (!text) return;
    this.items.push([text, Date.now()]);
    if (this.items.length > MAX_ERRORS) this.items.splice(0, this.items.length - MAX_ERRORS);
  }

  list(): Array<[string, number]> {
    return this.items.slice();
  }

  clear(): void {
    this.items = [];
  }
}

/** Hooks console.error, `error` and `unhandledrejection` once per page; every widget shares it. */
export function installCapture(win: Window & typeof globalThis, buffer: ErrorBuffer): void {
  const marked = win as unknown as { __svcConsole?: boolean };
  if (marked.__svcConsole) return;
  marked.__svcConsole = true;
  const original = win.console.error;
  win.console.error = function (this: unknown, ...args: unknown[]) {
    try {
      buffer.push(args);
    } catch {
      /* never break logging */
    }
    return original.apply(this, args);
  };
  win.addEventListener('error', (e: ErrorEvent) => {
    if (e.error || e.message) buffer.push(['Uncaught ' + describe(e.error || e.message)]);
  });
  win.addEventListener('unhandledrejection', (e: PromiseRejectionEvent) => {
    buffer.push(['Unhandled rejection: ' + describe(e.reason)]);
  });
}
