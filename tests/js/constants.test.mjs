// One source for the numbers JS shares with C++: src/js/constants.js is generated from
// the C++ enums by scripts/gen-constants.mjs. Here: the committed file is what the headers give,
// and every value (and name) equals what the compiled binding itself reports (_constants()), so a
// changed enum that was not regenerated, or a parser that misread one, fails.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as generated from '../../src/js/constants.js';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { SOURCES, generate, parseEnum } from '../../scripts/gen-constants.mjs';
import { parseRoles, parseWeightTypes } from '../../scripts/gen-constants-tables.mjs';
import { coreTensorRoles } from '../golden/write-core-configs.mjs';
import createAttentionModule from '../../dist/attention_core.mjs';

describe('shared constants (src/js/constants.js)', () => {
  it('the committed file is what scripts/gen-constants.mjs writes from the headers', () => {
    const path = fileURLToPath(new URL('../../src/js/constants.js', import.meta.url));
    assert.equal(
      readFileSync(path, 'utf8'),
      generate(),
      'run `node scripts/gen-constants.mjs` (scripts/build.sh does) and commit src/js/constants.js',
    );
  });

  it('equals the binding: every table, name and value', async () => {
    const core = await createAttentionModule();
    const fromBinding = core._constants();
    const tables = Object.fromEntries(Object.entries(generated).map(([name, table]) => [name, { ...table }]));
    assert.deepEqual(tables, JSON.parse(JSON.stringify(fromBinding)));
  });

  it('the tables are frozen', () => {
    for (const table of Object.values(generated)) assert.ok(Object.isFrozen(table));
  });

  it('the parser refuses what it would have to guess', () => {
    const ok = 'enum class E : int { kOne = 1,  // c\n kTwoWords = 2 /* x */, };';
    assert.deepEqual(parseEnum(ok, 'attn::E', 'upper'), { ONE: 1, TWO_WORDS: 2 });
    assert.deepEqual(parseEnum(ok, 'attn::E', 'lower'), { one: 1, two_words: 2 });
    assert.throws(() => parseEnum('enum class E { kA, kB };', 'attn::E', 'upper'), /kA/);
    assert.throws(() => parseEnum('enum class E { kA = 1 << 2 };', 'attn::E', 'upper'), /integer/);
    assert.throws(() => parseEnum('enum class F { kA = 1 };', 'attn::E', 'upper'), /found 0/);
  });

  it('the table readers refuse what they would have to guess', () => {
    const table = (rows) => `inline constexpr GgmlTypeInfo kTypes[] = {\n${rows.join('\n')}\n};`;
    const f32 = '    {0, "F32", 1, 4, true, f32_to_float, kF32, nullptr, kNone, {-1, -1}},';
    const q4 = '    {2, "Q4_0", 32, 18, true, q4_0_to_float, kQuant, kInt8, kQ8_0, {0, -1}},';
    assert.deepEqual(parseWeightTypes(table([f32, '    // a comment', q4])), [
      { id: 0, name: 'F32', blockElements: 1, blockBytes: 4, dequantized: true, int8: false },
      { id: 2, name: 'Q4_0', blockElements: 32, blockBytes: 18, dequantized: true, int8: true },
    ]);
    assert.throws(() => parseWeightTypes(table([q4, f32])), /F32 \(id 0\) is not after Q4_0/);
    assert.throws(() => parseWeightTypes(table([f32, '    {2, "Q4_0", 32, 18, true},'])), /is not a row/);
    assert.throws(() => parseWeightTypes('constexpr int x = 1;'), /no "GgmlTypeInfo kTypes/);
    const names = 'constexpr const char* kRoleNames[] = {"embed", "q_bias"};';
    assert.deepEqual(parseRoles(names, 'enum class TensorRole { kEmbed, kQBias, kCount };'), [
      'embed',
      'q_bias',
    ]);
    assert.throws(() => parseRoles(names, 'enum class TensorRole { kQBias, kEmbed, kCount };'), /in order/);
    assert.throws(() => parseRoles(names, 'enum class TensorRole { kEmbed, kQBias };'), /kCount/);
  });

  it('--check fails when the C++ tables and constants.js differ', () => {
    const root = fileURLToPath(new URL('../../', import.meta.url));
    const copy = mkdtempSync(join(tmpdir(), 'gen-constants-'));
    try {
      for (const path of [
        ...SOURCES,
        'src/js/constants.js',
        'scripts/gen-constants.mjs',
        'scripts/gen-constants-tables.mjs',
      ]) {
        mkdirSync(dirname(join(copy, path)), { recursive: true });
        cpSync(join(root, path), join(copy, path));
      }
      const check = () =>
        execFileSync(process.execPath, [join(copy, 'scripts/gen-constants.mjs'), '--check'], {
          stdio: 'pipe',
        });
      check(); // the copy as committed: passes
      const types = join(copy, 'src/kernels/weight_types.h');
      const text = readFileSync(types, 'utf8');
      const changed = text.replace('{8, "Q8_0", 32, 34,', '{8, "Q8_0", 32, 35,');
      assert.notEqual(changed, text);
      writeFileSync(types, changed);
      assert.throws(check, (error) => error.status === 1 && /is not what the C\+\+/.test(error.stderr));
      writeFileSync(types, text);
      const roles = join(copy, 'src/model/pretrained_roles.cpp');
      writeFileSync(roles, readFileSync(roles, 'utf8').replace('"gate_up"', '"gate_up_fused"'));
      assert.throws(check, (error) => error.status === 1 && /gate_up_fused/.test(error.stderr));
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });

  it('TENSOR_ROLE: every role the core lists for some config is one of its names', () => {
    const { MIXER_KIND, PRETRAINED_ARCH, QK_NORM, TENSOR_ROLE } = generated;
    const base = {
      hidden: 8,
      intermediate: 16,
      heads: 2,
      headDim: 4,
      kvHeads: 1,
      layers: 1,
      maxPositions: 4,
    };
    const configs = [
      { ...base, arch: PRETRAINED_ARCH.GPT2, vocabSize: 5, maxPositions: 4, tieEmbeddings: false },
      { ...base, arch: PRETRAINED_ARCH.LLAMA, vocabSize: 5, preNorms: true, qkvBias: true },
      { ...base, arch: PRETRAINED_ARCH.LLAMA, vocabSize: 5, postNorms: true, fusedProjections: true },
      { ...base, arch: PRETRAINED_ARCH.LLAMA, vocabSize: 5, qkNorm: QK_NORM.perHead, tieEmbeddings: true },
      {
        ...base,
        arch: PRETRAINED_ARCH.LLAMA,
        vocabSize: 5,
        layerMixer: [MIXER_KIND.SHORT_CONV],
        convKernel: 3,
      },
      // a DeltaNet layer beside a gated softmax one: the linear_* roles and q_gate
      {
        ...base,
        arch: PRETRAINED_ARCH.LLAMA,
        vocabSize: 5,
        layers: 2,
        layerMixer: [MIXER_KIND.DELTA_NET, MIXER_KIND.ATTENTION],
        linearKHeads: 1,
        linearVHeads: 2,
        linearKDim: 4,
        linearVDim: 3,
        linearConvKernel: 2,
        attnOutputGate: true,
      },
      // Gemma 4: per-layer inputs and layer output scales
      { ...base, arch: PRETRAINED_ARCH.LLAMA, vocabSize: 5, perLayerWidth: 2, layerScale: true },
    ];
    const given = new Set(configs.flatMap((c) => coreTensorRoles(c).map((t) => t.role)));
    assert.deepEqual([...given].sort(), Object.keys(TENSOR_ROLE).sort());
  });

  it('the lean path io block: inputs end where outputs start, outputs fit', () => {
    const { FAST_IO: io } = generated;
    assert.equal(io.OUT, 3 * io.INPUT_STRIDE);
    assert.ok(io.OUT_END <= io.SIZE);
    assert.equal(io.OUT_END - io.OUT_WEIGHTS_DIMS, 4);
  });
});
