// Channel routing (decisions §5): score = baseWeight + applying matchers + numeric hint weights; the
// highest positive score wins, ties to the older channel; no positive score means the project's
// default channel. A `max` hint (or setChannel without a weight) wins over any score; a `suggest`
// hint is used only when nothing scores above 0.

import { globMatch } from './glob';
import type { Channel, Condition, Hint, Weight } from './types';

/** What conditions are evaluated against. */
export interface RouteEnv {
  url: string;
  path: string;
  host: string;
  userId?: string;
  locale?: string;
  attributes: Record<string, unknown>;
}

export interface Override {
  key: string;
  weight: Weight;
}

export interface Route {
  key: string | null;
  /** how the channel was chosen: `setChannel`, `hint`, `rules` or `default` */
  source: string;
}

function fieldValue(field: string, env: RouteEnv): string | undefined {
  if (field.startsWith('attr.')) {
    const v = env.attributes[field.slice(5)];
    if (v === undefined || v === null) return undefined;
    return typeof v === 'object' ? JSON.stringify(v) : String(v);
  }
  switch (field) {
    case 'url':
      return env.url;
    case 'path':
      return env.path;
    case 'host':
      return env.host;
    case 'userId':
      return env.userId || undefined;
    case 'locale':
      return env.locale || undefined;
  }
  return undefined;
}

export function conditionHolds(c: Condition, env: RouteEnv): boolean {
  const actual = fieldValue(String(c.field || ''), env);
  const value = c.value;
  if (c.op === 'exists') return actual !== undefined && actual !== '';
  if (c.op === 'neq') return actual !== (value == null ? undefined : String(value));
  if (actual === undefined) return false;
  if (c.op === 'in') return Array.isArray(value) ? value.map(String).includes(actual) : actual === String(value);
  const v = value == null ? '' : String(value);
  switch (c.op) {
    case 'eq':
      return actual === v;
    case 'contains':
      return actual.includes(v);
    case 'prefix':
      return actual.startsWith(v);
    case 'suffix':
      return actual.endsWith(v);
    case 'glob':
      return globMatch(v, actual);
    case 'regex':
      try {
        return new RegExp(v).test(actual);
      } catch {
        return false;
      }
  }
  return false;
}

/** The score of each channel from its base weight, applying matchers and numeric weights. */
export function scores(channels: Channel[], env: RouteEnv, numeric: Map<string, number>): number[] {
  return channels.map((ch) => {
    let score = Number(ch.baseWeight) || 0;
    for (const m of ch.matchers || []) {
      const conds = Array.isArray(m.conditions) ? m.conditions : [];
      if (conds.every((c) => conditionHolds(c, env))) score += Number(m.weight) || 0;
    }
    return score + (numeric.get(ch.key) || 0);
  });
}

/**
 * Picks the active channel. `channels` are oldest first; hints for other users are ignored;
 * unknown channel keys in hints or the override are ignored.
 */
export function route(
  channels: Channel[],
  env: RouteEnv,
  hints: Hint[],
  override: Override | null,
  defaultKey: string | undefined,
): Route {
  const known = (key: string) => channels.some((c) => c.key === key);
  const weights: Array<{ key: string; weight: Weight; source: string }> = [];
  if (override && known(override.key)) weights.push({ ...override, source: 'setChannel' });
  for (const h of hints || []) {
    if (h.userId && h.userId !== env.userId) continue;
    if (known(h.channelKey)) weights.push({ key: h.channelKey, weight: h.weight, source: 'hint' });
  }
  const max = weights.find((w) => w.weight === 'max');
  if (max) return { key: max.key, source: max.source };

  const numeric = new Map<string, number>();
  for (const w of weights) {
    if (typeof w.weight === 'number' && isFinite(w.weight)) {
      numeric.set(w.key, (numeric.get(w.key) || 0) + w.weight);
    }
  }
  const s = scores(channels, env, numeric);
  let best = -1;
  for (let i = 0; i < channels.length; i++) if (s[i] > 0 && (best < 0 || s[i] > s[best])) best = i;
  if (best >= 0) {
    const key = channels[best].key;
    const bySetChannel = weights.some((w) => w.key === key && w.source === 'setChannel' && typeof w.weight === 'number');
    return { key, source: bySetChannel ? 'setChannel' : numeric.has(key) ? 'hint' : 'rules' };
  }
  const suggest = weights.find((w) => w.weight === 'suggest');
  if (suggest) return { key: suggest.key, source: suggest.source };
  if (defaultKey && known(defaultKey)) return { key: defaultKey, source: 'default' };
  return { key: null, source: 'default' };
}
