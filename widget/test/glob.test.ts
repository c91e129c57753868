import { describe, expect, it } from 'vitest';
import { globMatch } from '../src/glob';
import cases from './glob-cases.json';

// The same cases run against the server's glob (svc_core::project::glob_match) in
// crates/svc-server/tests/server/dashboard_install.rs: the dashboard's URL tester and the /demo
// notice must agree with the widget.
describe('globMatch over the shared cases', () => {
  for (const c of cases) {
    it(`${c.pattern} ${c.match ? 'matches' : 'does not match'} ${c.url}`, () => {
      expect(globMatch(c.pattern, c.url)).toBe(c.match);
    });
  }
});
