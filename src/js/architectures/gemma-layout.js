// The Gemma layout (transformers' Gemma2Model, Gemma3TextModel): embeddings × √hidden_size, RMSNorm
// with (1 + w), a norm before and after both the attention and the MLP, GeGLU (gelu_pytorch_tanh),
// scores scaled by query_pre_attn_scalar^−1/2, sliding layers by layer_types (else all but every
// windowPattern-th layer). A family on it gives as data: qkNorm, windowPattern, softcaps (attention-
// and final-logit soft-capping), and ropes(config, family) → { full, sliding } (sliding: null when
// every layer uses the full layers' RoPE).
import { describe } from '../options.js';
import { PRETRAINED_ARCH } from '../constants.js';
import { ropeFrequencies } from './rope.js';
import { POST_NORM_NAMES } from './llama-layout.js';
import { checkLayerTypes, invalid } from './shared.js';

export const GEMMA_TENSORS = POST_NORM_NAMES;

/** The core config of a Gemma-layout family's config.json (r: pretrained/config.js's reader). */
export function gemmaCore(config, r, family) {
  const v = family.variant;
  const act = r.get('hidden_activation');
  if (act !== 'gelu_pytorch_tanh')
    throw invalid(
      `config.json: hidden_activation ${describe(act)} is not supported (only "gelu_pytorch_tanh")`,
    );
  const hidden = r.int('hidden_size'),
    heads = r.int('num_attention_heads'),
    layers = r.int('num_hidden_layers');
  const headDim = r.int('head_dim');
  const { full, sliding } = v.ropes(config, family);
  if (full.partial !== undefined)
    throw invalid(`config.json: partial_rotary_factor is not implemented for ${family.architecture}`);
  const { invFreq, maxPositions } = ropeFrequencies(full, headDim, r.int('max_position_embeddings'));
  const core = {
    arch: PRETRAINED_ARCH.LLAMA,
    vocabSize: r.int('vocab_size'),
    hidden,
    layers,
    heads,
    kvHeads: r.int('num_key_value_heads'),
    headDim,
    intermediate: r.int('intermediate_size'),
    maxPositions,
    normEps: r.num('rms_norm_eps'),
    ropeTheta: full.theta,
    qkvBias: false,
    tieEmbeddings: r.get('tie_word_embeddings') === true,
    qkNorm: v.qkNorm,
    preNorms: true,
    postNorms: true,
    fusedProjections: false,
    rotaryDims: 0,
    normWeightOffset: 1,
    embedScale: Math.fround(Math.sqrt(hidden)),
    attentionScale: r.num('query_pre_attn_scalar') ** -0.5,
    geluMlp: true,
    localRopeTheta: sliding?.theta ?? 0,
    layerWindow: gemmaWindows(config, r, layers, v.windowPattern),
    attnSoftcap: v.softcaps ? softcap(r, 'attn_logit_softcapping') : 0,
    finalSoftcap: v.softcaps ? softcap(r, 'final_logit_softcapping') : 0,
  };
  if (invFreq) core.ropeInvFreq = invFreq;
  return core;
}

// A soft-capping value: a number > 0, or null (none).
function softcap(r, key) {
  const v = r.get(key);
  if (v === null) return 0;
  return r.num(key);
}

// Each Gemma layer's window (0 = full): layer_types, else sliding but every pattern-th layer (Gemma 2:
// every other one; Gemma 3: sliding_window_pattern, 6 by default).
function gemmaWindows(config, r, layers, defaultPattern) {
  const window = r.int('sliding_window');
  const pattern = config.sliding_window_pattern ?? config._sliding_window_pattern ?? defaultPattern;
  if (!Number.isSafeInteger(pattern) || pattern < 1)
    throw invalid(`config.json: sliding_window_pattern must be a positive integer, got ${describe(pattern)}`);
  const given = checkLayerTypes(config.layer_types, layers);
  const types =
    given ??
    Array.from({ length: layers }, (_, i) =>
      (i + 1) % pattern !== 0 ? 'sliding_attention' : 'full_attention',
    );
  return types.map((t) => (t === 'sliding_attention' ? window : 0));
}
