import { describe, expect, it } from 'vitest';
import { fill, formatBytes, formatDuration, plural, STRINGS } from '../src/i18n';

describe('panel strings', () => {
  it('every English string has a Russian one of the same shape', () => {
    const en = STRINGS.en as Record<string, unknown>;
    const ru = STRINGS.ru as Record<string, unknown>;
    expect(Object.keys(ru).sort()).toEqual(Object.keys(en).sort());
    for (const key of Object.keys(en)) {
      expect(typeof ru[key], key).toBe(typeof en[key]);
      const placeholders = (v: unknown) => JSON.stringify(v).match(/\{\w+\}/g)?.sort() ?? [];
      expect(new Set(placeholders(ru[key])), key).toEqual(new Set(placeholders(en[key])));
    }
  });

  it('Russian strings hold no English words (key names aside)', () => {
    for (const [key, value] of Object.entries(STRINGS.ru)) {
      const text = JSON.stringify(value).replace(/\{\w+\}/g, '');
      const words = (text.match(/[A-Za-z]{2,}/g) || []).filter((w) => w !== 'Esc');
      expect(words, key).toEqual([]);
    }
  });

  it('Russian plurals: one, few, many', () => {
    const forms = STRINGS.ru.items;
    const cases: Array<[number, string]> = [
      [0, '0 вложений'], [1, '1 вложение'], [2, '2 вложения'], [4, '4 вложения'], [5, '5 вложений'],
      [11, '11 вложений'], [12, '12 вложений'], [14, '14 вложений'], [21, '21 вложение'], [22, '22 вложения'],
      [25, '25 вложений'], [101, '101 вложение'], [111, '111 вложений'], [1001, '1\u00a0001 вложение'],
    ];
    for (const [n, want] of cases) expect(plural('ru', n, forms)).toBe(want);
    expect(plural('ru', 3, STRINGS.ru.marks)).toBe('3 пометки');
    expect(plural('ru', 7, STRINGS.ru.marks)).toBe('7 пометок');
  });

  it('English plurals: one and other', () => {
    expect(plural('en', 1, STRINGS.en.items)).toBe('1 item');
    expect(plural('en', 0, STRINGS.en.items)).toBe('0 items');
    expect(plural('en', 2, STRINGS.en.marks)).toBe('2 marks');
    expect(plural('en', 1200, STRINGS.en.marks)).toBe('1,200 marks');
  });

  it('fills placeholders and formats sizes and durations', () => {
    expect(fill(STRINGS.en.tooLarge, { name: 'a.zip', size: '5 MB' })).toBe('a.zip is larger than 5 MB.');
    expect(fill('{a} {b}', { a: 1 })).toBe('1 {b}');
    expect(formatBytes('en', 21)).toBe('21\u00a0B');
    expect(formatBytes('en', 5 * 1024 * 1024)).toBe('5\u00a0MB');
    expect(formatBytes('en', 1536)).toBe('1.5\u00a0KB');
    expect(formatBytes('ru', 1536)).toBe('1,5\u00a0КБ');
    expect(formatBytes('ru', 300 * 1024)).toBe('300\u00a0КБ');
    expect(formatDuration(0)).toBe('0:00');
    expect(formatDuration(65_900)).toBe('1:05');
    expect(formatDuration(300_000)).toBe('5:00');
  });
});
