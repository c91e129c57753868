import { describe, expect, it } from 'vitest';
import { conditionHolds, route, type RouteEnv } from '../src/routing';
import { globMatch, urlAllowed } from '../src/glob';
import type { Channel } from '../src/types';

const env = (over: Partial<RouteEnv> = {}): RouteEnv => ({
  url: 'https://shop.test/checkout/pay?x=1',
  path: '/checkout/pay',
  host: 'shop.test',
  userId: 'u1',
  locale: 'en',
  attributes: { plan: 'pro', seats: 5 },
  ...over,
});

const channels = (): Channel[] => [
  { key: 'bug', baseWeight: 0 },
  { key: 'idea', baseWeight: 0 },
  { key: 'checkout', baseWeight: 0, matchers: [{ conditions: [{ field: 'path', op: 'prefix', value: '/checkout' }], weight: 5, note: '' }] },
];

describe('conditions', () => {
  const e = env();
  it.each([
    ['url', 'contains', 'checkout', true],
    ['path', 'eq', '/checkout/pay', true],
    ['path', 'neq', '/checkout/pay', false],
    ['host', 'suffix', '.test', true],
    ['host', 'prefix', 'shop', true],
    ['url', 'glob', 'https://*.test/checkout/*', true],
    ['url', 'glob', 'https://*.test/cart/*', false],
    ['path', 'regex', '^/check(out)?/', true],
    ['path', 'regex', '([', false],
    ['userId', 'eq', 'u1', true],
    ['locale', 'eq', 'ru', false],
    ['attr.plan', 'eq', 'pro', true],
    ['attr.seats', 'eq', '5', true],
    ['attr.plan', 'exists', undefined, true],
    ['attr.missing', 'exists', undefined, false],
    ['attr.missing', 'neq', 'x', true],
    ['attr.missing', 'eq', 'x', false],
    ['attr.plan', 'unknown-op', 'pro', false],
  ])('%s %s %s', (field, op, value, expected) => {
    expect(conditionHolds({ field, op, value: value as string | undefined }, e)).toBe(expected);
  });
  it('in takes a list', () => {
    expect(conditionHolds({ field: 'attr.plan', op: 'in', value: ['free', 'pro'] }, e)).toBe(true);
    expect(conditionHolds({ field: 'attr.plan', op: 'in', value: ['free'] }, e)).toBe(false);
  });
});

describe('route', () => {
  it('falls back to the default channel when nothing scores above 0', () => {
    expect(route(channels(), env({ path: '/home' }), [], null, 'bug')).toEqual({ key: 'bug', source: 'default' });
  });
  it('picks the highest positive score from matchers', () => {
    expect(route(channels(), env(), [], null, 'bug')).toEqual({ key: 'checkout', source: 'rules' });
  });
  it('needs every condition of a matcher', () => {
    const list = channels();
    list[2].matchers![0].conditions.push({ field: 'attr.plan', op: 'eq', value: 'free' });
    expect(route(list, env(), [], null, 'bug').key).toBe('bug');
  });
  it('adds baseWeight and breaks ties to the older channel', () => {
    const list: Channel[] = [{ key: 'bug', baseWeight: 1 }, { key: 'idea', baseWeight: 1 }];
    expect(route(list, env(), [], null, 'idea').key).toBe('bug');
    list[1].baseWeight = 2;
    expect(route(list, env(), [], null, 'bug').key).toBe('idea');
  });
  it('never picks a negative or zero score', () => {
    const list: Channel[] = [{ key: 'bug', baseWeight: -3 }, { key: 'idea', baseWeight: 0 }];
    expect(route(list, env(), [], null, 'idea')).toEqual({ key: 'idea', source: 'default' });
  });
  it('a max hint wins over any score; suggest only when nothing scores', () => {
    expect(route(channels(), env(), [{ channelKey: 'idea', weight: 'max' }], null, 'bug')).toEqual({ key: 'idea', source: 'hint' });
    expect(route(channels(), env(), [{ channelKey: 'idea', weight: 'suggest' }], null, 'bug').key).toBe('checkout');
    expect(route(channels(), env({ path: '/' }), [{ channelKey: 'idea', weight: 'suggest' }], null, 'bug')).toEqual({ key: 'idea', source: 'hint' });
  });
  it('numeric hints add to the score', () => {
    expect(route(channels(), env(), [{ channelKey: 'idea', weight: 6 }], null, 'bug')).toEqual({ key: 'idea', source: 'hint' });
    expect(route(channels(), env(), [{ channelKey: 'idea', weight: 4 }], null, 'bug').key).toBe('checkout');
  });
  it('hints for another user are ignored', () => {
    expect(route(channels(), env(), [{ channelKey: 'idea', weight: 'max', userId: 'u2' }], null, 'bug').key).toBe('checkout');
    expect(route(channels(), env(), [{ channelKey: 'idea', weight: 'max', userId: 'u1' }], null, 'bug').key).toBe('idea');
  });
  it('setChannel overrides like a hint (max by default) and beats a max hint', () => {
    const hints = [{ channelKey: 'idea', weight: 'max' as const }];
    expect(route(channels(), env(), hints, { key: 'bug', weight: 'max' }, 'idea')).toEqual({ key: 'bug', source: 'setChannel' });
    expect(route(channels(), env(), [], { key: 'idea', weight: 10 }, 'bug')).toEqual({ key: 'idea', source: 'setChannel' });
    expect(route(channels(), env(), [], { key: 'idea', weight: 'suggest' }, 'bug').key).toBe('checkout');
    expect(route(channels(), env({ path: '/' }), [], { key: 'idea', weight: 'suggest' }, 'bug')).toEqual({ key: 'idea', source: 'setChannel' });
  });
  it('unknown channels are ignored and no channel at all is null', () => {
    expect(route(channels(), env({ path: '/' }), [{ channelKey: 'gone', weight: 'max' }], { key: 'nope', weight: 'max' }, 'bug').key).toBe('bug');
    expect(route([], env(), [], null, 'bug')).toEqual({ key: null, source: 'default' });
    expect(route(channels(), env({ path: '/' }), [], null, 'archived')).toEqual({ key: null, source: 'default' });
  });
});

describe('url patterns', () => {
  it('globs match the whole URL', () => {
    expect(globMatch('https://*.example.com/*', 'https://app.example.com/a/b')).toBe(true);
    expect(globMatch('https://example.com/', 'https://example.com/x')).toBe(false);
    expect(globMatch('*', '')).toBe(true);
    expect(globMatch('a*b*c', 'aXXbYYc')).toBe(true);
    expect(globMatch('a*b*c', 'aXXbYY')).toBe(false);
  });
  it('an empty list allows every page', () => {
    expect(urlAllowed([], 'https://x.test/')).toBe(true);
    expect(urlAllowed(undefined, 'https://x.test/')).toBe(true);
    expect(urlAllowed(['http://localhost:3000/*'], 'https://x.test/')).toBe(false);
    expect(urlAllowed(['http://localhost:3000/*'], 'http://localhost:3000/app')).toBe(true);
  });
});
