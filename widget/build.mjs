// Builds the widget into dist/ (committed, embedded in the svc binary):
//   dist/svc.js                  the loader (IIFE); the per-project loader is this file wrapped by the server
//   dist/parts/<name>.<hash>.js  lazy parts, content-hashed
//   dist/svc.d.ts                TypeScript declarations of `Svc`, generated from src/public.ts
//                                (scripts/declarations.mjs)
//   dist/mascots/<name>.svg      the ten launcher mascots (the server bakes the configured one into
//                                the per-project loader; the `mascots` part carries all of them)
//   dist/manifest.json           part name -> file
// and crates/svc-server/src/widget/assets.rs, which embeds them with include_str!. Before bundling it
// reads the mascot list from the server's source (`MASCOTS` in crates/svc-core/src/lib.rs, the one
// list) and generates src/generated/mascots.ts and mascot-svgs.ts (committed; scripts/mascots.mjs);
// a mascot without its SVG in src/mascots/ fails the build.
//
// `node build.mjs --check` builds in memory and fails when the committed files (dist/, the generated
// sources and assets.rs) differ from what it would write, or a file is
// over its gzip budget (loader as served with a typical baked-in config and its mascot <= 8 KB; panel
// <= 20 KB, pinpoint <= 4 KB, screenshot <= 14 KB, voice <= 3 KB, recorder <= 2 KB; everything
// together <= 47 KB).

import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { declarations } from './scripts/declarations.mjs';
import { checkSvgs, mascotModules, readMascots } from './scripts/mascots.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, 'dist');
const generatedDir = join(here, 'src', 'generated');
const assetsRs = join(here, '..', 'crates', 'svc-server', 'src', 'widget', 'assets.rs');
const check = process.argv.includes('--check');
const version = JSON.parse(readFileSync(join(here, 'package.json'), 'utf8')).version;

export const BUDGETS = {
  loader: 8 * 1024,
  panel: 20 * 1024,
  pinpoint: 4 * 1024,
  screenshot: 14 * 1024,
  voice: 3 * 1024,
  recorder: 2 * 1024,
  total: 47 * 1024,
};
const PARTS = ['core', 'panel', 'selector', 'mascots', 'screenshot', 'voice', 'pinpoint', 'recorder'];

/** Stops the build with a message (no stack trace): what is wrong and where to fix it. */
function fail(e) {
  console.error('widget build failed: ' + (e && e.message ? e.message : String(e)));
  process.exit(1);
}

let mascotList;
try {
  mascotList = readMascots(join(here, '..', 'crates', 'svc-core', 'src', 'lib.rs'), join(here, '..'));
  checkSvgs(mascotList, join(here, 'src', 'mascots'), here);
} catch (e) {
  fail(e);
}
/** The mascots, as crates/svc-core/src/lib.rs lists them. */
export const MASCOTS = mascotList;
/** The generated sources (path relative to widget/ -> text); bundled from memory, so --check needs them current on disk only to compare. */
const generated = mascotModules(MASCOTS);

/**
 * An SVG source file without comments, needless white space and the namespace declaration: the
 * widget only ever inserts these as markup into HTML (innerHTML), where `<svg>` is SVG anyway.
 */
function minSvg(text) {
  return text
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/ xmlns="http:\/\/www\.w3\.org\/2000\/svg"/, '')
    .replace(/>\s+</g, '><')
    .replace(/\s+/g, ' ')
    .trim();
}
const mascotSvg = (name) => minSvg(readFileSync(join(here, 'src', 'mascots', name + '.svg'), 'utf8'));

/** `import fox from '../mascots/fox.svg'` gives the minified SVG text. */
const svgPlugin = {
  name: 'svg-text',
  setup(b) {
    // Resolved here, so the generated sources (bundled from memory) may import them too.
    b.onResolve({ filter: /\.svg$/ }, (args) => ({ path: join(args.resolveDir, args.path) }));
    b.onLoad({ filter: /\.svg$/ }, (args) => ({ contents: 'export default ' + JSON.stringify(minSvg(readFileSync(args.path, 'utf8'))), loader: 'js' }));
  },
};

/** `../generated/<name>` imports get this build's generated sources. */
const generatedPlugin = {
  name: 'generated-sources',
  setup(b) {
    b.onResolve({ filter: /(^|\/)generated\/[\w-]+$/ }, (args) => {
      const path = join(args.resolveDir, args.path + '.ts');
      return generated.has(relative(here, path)) ? { path } : undefined;
    });
    b.onLoad({ filter: /\.ts$/ }, (args) => {
      const text = generated.get(relative(here, args.path));
      return text === undefined ? undefined : { contents: text, loader: 'ts', resolveDir: dirname(args.path) };
    });
  },
};

const common = {
  bundle: true,
  format: 'iife',
  minify: true,
  target: ['es2020'],
  charset: 'utf8',
  legalComments: 'none',
  // In-memory private members are named _x and shortened; nothing persisted or sent uses such names.
  mangleProps: /^_[a-z]/,
  write: false,
  logLevel: 'warning',
  plugins: [svgPlugin, generatedPlugin],
};

async function bundle(entry, define = {}) {
  const result = await build({ ...common, entryPoints: [join(here, entry)], define });
  return result.outputFiles[0].text;
}

const hash = (text) => createHash('sha256').update(text).digest('hex').slice(0, 10);

/** Every output file: path relative to widget/ -> contents. */
async function outputs() {
  const files = new Map();
  const manifest = { version, loader: 'svc.js', types: 'svc.d.ts', parts: {} };
  for (const name of PARTS) {
    const code = await bundle(`src/parts/${name}.ts`);
    const file = `${name}.${hash(code)}.js`;
    manifest.parts[name] = file;
    files.set(`dist/parts/${file}`, code);
  }
  const loader = await bundle('src/loader.ts', {
    __SVC_PARTS__: JSON.stringify(manifest.parts),
    __SVC_VERSION__: JSON.stringify(version),
  });
  files.set('dist/svc.js', loader);
  files.set('dist/svc.d.ts', declarations(join(here, 'src', 'public.ts'), new Map([...generated].map(([p, t]) => [join(here, p), t])), here));
  for (const [path, text] of generated) files.set(path, text);
  for (const m of MASCOTS) files.set(`dist/mascots/${m}.svg`, mascotSvg(m) + '\n');
  files.set('dist/manifest.json', JSON.stringify(manifest, null, 2) + '\n');
  files.set('../crates/svc-server/src/widget/assets.rs', rustAssets(manifest));
  return { files, manifest };
}

/** The Rust file that embeds the built files (formatted as rustfmt leaves it). */
function rustAssets(manifest) {
  const parts = Object.entries(manifest.parts)
    .map(([, file]) => `    ("${file}", include_str!("../../../../widget/dist/parts/${file}")),\n`)
    .join('');
  const mascots = MASCOTS.map((m) => `    ("${m}", include_str!("../../../../widget/dist/mascots/${m}.svg")),\n`).join('');
  return `//! The built widget, embedded in the binary. Generated by widget/build.mjs (\`npm run build\` in
//! widget/); do not edit by hand.

/// Widget version (widget/package.json).
pub const VERSION: &str = "${version}";
/// The loader: the shared bundle \`/v1/svc.js\`, and the body of every per-project loader.
pub const LOADER: &str = include_str!("../../../../widget/dist/svc.js");
/// TypeScript declarations of \`Svc\`, served at \`/v1/svc.d.ts\`.
pub const TYPES: &str = include_str!("../../../../widget/dist/svc.d.ts");
/// Lazy parts: (file name with its content hash, contents), served at \`/v1/parts/<file>\`.
pub const PARTS: &[(&str, &str)] = &[
${parts}];
/// The launcher mascots (name, SVG with a trailing newline); the per-project loader carries the
/// configured one.
pub const MASCOTS: &[(&str, &str)] = &[
${mascots}];
`;
}

/** What the server sends for a per-project loader (kept in step with widget/mod.rs). */
export function perProjectLoader(loader, config) {
  return `(function(__svcPreset){${loader}})(${JSON.stringify(config)});\n`;
}

/** A typical baked-in configuration (three channels in ingest form, the configured mascot) for the size budget. */
function sampleConfig() {
  const channel = (key, name, color, mascot) => ({
    id: '0123456789abcdef01234567', key, name, color, mascot, baseWeight: 0, archived: false,
    projectId: '0123456789abcdef01234567', createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z',
    matchers: [],
  });
  return {
    projectKey: 'pr_0123456789abcdefghijklmn',
    apiUrl: 'https://feedback.example.com',
    widgetConfig: { mascot: 'fox', shape: 'bubble', anchor: 'middle-right', offsetX: 0, offsetY: 0, size: 44, triggerVariant: 'frame-tab' },
    urlPatterns: ['https://app.example.com/*'],
    defaultChannelKey: 'bug',
    channels: [channel('bug', 'Bugs', '#e5484d', 'fox'), channel('idea', 'Ideas', '#f5d90a', 'owl'), channel('question', 'Questions', '#0091ff', 'cat')],
    // The largest mascot, so any configured one fits the budget.
    mascotSvg: MASCOTS.map(mascotSvg).sort((a, b) => b.length - a.length)[0],
  };
}

function sizes(files, manifest) {
  const gz = (text) => gzipSync(Buffer.from(text), { level: 9 }).length;
  const loader = gz(perProjectLoader(files.get('dist/svc.js'), sampleConfig()));
  const rows = [['loader (per-project, served)', loader, BUDGETS.loader]];
  let total = loader;
  for (const [name, file] of Object.entries(manifest.parts)) {
    const size = gz(files.get(`dist/parts/${file}`));
    total += size;
    rows.push([`part ${name}`, size, BUDGETS[name] ?? null]);
  }
  rows.push(['all parts together', total, BUDGETS.total]);
  let ok = true;
  for (const [label, size, budget] of rows) {
    const over = budget !== null && size > budget;
    ok &&= !over;
    console.log(`  ${label.padEnd(30)} ${(size / 1024).toFixed(2).padStart(6)} KB gzip${budget ? ` (budget ${budget / 1024} KB)` : ''}${over ? '  OVER BUDGET' : ''}`);
  }
  return ok;
}

/** Files now in dist/ and src/generated/ (each must be one the build writes). */
function listBuilt() {
  const out = [];
  const walk = (dir) => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else out.push(relative(here, path));
    }
  };
  walk(dist);
  walk(generatedDir);
  return out;
}

const { files, manifest } = await outputs().catch(fail);
if (check) {
  const problems = [];
  for (const [path, text] of files) {
    const full = join(here, path);
    if (!existsSync(full)) problems.push(`missing: ${path}`);
    else if (readFileSync(full, 'utf8') !== text) problems.push(`stale: ${path}`);
  }
  for (const path of listBuilt()) if (!files.has(path)) problems.push(`not produced by the build: ${path}`);
  console.log('widget sizes:');
  const withinBudget = sizes(files, manifest);
  if (problems.length) {
    console.error('The committed widget build differs from the sources (run `npm run build` in widget/):');
    for (const p of problems) console.error('  ' + p);
  }
  if (!withinBudget) console.error('A widget file is over its gzip budget.');
  if (problems.length || !withinBudget) process.exit(1);
  console.log('widget build is up to date');
} else {
  rmSync(dist, { recursive: true, force: true });
  rmSync(generatedDir, { recursive: true, force: true });
  for (const [path, text] of files) {
    const full = join(here, path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, text);
  }
  console.log('built widget/dist and widget/src/generated:');
  const withinBudget = sizes(files, manifest);
  if (!withinBudget) {
    console.error('A widget file is over its gzip budget.');
    process.exit(1);
  }
}
