// The npm tarball as a user gets it: `npm pack`, installed offline into an empty folder, then
// (a) imported as 'attention-wasm' from Node and (b) loaded in a page in headless Chromium.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join, normalize, extname, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { assertClose } from './close.js';
import { importGraph } from '../../scripts/check-imports.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** softmax([1, 1, 1, 5]) to 4 decimals, the tutorial's worked example. */
const SOFTMAX_EXPECTED = ['0.0174', '0.0174', '0.0174', '0.9479'];

/** What the package must ship for `import 'attention-wasm'` to work, and its types. */
const REQUIRED_FILES = [
  'package.json',
  'dist/attention_core.mjs',
  'dist/attention_core.wasm',
  'dist/attention_core_relaxed.wasm',
  'src/js/index.js',
  'src/js/errors.js',
  'src/js/tensor.js',
  'src/js/index.d.ts',
  'src/js/vendor/tokenizers/tokenizers.mjs',
  'src/js/vendor/tokenizers/LICENSE',
  ...reachableFrom('src/js/index.js'),
];

/** Every module the entry point imports, directly or not (the folders of src/js included). */
function reachableFrom(entry) {
  const graph = importGraph(ROOT);
  const seen = new Set([entry]);
  for (const file of seen) for (const next of graph[file] ?? []) seen.add(next);
  return [...seen].filter((f) => !f.startsWith('dist/'));
}

const npm = (args, cwd) =>
  execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/** Every file path a package.json "exports" / "types" / "main" entry points at. */
function exportTargets(pkg) {
  const targets = new Set();
  const walk = (v) => {
    if (typeof v === 'string') targets.add(normalize(v).split(sep).join('/'));
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  walk(pkg.exports);
  for (const key of ['types', 'main', 'module']) if (pkg[key]) walk(pkg[key]);
  return [...targets];
}

let work; // temp dir: the tarball and the consumer project
let consumer; // the empty folder the tarball is installed into

before(() => {
  work = mkdtempSync(join(tmpdir(), 'attention-wasm-pack-'));
  consumer = join(work, 'consumer');
  const packed = JSON.parse(npm(['pack', '--json', '--pack-destination', work], ROOT));
  const tarball = join(work, packed[0].filename);
  execFileSync('mkdir', ['-p', consumer]);
  writeFileSync(
    join(consumer, 'package.json'),
    JSON.stringify({ name: 'consumer', private: true, type: 'module' }, null, 2),
  );
  npm(['install', '--offline', '--no-audit', '--no-fund', tarball], consumer);
});

after(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('npm tarball', () => {
  it('contains the .mjs, the .wasm, the wrapper and the .d.ts', (t) => {
    const [info] = JSON.parse(npm(['pack', '--dry-run', '--json'], ROOT));
    const files = info.files.map((f) => f.path);
    for (const path of REQUIRED_FILES) assert.ok(files.includes(path), `tarball lacks ${path}`);
    assert.ok(
      !files.some((p) => p.startsWith('build/') || p.startsWith('tests/') || p.startsWith('node_modules/')),
      'no build/test files shipped',
    );
    t.diagnostic(`tarball: ${files.length} files, ${info.size} bytes packed, ${info.unpackedSize} unpacked`);
  });

  it('ships every file its package.json "exports" and "types" point at', () => {
    const [info] = JSON.parse(npm(['pack', '--dry-run', '--json'], ROOT));
    const files = new Set(info.files.map((f) => f.path));
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    const missing = exportTargets(pkg)
      .map((t) => t.replace(/^\.\//, ''))
      .filter((t) => !files.has(t));
    assert.deepEqual(missing, [], `exports point at files not in the tarball: ${missing.join(', ')}`);
  });

  it('installs into an empty folder with the module files in place', () => {
    const installed = join(consumer, 'node_modules', 'attention-wasm');
    for (const path of REQUIRED_FILES) assert.ok(statSync(join(installed, path)).size > 0, path);
    const pkg = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
    assert.equal(pkg.name, 'attention-wasm');
    assert.equal(pkg.type, 'module');
  });

  it("(a) `import 'attention-wasm'` works from a Node script in that folder", () => {
    const script = `
      import { init, softmax, MultiHeadAttention, seededNormal, kernelVariant, memoryStats, relaxedSimdSupported } from 'attention-wasm';
      await init();
      const y = softmax([1, 1, 1, 5]);
      const mha = new MultiHeadAttention({ embedDim: 8, numHeads: 2, seed: 1 });
      const r = mha.forward(seededNormal([2, 3, 8], 2), null, null, { trace: true });
      mha.dispose();
      console.log(JSON.stringify({
        softmax: Array.from(y.data, (v) => v.toFixed(4)), kernel: kernelVariant(), relaxed: relaxedSimdSupported(),
        outputShape: r.output.shape, finite: r.output.data.every(Number.isFinite),
        steps: r.trace.length, liveHandles: memoryStats().liveHandles,
      }));
    `;
    writeFileSync(join(consumer, 'main.mjs'), script);
    // Run from another working directory too: the wasm is found through import.meta.url.
    const out = JSON.parse(
      execFileSync(process.execPath, [join(consumer, 'main.mjs')], { cwd: tmpdir(), encoding: 'utf8' }),
    );
    assert.deepEqual(out.softmax, SOFTMAX_EXPECTED);
    assert.equal(out.kernel, out.relaxed ? 'relaxed-simd' : 'simd128');
    assert.deepEqual(out.outputShape, [2, 3, 8]);
    assert.equal(out.finite, true);
    assert.equal(out.steps, 11);
    assert.equal(out.liveHandles, 0);
  });

  it('the installed package loads a checkpoint with its tokenizer (the vendored @huggingface/tokenizers)', () => {
    const dir = new URL('../golden/pretrained/gpt2-tiny/', import.meta.url).pathname;
    const script = `
      import { readFileSync } from 'node:fs';
      import { init, loadPretrained } from 'attention-wasm';
      await init();
      const read = (f) => readFileSync(${JSON.stringify(dir)} + f);
      const model = await loadPretrained({ config: JSON.parse(read('config.json')), weights: read('model.safetensors'),
        tokenizer: JSON.parse(read('tokenizer.json')), tokenizerConfig: JSON.parse(read('tokenizer_config.json')) });
      const ids = model.encode('Hello world!');
      console.log(JSON.stringify({ ids: Array.from(ids), text: model.decode(ids), vocab: model.forward(ids).logits.shape[2] }));
      model.dispose();
    `;
    writeFileSync(join(consumer, 'pretrained.mjs'), script);
    const out = JSON.parse(
      execFileSync(process.execPath, [join(consumer, 'pretrained.mjs')], { cwd: tmpdir(), encoding: 'utf8' }),
    );
    const expected = JSON.parse(
      readFileSync(new URL('../golden/pretrained/gpt2-tiny/expected.json', import.meta.url), 'utf8'),
    );
    assert.deepEqual(out, {
      ids: expected.tokenizer_cases[0].ids,
      text: expected.tokenizer_cases[0].text,
      vocab: 96,
    });
  });

  it('(b) loads in a page in headless Chromium, with the .wasm served as application/wasm', async () => {
    const { chromium } = await import('playwright-core');
    const page = `<!doctype html>
<html><head><meta charset="utf-8"><link rel="icon" href="data:,">
<script type="importmap">{ "imports": { "attention-wasm": "./node_modules/attention-wasm/src/js/index.js" } }</script>
</head><body>
<script type="module">
  import { init, softmax, MultiHeadAttention, seededNormal, kernelVariant } from 'attention-wasm';
  try {
    await init();
    const y = softmax([1, 1, 1, 5]);
    const mha = new MultiHeadAttention({ embedDim: 8, numHeads: 2, seed: 1 });
    const r = mha.forward(seededNormal([2, 3, 8], 2));
    mha.dispose();
    window.result = { softmax: Array.from(y.data, (v) => v.toFixed(4)), kernel: kernelVariant(),
      outputShape: r.output.shape, output: Array.from(r.output.data) };
  } catch (error) {
    window.result = { error: String(error && error.stack || error) };
  }
</script></body></html>`;
    writeFileSync(join(consumer, 'index.html'), page);
    const server = await serveStatic(consumer);
    const profile = mkdtempSync(join(tmpdir(), 'attention-wasm-chromium-'));
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      args: CHROMIUM_ARGS,
    });
    const problems = [];
    const wasmTypes = [];
    try {
      const tab = context.pages()[0] ?? (await context.newPage());
      tab.on('console', (msg) => {
        if (msg.type() === 'error' || msg.type() === 'warning') problems.push(`${msg.type()}: ${msg.text()}`);
      });
      tab.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
      tab.on('requestfailed', (req) => problems.push(`requestfailed: ${req.url()}`));
      tab.on('response', (res) => {
        if (res.url().endsWith('.wasm'))
          wasmTypes.push([res.url().split('/').pop(), res.headers()['content-type']]);
      });
      await tab.goto(`${server.url}/index.html`);
      await tab.waitForFunction(() => window.result !== undefined);
      const result = await tab.evaluate(() => window.result);
      assert.equal(result.error, undefined, result.error);
      assert.deepEqual(result.softmax, SOFTMAX_EXPECTED);
      // Chromium has had relaxed SIMD on since version 114, so init() picks the relaxed-SIMD build.
      assert.equal(result.kernel, 'relaxed-simd');
      assert.deepEqual(result.outputShape, [2, 3, 8]);
      // The page's relaxed-SIMD build and Node's SIMD128 build: the same numbers up to FMA rounding.
      const nodeOutput = await nodeForward();
      const kFmaTolerance = 1e-6;
      assertClose(
        result.output,
        nodeOutput,
        kFmaTolerance,
        'output, Chromium (relaxed SIMD) vs Node (SIMD128)',
      );
      assert.deepEqual(
        wasmTypes,
        [['attention_core_relaxed.wasm', 'application/wasm']],
        'one .wasm fetch (the relaxed-SIMD build), as application/wasm',
      );
      assert.deepEqual(problems, [], 'no console errors or warnings');
    } finally {
      await context.close();
      await server.close();
      rmSync(profile, { recursive: true, force: true });
    }
  });
});

/** The same forward pass as the page, in this process, through the project's own copy. */
async function nodeForward() {
  const api = await import('../../src/js/index.js');
  await api.init();
  const mha = new api.MultiHeadAttention({ embedDim: 8, numHeads: 2, seed: 1 });
  const out = Array.from(mha.forward(api.seededNormal([2, 3, 8], 2)).output.data);
  mha.dispose();
  return out;
}

const MIME = {
  '.html': 'text/html',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
};

/** A static file server over `dir` on 127.0.0.1 and a free port. */
async function serveStatic(dir) {
  const server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname));
    const file = join(dir, path);
    if (!file.startsWith(dir + sep)) {
      res.writeHead(403).end();
      return;
    }
    try {
      const body = readFileSync(file);
      res.writeHead(200, { 'Content-Type': MIME[extname(file)] ?? 'application/octet-stream' }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () =>
      new Promise((resolve) => {
        server.close(resolve);
        server.closeAllConnections();
      }),
  };
}
