// Small helpers: safe local storage, warnings, ids.

export const PREFIX = '[Svc]';

export function warn(message: string): void {
  try {
    console.warn(PREFIX + ' ' + message);
  } catch {
    /* a console that throws must not break the page */
  }
}

/** JSON in local storage; every failure (quota, privacy mode, bad JSON) reads as `fallback`. */
export function load<T>(key: string, fallback: T): T {
  try {
    const text = localStorage.getItem(key);
    return text == null ? fallback : (JSON.parse(text) as T);
  } catch {
    return fallback;
  }
}

export function save(key: string, value: unknown): boolean {
  try {
    if (value == null) localStorage.removeItem(key);
    else localStorage.setItem(key, JSON.stringify(value));
    return true;
  } catch {
    return false;
  }
}

/** A random id for idempotency keys and queue items (not a secret). */
export function newId(): string {
  const c = (globalThis as { crypto?: Crypto }).crypto;
  if (c && c.randomUUID) return c.randomUUID();
  let s = '';
  for (let i = 0; i < 32; i++) s += Math.floor(Math.random() * 16).toString(16);
  return s;
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A JSON-safe deep copy (functions, cycles and non-finite numbers dropped). */
export function plain<T>(value: T): T {
  const seen = new WeakSet<object>();
  return JSON.parse(
    JSON.stringify(value, (_k, v) => {
      if (typeof v === 'object' && v !== null) {
        if (seen.has(v)) return undefined;
        seen.add(v);
      }
      return typeof v === 'bigint' ? String(v) : v;
    }) ?? 'null',
  ) as T;
}
