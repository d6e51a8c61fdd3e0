// The include direction of src/ (docs/architecture.md): kernels ← core ← model ← train, and the
// bindings (src/wasm) see all of them. Each layer may include only itself and the layers below it;
// only the bindings include Emscripten; nothing in src/ includes Eigen (it serves the test
// references, tests/cpp/reference.cpp). Every project include names its layer ("core/status.h").
// The CMake layer libraries enforce the same rule at compile time (per-layer include roots); this
// check runs first in npm test (scripts/test.sh) and takes well under a second.
//
//   node scripts/check-layers.mjs       prints each violation as file:line, exits 1 if any
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

/** Layer → the layers its files may include, bottom-up. */
export const ALLOWED = {
  kernels: ['kernels'],
  core: ['kernels', 'core'],
  model: ['kernels', 'core', 'model'],
  train: ['kernels', 'core', 'model', 'train'],
  wasm: ['kernels', 'core', 'model', 'train', 'wasm'],
};

const isEmscripten = (path) => /^emscripten(\/|\.h$)/.test(path);
const isEigen = (path) => /^(Eigen|unsupported\/Eigen)(\/|$)/.test(path);

/**
 * The violations of one file's text: [{ line, message }]. layer is the file's folder under src/.
 */
export function checkFile(layer, text) {
  const problems = [];
  text.split('\n').forEach((source, i) => {
    const m = /^\s*#\s*include\s*([<"])([^>"]+)[>"]/.exec(source);
    if (!m) return;
    const [, bracket, path] = m;
    const report = (message) => problems.push({ line: i + 1, message: `${message}: ${source.trim()}` });
    if (isEigen(path)) return report('Eigen in src/ (it is for the test references only)');
    if (isEmscripten(path)) {
      if (layer !== 'wasm') report(`${layer} includes Emscripten (only src/wasm may)`);
      return;
    }
    if (bracket === '<') return; // the standard library
    const target = path.split('/')[0];
    if (!path.includes('/') || !Object.hasOwn(ALLOWED, target)) {
      return report('a project include must name its layer (kernels/, core/, model/, train/ or wasm/)');
    }
    if (!ALLOWED[layer].includes(target))
      report(`${layer} includes ${target} (allowed: ${ALLOWED[layer].join(', ')})`);
  });
  return problems;
}

/** Every violation under <root>/src, as "src/<layer>/<file>:<line>: message". */
export function checkTree(root) {
  const out = [];
  for (const layer of Object.keys(ALLOWED)) {
    const dir = join(root, 'src', layer);
    for (const name of readdirSync(dir).sort()) {
      if (!/\.(h|hpp|cpp|cc|inc)$/.test(name)) continue;
      for (const { line, message } of checkFile(layer, readFileSync(join(dir, name), 'utf8'))) {
        out.push(`src/${layer}/${name}:${line}: ${message}`);
      }
    }
  }
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const problems = checkTree(join(dirname(fileURLToPath(import.meta.url)), '..'));
  for (const p of problems) console.error(p);
  if (problems.length) {
    console.error(
      `check-layers: ${problems.length} include(s) against the layer direction (docs/architecture.md)`,
    );
    process.exit(1);
  }
  console.log('check-layers: every include in src/ follows kernels ← core ← model ← train ← wasm');
}
