// The build's generators (scripts/): the mascot list read from the server's source, and the
// public declarations as a site's TypeScript sees them.

import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { MASCOTS } from '../src/generated/mascots';
import { checkSvgs, mascotModules, parseMascots } from '../scripts/mascots.mjs';

const widget = join(dirname(fileURLToPath(import.meta.url)), '..');
const libRs = readFileSync(join(widget, '..', 'crates', 'svc-core', 'src', 'lib.rs'), 'utf8');

describe('the mascot list', () => {
  it('is the one in crates/svc-core/src/lib.rs, and the generated modules are what the build writes', () => {
    const names = parseMascots(libRs);
    expect(names).toEqual([...MASCOTS]);
    for (const [path, text] of mascotModules(names)) expect(readFileSync(join(widget, path), 'utf8')).toBe(text);
  });

  it('is read from the Rust array however it is laid out', () => {
    const rust = '/// doc\npub const MASCOTS: [&str; 3] = [\n    "gecko", // first\n    "owl",\n    "fox",\n];\n';
    expect(parseMascots(rust)).toEqual(['gecko', 'owl', 'fox']);
  });

  it('refuses a Rust source it cannot read exactly', () => {
    expect(() => parseMascots('pub const OTHER: [&str; 1] = ["x"];')).toThrow(/no `pub const MASCOTS/);
    expect(() => parseMascots('pub const MASCOTS: [&str; 2] = ["gecko"];')).toThrow(/declares 2 names but lists 1/);
    expect(() => parseMascots('pub const MASCOTS: [&str; 2] = ["gecko", "gecko"];')).toThrow(/"gecko" is listed twice/);
    expect(() => parseMascots('pub const MASCOTS: [&str; 1] = ["Big Cat"];')).toThrow(/not lower-case/);
    expect(() => parseMascots('pub const MASCOTS: [&str; 1] = [NAME];')).toThrow(/other than string literals/);
  });

  it('needs one SVG per mascot in src/mascots/', () => {
    expect(() => checkSvgs(MASCOTS, join(widget, 'src', 'mascots'), widget)).not.toThrow();
    const dir = mkdtempSync(join(tmpdir(), 'svc-mascots-'));
    writeFileSync(join(dir, 'gecko.svg'), '<svg/>');
    writeFileSync(join(dir, 'dog.svg'), '<svg/>');
    expect(() => checkSvgs(['gecko', 'owl'], dir, dirname(dir))).toThrow(/mascot "owl" .* has no SVG: add svc-mascots-\w+\/owl\.svg\n.*\/dog\.svg is not a mascot/);
  });
});

/**
 * Type errors of sites' code compiled against dist/svc.d.ts, per snippet: one program for all (the
 * DOM library takes seconds to load), each snippet a module of its own.
 */
function siteErrors(snippets) {
  const files = new Map([['/site/svc.d.ts', readFileSync(join(widget, 'dist', 'svc.d.ts'), 'utf8')]]);
  snippets.forEach((code, i) => files.set(`/site/app${i}.ts`, code + '\nexport {};\n'));
  const options = { strict: true, noEmit: true, target: ts.ScriptTarget.ES2020, lib: ['lib.es2021.d.ts', 'lib.dom.d.ts'], types: [] };
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile } = host;
  host.getSourceFile = (f, l, ...rest) => (files.has(f) ? ts.createSourceFile(f, files.get(f), l) : getSourceFile.call(host, f, l, ...rest));
  host.fileExists = (f) => files.has(f) || fileExists.call(host, f);
  host.readFile = (f) => files.get(f) ?? readFile.call(host, f);
  const program = ts.createProgram([...files.keys()], options, host);
  return snippets.map((_, i) =>
    ts.getPreEmitDiagnostics(program, program.getSourceFile(`/site/app${i}.ts`)).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')).join('\n'),
  );
}

describe('dist/svc.d.ts', () => {
  it("gives a site's TypeScript the global Svc, its options, methods and types, and refuses what the widget does not accept", () => {
    const ok = `
      const options: Svc.InitOptions = { projectKey: 'pr_x', mascot: 'axolotl', shape: 'pill', anchor: 'top-left', artifact: { id: 'a' } };
      Svc.init(options);
      window.Svc.setChannel('bug', { weight: 'suggest' });
      Svc.selectorFor(document.body).then((info: Svc.SelectorInfo) => info.css.length);
      Svc.attachFile({ name: 'a.txt', content: 'hi' }).then((b: Svc.Block) => (b.type === 'file' ? b.name : ''));
      const m: Svc.Mascot = 'robot';
      const e = null as unknown as Svc.SvcError; e.code; e.queued;
      const h: Svc.HistoryEntry[] = Svc.getHistory(); h[0]?.status;
      const c: Svc.Channel | null = Svc.getChannel(); c?.mascot;
      const meta: Svc.ArtifactMeta = { id: 'x', constraints: ['y'] };
      const r: Svc.BeforeReportResult = { blocks: [{ type: 'text', text: 'x' }] };
      Svc.instances['pr_y']?.openForm();
    `;
    const [good, dog, middle, key, profile] = siteErrors([
      ok,
      `Svc.init({ projectKey: 'pr_x', mascot: 'dog' });`,
      `Svc.init({ projectKey: 'pr_x', anchor: 'middle' });`,
      `Svc.init({ mascot: 'fox' });`,
      `Svc.init({ projectKey: 'pr_x', reporter: { token: 't', profile: {} } });`,
    ]);
    expect(good).toBe('');
    expect(dog).toMatch(/"dog"/);
    expect(middle).toMatch(/"middle"/);
    expect(key).toMatch(/projectKey/);
    expect(profile).toMatch(/email/);
  }, 60_000);
});
