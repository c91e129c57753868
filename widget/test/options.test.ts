import { describe, expect, it } from 'vitest';
import { complete, fromScriptTag, normalize } from '../src/options';
import type { InitOptions } from '../src/types';

describe('ignoreUrlPatterns', () => {
  it('is off unless given as true', () => {
    expect(normalize({ projectKey: 'pr_x' }, {}, 'https://svc.test').ignoreUrlPatterns).toBe(false);
    expect(normalize({ projectKey: 'pr_x', ignoreUrlPatterns: 'yes' as unknown as boolean }, {}, 'https://svc.test').ignoreUrlPatterns).toBe(false);
    expect(normalize({ projectKey: 'pr_x', ignoreUrlPatterns: true }, {}, 'https://svc.test').ignoreUrlPatterns).toBe(true);
  });

  it('comes from the data-ignore-url-patterns attribute of the script tag', () => {
    const tag = document.createElement('script');
    expect(fromScriptTag(tag).ignoreUrlPatterns).toBeUndefined();
    tag.setAttribute('data-ignore-url-patterns', '');
    expect(fromScriptTag(tag).ignoreUrlPatterns).toBe(true);
  });
});

describe('options the lazy parts use', () => {
  it('are checked when the core part completes the settings, with the same warnings', () => {
    const warnings: string[] = [];
    const original = console.warn;
    console.warn = (m: string) => void warnings.push(m);
    try {
      const s = normalize(
        {
          projectKey: 'pr_x',
          mode: 'artifact-review',
          artifact: { id: '' },
          extra: 5 as unknown as Record<string, unknown>,
          structuredAttributes: 'data-qa:name,el;bad' as unknown as [],
          testIdAttributes: ['data-e2e'],
        },
        {},
        'https://svc.test',
      );
      expect(warnings).toEqual([]);
      expect(s.complete).toBeUndefined();
      complete(s);
      expect(s.mode).toBe('default');
      expect(s.artifact).toBeUndefined();
      expect(s.extra).toEqual({});
      expect(s.structuredAttributes).toEqual([{ attr: 'data-qa', keys: ['name', 'el'] }]);
      expect(s.testIdAttributes).toEqual(['data-e2e']);
      expect(warnings.join('\n')).toMatch(/artifact\.id/);
      expect(warnings.join('\n')).toMatch(/artifact-review mode needs an artifact/);
      expect(warnings.join('\n')).toMatch(/extra/);
      // Once is enough.
      complete(s);
      expect(warnings.length).toBe(3);
    } finally {
      console.warn = original;
    }
  });

  it('a script tag gives its structured attributes as text, parsed on completion', () => {
    const tag = document.createElement('script');
    tag.setAttribute('data-project-key', 'pr_tag');
    tag.setAttribute('data-structured-attrs', 'data-qa-data:name ; data-x:a,b');
    const s = complete(normalize(fromScriptTag(tag) as InitOptions, {}, 'https://svc.test'));
    expect(s.structuredAttributes).toEqual([
      { attr: 'data-qa-data', keys: ['name'] },
      { attr: 'data-x', keys: ['a', 'b'] },
    ]);
    expect(s.captureNetworkErrors).toBe(true);
    expect(normalize({ projectKey: 'pr_x', captureNetworkErrors: false }, {}, 'https://svc.test').captureNetworkErrors).toBe(false);
  });
});
