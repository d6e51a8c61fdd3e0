// Every PyTorch golden fixture (tests/golden/fixtures, written by make_fixtures.py) reproduced
// through the public JS API. Masks in the fixtures are already in OUR convention (1 = may attend,
// 1 = real token); the last test shows the conversion from nn.MultiheadAttention's (True = ignore).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  init,
  Tensor,
  softmax,
  layerNorm,
  scaledDotProductAttention,
  MultiHeadAttention,
  memoryStats,
} from '../../src/js/index.js';
import { loadFixture, listFixtures } from './fixture.js';
import { assertClose } from './close.js';

/** Largest allowed |ours − PyTorch| for every output and weight (the acceptance bound). */
const kGoldenTol = 1e-5;

/** The state-dict names a fixture may carry (PyTorch's names). */
const STATE_DICT_NAMES = [
  'in_proj_weight',
  'q_proj_weight',
  'k_proj_weight',
  'v_proj_weight',
  'in_proj_bias',
  'out_proj.weight',
  'out_proj.bias',
  'bias_k',
  'bias_v',
  'layer_norm.weight',
  'layer_norm.bias',
];

await init();

/** A float fixture tensor as a Tensor. */
const floatTensor = (t) => new Tensor(t.data, t.shape);

/** A 0/1 fixture tensor as a boolean mask Tensor (Uint8Array data), our convention kept as is. */
const boolTensor = (t) =>
  new Tensor(
    Uint8Array.from(t.data, (v) => (v !== 0 ? 1 : 0)),
    t.shape,
  );

function optionalTensor(f, name, convert) {
  return f.has(name) ? convert(f.get(name)) : undefined;
}

function runSoftmax(f) {
  const y = softmax(floatTensor(f.get('x')));
  assert.deepEqual(y.shape, f.get('expected').shape);
  assertClose(y.data, f.get('expected').data, kGoldenTol, `${f.name} softmax`);
}

function runLayerNorm(f) {
  const y = layerNorm(floatTensor(f.get('x')), {
    eps: f.scalar('eps'),
    weight: floatTensor(f.get('weight')),
    bias: floatTensor(f.get('bias')),
  });
  assertClose(y.data, f.get('expected').data, kGoldenTol, `${f.name} layerNorm`);
}

function runSdpa(f) {
  const r = scaledDotProductAttention(
    floatTensor(f.get('q')),
    floatTensor(f.get('k')),
    floatTensor(f.get('v')),
    {
      mask: optionalTensor(f, 'mask', boolTensor),
      additiveMask: optionalTensor(f, 'additive_mask', floatTensor),
      causal: f.scalar('causal', 0) === 1,
      scale: f.scalar('scale', undefined),
    },
  );
  assert.deepEqual(r.output.shape, f.get('expected').shape);
  assertClose(r.output.data, f.get('expected').data, kGoldenTol, `${f.name} output`);
  assert.deepEqual(r.weights.shape, f.get('weights').shape);
  assertClose(r.weights.data, f.get('weights').data, kGoldenTol, `${f.name} weights`);
}

/** new MultiHeadAttention(config) from the fixture's config scalars, with its state dict loaded. */
function mhaFromFixture(f) {
  const flag = (name) => f.scalar(name) === 1;
  const mha = new MultiHeadAttention({
    embedDim: f.scalar('embed_dim'),
    numHeads: f.scalar('num_heads'),
    kdim: f.scalar('kdim'),
    vdim: f.scalar('vdim'),
    headDim: f.scalar('head_dim'),
    valueHeadDim: f.scalar('value_head_dim'),
    bias: flag('bias'),
    addBiasKV: flag('add_bias_kv'),
    addZeroAttn: flag('add_zero_attn'),
    residual: flag('residual'),
    layerNorm: flag('layer_norm') ? { eps: f.scalar('layer_norm_eps') } : false,
  });
  const stateDict = {};
  for (const name of STATE_DICT_NAMES) if (f.has(name)) stateDict[name] = floatTensor(f.get(name));
  mha.loadStateDict(stateDict);
  return mha;
}

function mhaOptions(f, masks = {}) {
  return {
    mask: optionalTensor(f, 'mask', boolTensor),
    additiveMask: optionalTensor(f, 'additive_mask', floatTensor),
    keyPaddingMask: optionalTensor(f, 'key_padding_mask', boolTensor),
    causal: f.scalar('causal') === 1,
    needWeights: f.scalar('need_weights') === 1,
    averageWeights: f.scalar('average_weights') === 1,
    ...masks,
  };
}

function checkMhaResult(f, r, label) {
  assert.deepEqual(r.output.shape, f.get('expected').shape, `${label} output shape`);
  assertClose(r.output.data, f.get('expected').data, kGoldenTol, `${label} output`);
  if (f.scalar('need_weights') === 1) {
    assert.deepEqual(r.weights.shape, f.get('weights').shape, `${label} weights shape`);
    assertClose(r.weights.data, f.get('weights').data, kGoldenTol, `${label} weights`);
  } else {
    assert.equal(r.weights, undefined, `${label}: needWeights false returns no weights`);
  }
}

function runMha(f) {
  const mha = mhaFromFixture(f);
  try {
    const query = floatTensor(f.get('query'));
    const key = floatTensor(f.get('key'));
    const value = floatTensor(f.get('value'));
    checkMhaResult(f, mha.forward(query, key, value, mhaOptions(f)), `${f.name} (explicit key/value)`);
    if (f.scalar('self_attention') === 1) {
      checkMhaResult(f, mha.forward(query, null, null, mhaOptions(f)), `${f.name} (key omitted)`);
    }
  } finally {
    mha.dispose();
  }
}

const RUNNERS = [
  ['softmax_', runSoftmax],
  ['layer_norm_', runLayerNorm],
  ['sdpa_', runSdpa],
  ['mha_', runMha],
  ['tutorial_', runMha],
];

describe('PyTorch golden fixtures through the JS API', () => {
  const names = listFixtures();

  it('the fixture index is not empty and every fixture has a runner', () => {
    assert.ok(names.length >= 20, `${names.length} fixtures`);
    for (const name of names) {
      assert.ok(
        RUNNERS.some(([prefix]) => name.startsWith(prefix)),
        `no runner for fixture '${name}'`,
      );
    }
  });

  for (const name of names) {
    it(`${name} matches PyTorch within ${kGoldenTol}`, () => {
      const run = RUNNERS.find(([prefix]) => name.startsWith(prefix))?.[1];
      assert.ok(run, `no runner for ${name}`);
      run(loadFixture(name));
    });
  }

  it('leaves no live handles behind', () => {
    assert.equal(memoryStats().liveHandles, 0);
  });
});

/**
 * nn.MultiheadAttention's bool `attn_mask` and `key_padding_mask` mean True = IGNORE this key.
 * attention-wasm's bool masks mean true = MAY ATTEND (attn_mask) / REAL TOKEN (keyPaddingMask),
 * like F.scaled_dot_product_attention. Converting is a logical NOT of every element:
 *
 *   // torch: key_padding_mask = tokens == PAD   (True = padding, ignore it)
 *   const keyPaddingMask = fromTorchBoolMask(torchPadding);   // true = real token
 */
function fromTorchBoolMask(torchMask) {
  return new Tensor(
    Uint8Array.from(torchMask.data, (ignore) => (ignore ? 0 : 1)),
    torchMask.shape,
  );
}

describe('porting nn.MultiheadAttention bool masks', () => {
  it('inverting PyTorch masks (True = ignore) reproduces the fixtures; not inverting does not', () => {
    for (const name of ['mha_key_padding', 'mha_bool_mask_3d', 'mha_bias_kv_zero_attn']) {
      const f = loadFixture(name);
      // What PyTorch was given: the fixtures store ours, so build PyTorch's by inverting once.
      const torchMasks = {};
      for (const [fixtureName, option] of [
        ['mask', 'mask'],
        ['key_padding_mask', 'keyPaddingMask'],
      ]) {
        if (!f.has(fixtureName)) continue;
        const ours = f.get(fixtureName);
        torchMasks[option] = {
          data: Uint8Array.from(ours.data, (v) => (v !== 0 ? 0 : 1)),
          shape: ours.shape,
        };
      }
      const mha = mhaFromFixture(f);
      try {
        const args = [floatTensor(f.get('query')), floatTensor(f.get('key')), floatTensor(f.get('value'))];
        const converted = Object.fromEntries(
          Object.entries(torchMasks).map(([k, m]) => [k, fromTorchBoolMask(m)]),
        );
        checkMhaResult(f, mha.forward(...args, mhaOptions(f, converted)), `${name} converted`);
        // Passing PyTorch's masks unconverted attends to exactly the wrong keys.
        const raw = Object.fromEntries(
          Object.entries(torchMasks).map(([k, m]) => [k, new Tensor(m.data, m.shape)]),
        );
        const wrong = mha.forward(...args, mhaOptions(f, raw)).output.data;
        const expected = f.get('expected').data;
        assert.ok(
          wrong.some((v, i) => Math.abs(v - expected[i]) > 1e3 * kGoldenTol),
          `${name}: unconverted masks must differ`,
        );
      } finally {
        mha.dispose();
      }
    }
  });
});
