import { describe, expect, it } from 'vitest';
import { fromScriptTag, normalize } from '../src/options';

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
