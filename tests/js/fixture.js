// Loader for the PyTorch golden fixtures in tests/golden/fixtures/ (format: tests/golden/README.md).
//
//   import { loadFixture, listFixtures } from './fixture.js';
//   const f = loadFixture('mha_self');
//   f.tensors.get('query')        // { shape: [2, 5, 8], data: Float32Array(80) }
//   f.scalar('num_heads', 1)      // 2
//   listPretrained()              // ['gemma2-tiny', …, 'smollm3-tiny']: tests/golden/pretrained/ folders
//
// Values may be "inf", "-inf" or "nan" (additive masks hold -inf); Number() does not parse those,
// so they are mapped explicitly. Masks are 0/1 floats with 1 = may attend / real token.
import { existsSync, readFileSync, readdirSync } from 'node:fs';

const FIXTURE_DIR = new URL('../golden/fixtures/', import.meta.url);
/** tests/golden/pretrained/: one folder per tiny Hugging Face checkpoint (make_pretrained_fixtures.py). */
export const PRETRAINED_DIR = new URL('../golden/pretrained/', import.meta.url);

const SPECIAL = new Map([
  ['inf', Infinity],
  ['+inf', Infinity],
  ['-inf', -Infinity],
  ['nan', NaN],
  ['-nan', NaN],
  ['+nan', NaN],
]);

function parseValue(token, where) {
  const special = SPECIAL.get(token.toLowerCase());
  if (special !== undefined) return special;
  const v = Number(token);
  if (Number.isNaN(v)) throw new Error(`${where}: bad number '${token}'`);
  return v;
}

function parseDim(token, where) {
  if (!/^\d+$/.test(token ?? '')) throw new Error(`${where}: bad dimension '${token}'`);
  return Number(token);
}

// Parses "<name> <ndim> <d0> ... : <v0> ..." into [name, { shape, data }].
function parseLine(line, where) {
  const tokens = line.trim().split(/\s+/);
  const name = tokens[0];
  const ndim = parseDim(tokens[1], where);
  const shape = tokens.slice(2, 2 + ndim).map((t) => parseDim(t, where));
  if (shape.length !== ndim || tokens[2 + ndim] !== ':') {
    throw new Error(`${where}: expected ${ndim} dimensions then ':' for ${name}`);
  }
  const values = tokens.slice(3 + ndim);
  const numel = shape.reduce((a, b) => a * b, 1);
  if (values.length !== numel) {
    throw new Error(`${where}: ${name} has ${values.length} values for shape [${shape}]`);
  }
  const data = Float32Array.from(values, (t) => parseValue(t, where));
  return [name, { shape, data }];
}

/** Parses the text of one fixture file. */
export function parseFixture(text, name = '(text)') {
  const tensors = new Map();
  let description = '';
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (line === '') return;
    if (line.startsWith('#')) {
      if (description === '') description = line.replace(/^#\s?/, '');
      return;
    }
    const [key, tensor] = parseLine(line, `${name}.txt:${i + 1}`);
    if (tensors.has(key)) throw new Error(`${name}.txt: duplicate tensor '${key}'`);
    tensors.set(key, tensor);
  });
  return {
    name,
    description,
    tensors,
    has: (key) => tensors.has(key),
    get(key) {
      const t = tensors.get(key);
      if (!t) throw new Error(`fixture ${name} has no tensor '${key}'`);
      return t;
    },
    /** A rank-0 (one-element) tensor as a number, or `def` when absent. */
    scalar(key, def) {
      const t = tensors.get(key);
      if (!t) return def;
      if (t.data.length !== 1) throw new Error(`fixture ${name}: '${key}' is not a scalar`);
      return t.data[0];
    },
  };
}

/** Reads tests/golden/fixtures/<name>.txt. */
export function loadFixture(name) {
  return parseFixture(readFileSync(new URL(`${name}.txt`, FIXTURE_DIR), 'utf8'), name);
}

/**
 * The fixture names in tests/golden/fixtures/index.txt (written by make_fixtures.py), in order;
 * `index` = 'index_grad.txt' lists the gradient and training fixtures (make_grad_fixtures.py).
 */
export function listFixtures(index = 'index.txt') {
  return readFileSync(new URL(index, FIXTURE_DIR), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
}

/**
 * The checkpoint folders in tests/golden/pretrained/ (those holding model.safetensors, and `withFile`
 * too when given, e.g. 'expected_interp.json'), sorted by name. Tests list the fixtures through this, never
 * by hand, so a folder added there is covered by every test at once.
 */
/** Whether a pretrained fixture is a hybrid: a layer whose token mixer is not softmax attention (its core-config.json). */
export function hybridPretrained(name) {
  const core = JSON.parse(readFileSync(new URL(`${name}/core-config.json`, PRETRAINED_DIR), 'utf8'));
  return (core.layerMixer ?? []).some((kind) => kind !== 0);
}

/** Whether a pretrained fixture has a gated DeltaNet layer (Qwen3.5; its core-config.json). */
export function deltaPretrained(name) {
  const core = JSON.parse(readFileSync(new URL(`${name}/core-config.json`, PRETRAINED_DIR), 'utf8'));
  return (core.layerMixer ?? []).includes(2);
}

export function listPretrained(withFile) {
  const has = (name, file) => existsSync(new URL(`${name}/${file}`, PRETRAINED_DIR));
  return readdirSync(PRETRAINED_DIR)
    .filter((name) => has(name, 'model.safetensors') && (withFile === undefined || has(name, withFile)))
    .sort();
}

// The fixtures whose interpretability tools (logitAttribution, qkAttribution, patch, gradients)
// refuse by name — Gemma 4's per-layer inputs, shared K/V and layer scales are not modelled yet:
// tests/js/pretrained-gemma4.test.mjs asserts the refusal; the tools' suites run the others.
export const INTERP_REFUSED = Object.freeze(['gemma4-tiny']);

/** listPretrained() less INTERP_REFUSED. */
export function listPretrainedInterp(withFile) {
  return listPretrained(withFile).filter((name) => !INTERP_REFUSED.includes(name));
}
