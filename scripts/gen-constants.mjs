// Writes src/js/constants.js: the numbers the JS wrapper shares with the C++ core and the binding
// (status codes, the model enums, pretrained architectures, the lean forward path's flags and io
// slots), read from the C++ enums that define them, and two tables read from the C++ that holds
// them: the weight types (src/kernels/weight_types.h's rows: GGML_TYPE, and WEIGHT_FORMAT, the
// types the core computes with) and the tensor roles (src/model/pretrained_roles.cpp's names:
// TENSOR_ROLE). So each is written once.
//
//   node scripts/gen-constants.mjs           regenerate (the file is rewritten only when it changes)
//   node scripts/gen-constants.mjs --check   exit 1 if the committed file is not what the headers give
//
// scripts/build.sh runs the first, scripts/test.sh the second; tests/js/constants.test.mjs checks the
// generated values against the ones the binding itself reports (core.constants()). The file is
// committed, so a clean clone and its npm package have it before any build.
//
// Every enum listed below must be an `enum class` whose enumerators are all `kName = <integer>`
// (or, for an entry marked implicitValues, all `kName`: 0, 1, 2, … as C++ numbers them): anything
// else is refused rather than guessed. A name
// becomes UPPER_SNAKE (kInvalidArgument → INVALID_ARGUMENT, kBF16 → BF16), with style 'lower'
// lower_snake (kSinusoidal → sinusoidal), with style 'camel' lowerCamel (kPerHead → perHead). The
// two tables' readers (scripts/gen-constants-tables.mjs) refuse a row or a name they do not parse.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import {
  ROLE_ENUM,
  ROLE_NAMES,
  WEIGHT_TYPES,
  rolesConstants,
  weightTypeConstants,
} from './gen-constants-tables.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUTPUT = 'src/js/constants.js';

// [JS name, header, C++ enum (namespace-qualified for the comment), name style, what it is for,
//  options for parseEnum]
const ENUMS = [
  [
    'STATUS_CODE',
    'src/core/status.h',
    'attn::StatusCode',
    'upper',
    'Status codes of every binding result; the names are AttentionError.code (and attn::status_code_name).',
  ],
  [
    'POSITIONAL_KIND',
    'src/model/tiny_transformer.h',
    'attn::PositionalKind',
    'lower',
    "TinyTransformer's positional encodings, by the names its config uses.",
  ],
  [
    'NORM_KIND',
    'src/model/tiny_transformer.h',
    'attn::NormKind',
    'lower',
    "TinyTransformer's LayerNorm placements, by the names its config uses.",
  ],
  [
    'PRETRAINED_ARCH',
    'src/model/pretrained.h',
    'attn::PretrainedArch',
    'upper',
    'The core model family a pretrained architecture is built on (PretrainedConfig.arch).',
  ],
  [
    'QK_NORM',
    'src/core/multi_head.h',
    'attn::MhaConfig::QkNorm',
    'camel',
    'The q/k RMSNorm of a MultiHeadAttention (PretrainedConfig.qk_norm): none, per head, over all heads.',
    { implicitValues: true },
  ],
  [
    'FAST_FLAG',
    'src/wasm/fast_path.h',
    'attn_js::FastFlag',
    'upper',
    "Bits of MhaHandle.forwardFast's flags (the lean forward path).",
  ],
  [
    'FAST_IO',
    'src/wasm/fast_path.h',
    'attn_js::FastIo',
    'upper',
    "Int32 slots of MhaHandle's io block (ioPtr) on the lean forward path.",
  ],
  [
    'MIXER_KIND',
    'src/model/blocks.h',
    'attn::MixerKind',
    'upper',
    "A pretrained layer's token mixer (PretrainedConfig.layer_mixer): softmax attention, LFM2's short convolution.",
  ],
];

/** Every file generate() reads, relative to the repository root (the test copies them). */
export const SOURCES = [...new Set([...ENUMS.map((e) => e[1]), WEIGHT_TYPES, ROLE_NAMES, ROLE_ENUM])];

const snake = (name) => name.replace(/([a-z0-9])([A-Z])/g, '$1_$2');
const keyName = (name, style) =>
  style === 'camel'
    ? name[0].toLowerCase() + name.slice(1)
    : style === 'lower'
      ? snake(name).toLowerCase()
      : snake(name).toUpperCase();

/** { NAME: value } of `enum class <name>` in the header text, in declaration order. */
export function parseEnum(text, qualified, style, { implicitValues = false } = {}) {
  const name = qualified.split('::').pop();
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
  const found = [...code.matchAll(new RegExp(`enum\\s+class\\s+${name}\\b[^{;]*\\{([^}]*)\\}`, 'g'))];
  if (found.length !== 1) throw new Error(`${qualified}: expected one definition, found ${found.length}`);
  const entries = {};
  const items = found[0][1]
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const implicit = implicitValues && items.every((item) => /^k[A-Z0-9]\w*$/.test(item)); // 0, 1, 2, …
  items.forEach((item, i) => {
    const m = implicit ? [item, item.slice(1), String(i)] : /^k([A-Z0-9]\w*)\s*=\s*(-?\d+)$/.exec(item);
    if (!m) throw new Error(`${qualified}: "${item}" is not "kName = <integer>"`);
    const key = keyName(m[1], style);
    if (Object.hasOwn(entries, key)) throw new Error(`${qualified}: ${key} appears twice`);
    entries[key] = Number(m[2]);
  });
  if (Object.keys(entries).length === 0) throw new Error(`${qualified}: no enumerators`);
  return entries;
}

export function generate() {
  const lines = [
    '// GENERATED by scripts/gen-constants.mjs from the C++ enums and tables named below: do not edit',
    '// by hand. Change the C++ and run `node scripts/gen-constants.mjs` (scripts/build.sh does); the test',
    "// tests/js/constants.test.mjs compares these with the binding's own values.",
  ];
  for (const [jsName, header, qualified, style, doc, options] of ENUMS) {
    const entries = parseEnum(readFileSync(join(root, header), 'utf8'), qualified, style, options);
    const body = Object.entries(entries).map(
      ([k, v]) => `  ${/^[A-Za-z_]\w*$/.test(k) ? k : JSON.stringify(k)}: ${v},`,
    );
    lines.push(
      '',
      `/** ${doc} ${qualified} (${header}). */`,
      `export const ${jsName} = Object.freeze({`,
      ...body,
      '});',
    );
  }
  const read = (path) => readFileSync(join(root, path), 'utf8');
  lines.push(...weightTypeConstants(read), ...rolesConstants(read));
  return lines.join('\n') + '\n';
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const path = join(root, OUTPUT);
  const text = generate();
  let current = null;
  try {
    current = readFileSync(path, 'utf8');
  } catch {
    /* not written yet */
  }
  if (process.argv.includes('--check')) {
    if (current !== text) {
      console.error(
        `${OUTPUT} is not what the C++ headers give: run \`node scripts/gen-constants.mjs\` and commit it`,
      );
      process.exit(1);
    }
    console.log(`${OUTPUT} matches the C++ headers`);
  } else if (current !== text) {
    writeFileSync(path, text);
    console.log(`wrote ${OUTPUT}`);
  }
}
