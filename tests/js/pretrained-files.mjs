// Shared by the pretrained config and generation tests (pretrained-config-layouts, pretrained-config-keys and
// pretrained-generation .test.mjs): reading the tiny checkpoints of tests/golden/pretrained/ and loading them.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { loadPretrained, AttentionError } from '../../src/js/index.js';
import { PRETRAINED_DIR } from './fixture.js';

export const read = (model, file) => readFileSync(new URL(`${model}/${file}`, PRETRAINED_DIR));
export const json = (model, file) => JSON.parse(read(model, file).toString('utf8'));
export const load = (name, config = json(name, 'config.json'), extra = {}) =>
  loadPretrained({ config, weights: read(name, 'model.safetensors'), ...extra });

// The transformers-5 form of a transformers-4 config.json: rope_theta and rope_scaling move into
// rope_parameters (as PreTrainedConfig.to_dict writes it in 5.x).
// (`like`: a transformers-5 file whose key order and dtype key to copy, for comparisons.)
export function asTransformers5(config, like = null) {
  const {
    rope_theta: theta,
    rope_scaling: scaling,
    partial_rotary_factor: partial,
    torch_dtype: dtype,
    ...rest
  } = config;
  const { type, rope_type: ropeType = type ?? 'default', ...params } = scaling ?? {};
  const out = {
    ...rest,
    transformers_version: '5.17.0',
    rope_parameters: { rope_type: ropeType, ...params, rope_theta: theta },
  };
  if (partial !== undefined) out.rope_parameters.partial_rotary_factor = partial;
  if (dtype !== undefined) out[like ? 'dtype' : 'torch_dtype'] = dtype;
  return out;
}

export async function rejects(config, name, pattern) {
  await assert.rejects(load(name, config), (e) => {
    assert.ok(e instanceof AttentionError, String(e));
    assert.equal(e.code, 'INVALID_ARGUMENT', e.message);
    assert.match(e.message, pattern);
    return true;
  });
}

export const IDS = [
  [5, 17, 42, 88, 3, 61, 29],
  [95, 0, 33, 71, 12, 8, 8],
];
