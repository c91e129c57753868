// The routing cases shared with the server (svc-core's `routing` runs the same file), so the
// dashboard's channel tester and the widget choose alike.
import { describe, expect, it } from 'vitest';
import { route, type Override, type RouteEnv } from '../src/routing';
import type { Channel, Hint } from '../src/types';
import shared from './routing-cases.json';

interface Case {
  name: string;
  channels: Channel[];
  env: RouteEnv;
  hints: Hint[];
  override: Override | null;
  defaultKey: string | null;
  expected: { key: string | null; source: string };
}

describe('routing cases shared with the server', () => {
  it.each((shared.cases as unknown as Case[]).map((c) => [c.name, c] as const))('%s', (_name, c) => {
    expect(route(c.channels, c.env, c.hints, c.override, c.defaultKey ?? undefined)).toEqual(c.expected);
  });
});
