// Gemma 4 (transformers' Gemma4ForCausalLM, the dense text model): the Gemma layout without Gemma's
// (1 + w) (its RMSNorm scales by w), attention scale 1 with per-head q/k RMSNorm and a weightless v
// RMSNorm, sliding and full layers each with their own head size and RoPE (full: "proportional",
// the first partial_rotary_factor share of global_head_dim's frequencies, the rest 0), the last
// num_kv_shared_layers layers attending over the keys and values of the last earlier layer of their
// type (with the double-wide MLP where use_double_wide_mlp), per-layer inputs
// (hidden_size_per_layer_input), a layer_scalar per layer and the final logit soft-cap. The MoE
// variant (enable_moe_block: 26B-A4B) and attention_k_eq_v (31B) are refused by name.
import { describe } from '../options.js';
import { PRETRAINED_ARCH } from '../constants.js';
import { GEMMA_TENSORS } from './gemma-layout.js';
import { QK_NORM, checkLayerTypes, invalid, positiveWindow } from './shared.js';
import { GEMMA4_GGUF } from './gemma4-gguf.js';

const ARCH = 'Gemma4ForCausalLM';

const GEMMA4 = {
  architecture: ARCH,
  name: 'Gemma 4',
  keys: {
    modelType: 'gemma4_text',
    implemented: {
      vocab_size: 262144,
      hidden_size: 2304,
      intermediate_size: 9216,
      num_hidden_layers: 30,
      num_attention_heads: 8,
      num_key_value_heads: 4,
      head_dim: 256,
      global_head_dim: 512,
      hidden_activation: 'gelu_pytorch_tanh',
      max_position_embeddings: 131072,
      rms_norm_eps: 1e-6,
      tie_word_embeddings: true,
      rope_parameters: null,
      sliding_window: 512,
      layer_types: null,
      final_logit_softcapping: null,
      vocab_size_per_layer_input: 262144,
      hidden_size_per_layer_input: 256,
      num_kv_shared_layers: 0,
      use_double_wide_mlp: false,
    },
    inert: ['attention_dropout', 'initializer_range', 'use_cache', 'num_global_key_value_heads'],
    defaultOnly: {
      attention_bias: false,
      use_bidirectional_attention: null,
      attention_k_eq_v: false,
      enable_moe_block: false,
      num_experts: null,
      top_k_experts: null,
      moe_intermediate_size: null,
    },
  },
  refuse: refuseVariants,
  core: gemma4Core,
  docs: {
    computes:
      'embeddings × √hidden_size (a float32 constant: transformers rounds it to bfloat16 for bfloat16 weights, we do not), RMSNorm with w, a norm before and after both the attention and the MLP, GeGLU, per-head q/k RMSNorm and a weightless v RMSNorm, attention scale 1, sliding and full layers by `layer_types` (the last layer full, as transformers forces it) with their own head size (`head_dim`, `global_head_dim`) and RoPE (`rope_parameters`: default on sliding layers, proportional on full ones), K/V shared by the last `num_kv_shared_layers` layers (double-wide MLP there where `use_double_wide_mlp`), per-layer inputs (`hidden_size_per_layer_input`), `layer_scalar`, the final logit soft-cap',
    fixtures:
      '`gemma4-tiny` (sliding/full/sliding/full, head sizes 8 and 16, a 3-key window, layers 2 and 3 sharing 0 and 1, per-layer inputs)',
    qualifier: '(text; MoE and attention_k_eq_v refused)',
  },
  gguf: GEMMA4_GGUF,
  tensors: {
    ...GEMMA_TENSORS,
    global: {
      ...GEMMA_TENSORS.global,
      per_layer_embed: 'model.embed_tokens_per_layer.weight',
      per_layer_model_proj: 'model.per_layer_model_projection.weight',
      per_layer_proj_norm: 'model.per_layer_projection_norm.weight',
    },
    perLayer: {
      ...GEMMA_TENSORS.perLayer,
      per_layer_gate: 'per_layer_input_gate.weight',
      per_layer_proj: 'per_layer_projection.weight',
      per_layer_post_norm: 'post_per_layer_input_norm.weight',
      layer_scale: 'layer_scalar',
    },
  },
};

// A key that may be 0 (or null: 0, as transformers tests it), else its class default.
function wholeNumber(config, key) {
  const v = config[key] === undefined ? GEMMA4.keys.implemented[key] : (config[key] ?? 0);
  if (!Number.isSafeInteger(v) || v < 0)
    throw invalid(`config.json: ${key} must be a whole number ≥ 0, got ${describe(v)}`);
  return v;
}

// The variants not implemented, named before any of their own keys is refused one by one.
function refuseVariants(config) {
  for (const key of ['enable_moe_block', 'attention_k_eq_v'])
    if (config[key] === true)
      throw invalid(
        `config.json: ${key} = true (${key === 'enable_moe_block' ? "Gemma 4's MoE, 26B-A4B" : "Gemma 4 31B's shared K = V projection"}) is not implemented`,
      );
}

/** The core config of a Gemma 4 config.json (r: pretrained/config.js's reader). */
function gemma4Core(config, r) {
  const act = r.get('hidden_activation');
  if (act !== 'gelu_pytorch_tanh')
    throw invalid(
      `config.json: hidden_activation ${describe(act)} is not supported (only "gelu_pytorch_tanh")`,
    );
  const hidden = r.int('hidden_size'),
    layers = r.int('num_hidden_layers');
  const headDim = r.int('head_dim'),
    globalDim = r.int('global_head_dim');
  const kvHeads = r.int('num_key_value_heads'),
    intermediate = r.int('intermediate_size');
  // Gemma4TextConfig: every 6th layer full by default, and the last layer always full (it forces a
  // sliding last layer to full, warning)
  const types = [
    ...(checkLayerTypes(config.layer_types, layers) ??
      Array.from({ length: layers }, (_, i) => ((i + 1) % 6 ? 'sliding_attention' : 'full_attention'))),
  ];
  types[layers - 1] = 'full_attention';
  const window = positiveWindow(r.int('sliding_window'));
  const shared = wholeNumber(config, 'num_kv_shared_layers');
  if (shared < 0 || shared >= layers)
    throw invalid(`config.json: num_kv_shared_layers must be in [0, ${layers - 1}], got ${shared}`);
  const first = layers - shared;
  const source = (i) => {
    if (i < first) return -1;
    for (let j = first - 1; j >= 0; j--) if (types[j] === types[i]) return j;
    throw invalid(`config.json: shared layer ${i} (${types[i]}) has no earlier ${types[i]} layer to share`);
  };
  const wide = r.get('use_double_wide_mlp') === true;
  const { sliding, full } = gemma4Ropes(config.rope_parameters, globalDim);
  const perLayer = wholeNumber(config, 'hidden_size_per_layer_input'); // 0 or null: none
  if (perLayer > 0 && r.int('vocab_size_per_layer_input') !== r.int('vocab_size'))
    throw invalid('config.json: vocab_size_per_layer_input must equal vocab_size');
  return {
    arch: PRETRAINED_ARCH.LLAMA,
    vocabSize: r.int('vocab_size'),
    hidden,
    layers,
    heads: r.int('num_attention_heads'),
    kvHeads,
    headDim,
    intermediate,
    maxPositions: r.int('max_position_embeddings'),
    normEps: r.num('rms_norm_eps'),
    ropeTheta: full.theta,
    ropeInvFreq: full.invFreq,
    localRopeTheta: sliding.theta,
    qkvBias: false,
    tieEmbeddings: r.get('tie_word_embeddings') === true,
    qkNorm: QK_NORM.perHead,
    preNorms: true,
    postNorms: true,
    fusedProjections: false,
    rotaryDims: 0,
    embedScale: Math.fround(Math.sqrt(hidden)),
    attentionScale: 1,
    geluMlp: true,
    finalSoftcap: config.final_logit_softcapping == null ? 0 : r.num('final_logit_softcapping'),
    layerWindow: types.map((t) => (t === 'sliding_attention' ? window : 0)),
    layerHeadDim: types.map((t) => (t === 'sliding_attention' ? headDim : globalDim)),
    layerKvFrom: types.map((_, i) => source(i)),
    layerIntermediate: types.map((_, i) => (wide && i >= first && first > 0 ? 2 : 1) * intermediate),
    vNorm: true,
    perLayerWidth: perLayer,
    layerScale: true,
  };
}

// The two RoPEs: rope_parameters keyed by layer type (Gemma4TextConfig's defaults when null): the
// sliding layers' default over head_dim (the core's local base), the full layers' proportional over
// global_head_dim, θ_i = base^(−2i/global_head_dim) for the first ⌊factor · global_head_dim / 2⌋
// pairs and 0 (no rotation) for the rest, ÷ `factor` (transformers' _compute_proportional_rope_parameters).
function gemma4Ropes(given, globalDim) {
  const p = given ?? {
    sliding_attention: { rope_type: 'default', rope_theta: 10000 },
    full_attention: { rope_type: 'proportional', partial_rotary_factor: 0.25, rope_theta: 1e6 },
  };
  const keys = Object.keys(p ?? {});
  if (typeof p !== 'object' || keys.length !== 2 || !p.sliding_attention || !p.full_attention)
    throw invalid(
      `config.json: Gemma 4's rope_parameters must hold exactly "full_attention" and "sliding_attention", got ${describe(given)}`,
    );
  const theta = (s, where) => {
    if (typeof s.rope_theta !== 'number' || !(s.rope_theta > 0))
      throw invalid(`config.json: rope_parameters.${where}.rope_theta must be a number > 0`);
    return s.rope_theta;
  };
  const s = p.sliding_attention,
    f = p.full_attention;
  const known = (o, allowed, where) => {
    const extra = Object.keys(o).filter((k) => !allowed.includes(k));
    if (extra.length)
      throw invalid(`config.json: rope_parameters.${where}: ${extra.join(', ')} not implemented`);
  };
  known(s, ['rope_type', 'rope_theta'], 'sliding_attention');
  known(f, ['rope_type', 'rope_theta', 'partial_rotary_factor', 'factor'], 'full_attention');
  if (s.rope_type !== 'default')
    throw invalid(`config.json: rope_type ${describe(s.rope_type)} on sliding layers is not implemented`);
  if (f.rope_type !== 'proportional' && f.rope_type !== 'default')
    throw invalid(`config.json: rope_type ${describe(f.rope_type)} on full layers is not implemented`);
  const share = f.rope_type === 'proportional' ? (f.partial_rotary_factor ?? 1) : 1;
  const factor = f.factor ?? 1;
  if (!(share > 0 && share <= 1) || !(factor > 0))
    throw invalid('config.json: rope partial_rotary_factor must be in (0, 1] and factor > 0');
  const base = theta(f, 'full_attention');
  const angles = Math.floor((share * globalDim) / 2);
  const invFreq = Array.from({ length: globalDim / 2 }, (_, i) =>
    i < angles ? 1 / base ** ((2 * i) / globalDim) / factor : 0,
  );
  return { sliding: { theta: theta(s, 'sliding_attention') }, full: { theta: base, invFreq } };
}

export default GEMMA4;
