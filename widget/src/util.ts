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

/**
 * An id for idempotency keys and queue items (not a secret): a UUID version 7, the time in
 * milliseconds first and 74 random bits after it. Keys made later sort later, so the server files
 * each one at the end of its index of keys instead of on a random page of it.
 */
export function newId(): string {
  const c = (globalThis as { crypto?: Crypto }).crypto;
  // randomUUID exists in secure contexts only; the pattern keeps the variant bits (8) in place.
  const random =
    c && c.randomUUID ? c.randomUUID() : 'xxxxxxxx-xxxx-4xxx-8xxx-xxxxxxxxxxxx'.replace(/x/g, () => ((Math.random() * 16) | 0).toString(16));
  const ms = Date.now().toString(16).padStart(12, '0');
  return ms.slice(0, 8) + '-' + ms.slice(8) + '-7' + random.slice(15);
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
