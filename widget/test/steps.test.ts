import { describe, expect, it } from 'vitest';
import { networkEntries, stepsOf } from '../src/core';
import type { NetEntry } from '../src/network-capture';

const NOW = Date.parse('2026-11-28T12:00:00Z');
const API = 'https://feedback.example.com';

describe('context.steps', () => {
  it('places console errors and failed requests among the actions, oldest first, with the time before the report', () => {
    const steps = stepsOf(
      [
        { kind: 'navigate', at: NOW - 9000, url: 'https://shop.test/cart?coupon=SECRET10#pay', via: 'load' },
        { kind: 'click', at: NOW - 5000, target: { css: '#pay' } },
        { kind: 'input', at: NOW - 7000, inputType: 'text', length: 16, changed: true },
      ],
      [['TypeError: total is undefined', NOW - 4000]],
      networkEntries(
        [
          ['post', 'https://shop.test/api/pay?token=abc', 500, 30, NOW - 4500],
          ['POST', API + '/ingest/reports', 503, 20, NOW - 100],
        ] as NetEntry[],
        API,
      ),
      NOW,
    );
    expect(steps.map((s) => s.kind)).toEqual(['navigate', 'input', 'click', 'request', 'console']);
    expect(steps.map((s) => s.beforeMs)).toEqual([9000, 7000, 5000, 4500, 4000]);
    // Query values masked as in context.network; Svc's own request left out; no `at` sent.
    expect(steps[0].url).not.toContain('SECRET10');
    expect(steps[3]).toMatchObject({ method: 'POST', status: 500 });
    expect(String(steps[3].url)).not.toContain('abc');
    expect(steps[4].message).toBe('TypeError: total is undefined');
    expect(steps.every((s) => !('at' in s))).toBe(true);
  });

  it('keeps the last 50 of the last day', () => {
    const recorded = Array.from({ length: 60 }, (_, i) => ({ kind: 'click', at: NOW - (60 - i) * 1000 }));
    recorded.unshift({ kind: 'click', at: NOW - 2 * 86_400_000 });
    const steps = stepsOf(recorded, [], [], NOW);
    expect(steps).toHaveLength(50);
    expect(steps[0].beforeMs).toBe(50_000);
    expect(steps[49].beforeMs).toBe(1000);
  });
});
