// LFM2 (Liquid AI; transformers' Lfm2ForCausalLM, llama.cpp's lfm2): a hybrid of short-convolution
// layers (the core's MixerKind::kShortConv, src/model/short_conv.h: [B | C | X] = in_proj(x),
// out_proj(C ⊙ conv(B ⊙ X)), causal, kernel conv_L_cache, no activation) and GQA attention layers
// with per-head q/k RMSNorm and RoPE; every layer has the SwiGLU MLP (w1 gate, w3 up, w2 down) behind
// RMSNorms (operator_norm, ffn_norm) and the final norm is model.embedding_norm. Lfm2MoeForCausalLM,
// llama.cpp's lfm2moe and the LFM2-VL models are refused by name (pretrained/config.js,
// pretrained/gguf-config.js read the registry's refused names).
import { describe } from '../options.js';
import { PRETRAINED_ARCH, MIXER_KIND } from '../constants.js';
import { ropeFrequencies, ropeSettings } from './rope.js';
import { QK_NORM, invalid } from './shared.js';
import { GGUF_TENSORS, LLAMA_GGUF_KEYS, llamaGGUF } from './gguf-layout.js';

const ARCHITECTURE = 'Lfm2ForCausalLM';

// transformers' Lfm2Config reads these older spellings first (kwargs.get): each must agree with the
// newer key when both are given.
const ALIASES = {
  block_ff_dim: 'intermediate_size',
  theta: 'rope_theta',
  tie_embedding: 'tie_word_embeddings',
};

function withAliases(config) {
  const out = { ...config };
  for (const [old, key] of Object.entries(ALIASES)) {
    if (config[old] === undefined) continue;
    if (config[key] !== undefined && config[key] !== config[old])
      throw invalid(
        `config.json: ${old} (${describe(config[old])}) and ${key} (${describe(config[key])}) disagree; transformers reads ${old}`,
      );
    out[key] = config[old];
    delete out[old];
  }
  return out;
}

/** Lfm2MLP's width from intermediate_size and the block_* keys, as the config class computes it. */
export function lfm2Intermediate(size, autoAdjust, multiplier, multipleOf) {
  if (typeof autoAdjust !== 'boolean')
    throw invalid(`config.json: block_auto_adjust_ff_dim must be true or false, got ${describe(autoAdjust)}`);
  if (!autoAdjust) return size;
  let i = Math.trunc((2 * size) / 3);
  if (multiplier === null) return i;
  if (typeof multiplier !== 'number' || !(multiplier > 0) || !Number.isFinite(multiplier))
    throw invalid(
      `config.json: block_ffn_dim_multiplier must be a number > 0 or null, got ${describe(multiplier)}`,
    );
  if (!Number.isSafeInteger(multipleOf) || multipleOf < 1)
    throw invalid(`config.json: block_multiple_of must be a positive integer, got ${describe(multipleOf)}`);
  i = Math.trunc(multiplier * i);
  return multipleOf * Math.ceil(i / multipleOf);
}

// Each layer's kind: layer_types ("full_attention" / "conv"), else full_attn_idxs (the older
// configs: the listed layers attend, the rest convolve), else every layer attends.
function layerKinds(config, layers) {
  const types = config.layer_types;
  if (types != null) {
    if (
      !Array.isArray(types) ||
      types.length !== layers ||
      types.some((t) => t !== 'full_attention' && t !== 'conv')
    )
      throw invalid(
        `config.json: layer_types must list "full_attention" or "conv" for each of the ${layers} layers, got ${describe(types)}`,
      );
    return types;
  }
  const idxs = config.full_attn_idxs;
  if (idxs == null) return new Array(layers).fill('full_attention');
  if (!Array.isArray(idxs) || idxs.some((i) => !Number.isSafeInteger(i) || i < 0 || i >= layers))
    throw invalid(
      `config.json: full_attn_idxs must list layer indices in [0, ${layers}), got ${describe(idxs)}`,
    );
  return Array.from({ length: layers }, (_, i) => (idxs.includes(i) ? 'full_attention' : 'conv'));
}

// transformers 5 writes LFM2's rope_parameters per layer type — { full_attention: {…}, conv: null }
// (the conv layers have no RoPE): the attention layers' entry is the RoPE; any other layer type, or
// settings for the conv layers, are refused.
function attentionRope(config) {
  const p5 = config.rope_parameters;
  if (p5 == null || typeof p5 !== 'object' || !('full_attention' in p5 || 'conv' in p5)) return config;
  const extra = Object.keys(p5).filter((k) => k !== 'full_attention' && k !== 'conv');
  if (extra.length || p5.conv != null)
    throw invalid(
      `config.json: rope_parameters for layer types other than full_attention (${describe(p5)}) are not implemented for ${ARCHITECTURE}`,
    );
  return { ...config, rope_parameters: p5.full_attention ?? null };
}

function lfm2Core(original, r0, family) {
  const config = withAliases(original);
  const get = (key) => config[key] ?? family.keys.implemented[key];
  const int = (key) => {
    const v = get(key);
    if (!Number.isSafeInteger(v) || v < 1)
      throw invalid(`config.json: ${key} must be a positive integer, got ${describe(v)}`);
    return v;
  };
  const hidden = int('hidden_size'),
    heads = int('num_attention_heads'),
    layers = int('num_hidden_layers');
  const eps = get('norm_eps');
  if (typeof eps !== 'number' || !(eps > 0))
    throw invalid(`config.json: norm_eps must be a number > 0, got ${describe(eps)}`);
  if (hidden % heads !== 0)
    throw invalid(`config.json: num_attention_heads ${heads} must divide hidden_size ${hidden}`);
  const headDim = hidden / heads;
  const rope = ropeSettings(attentionRope(config), ARCHITECTURE, family.keys.implemented.rope_theta);
  const { invFreq, maxPositions } = ropeFrequencies(
    rope,
    headDim,
    int('max_position_embeddings'),
    undefined,
    {
      yarn: false,
      architecture: ARCHITECTURE,
    },
  );
  const kinds = layerKinds(config, layers);
  const core = {
    arch: PRETRAINED_ARCH.LLAMA,
    vocabSize: int('vocab_size'),
    hidden,
    layers,
    heads,
    kvHeads: int('num_key_value_heads'),
    headDim,
    intermediate: lfm2Intermediate(
      int('intermediate_size'),
      get('block_auto_adjust_ff_dim'),
      get('block_ffn_dim_multiplier'),
      get('block_multiple_of'),
    ),
    maxPositions,
    normEps: eps,
    ropeTheta: rope.theta,
    qkvBias: false,
    tieEmbeddings: get('tie_word_embeddings') === true,
    qkNorm: QK_NORM.perHead,
    layerMixer: kinds.map((k) => (k === 'conv' ? MIXER_KIND.SHORT_CONV : MIXER_KIND.ATTENTION)),
    convKernel: kinds.includes('conv') ? int('conv_L_cache') : 0,
  };
  if (invFreq) core.ropeInvFreq = invFreq;
  return core;
}

// llama.cpp's lfm2: attention.head_count_kv per layer (0 = a conv layer), the FF width already
// adjusted (feed_forward_length), token_embd_norm the final norm (LLM_TENSOR_OUTPUT_NORM_LFM2).
function ggufConfig(read) {
  const kv = read.array('attention.head_count_kv');
  const layers = read('block_count');
  if (!Array.isArray(kv))
    throw invalid(`gguf: lfm2.attention.head_count_kv must be an array, got ${describe(kv)}`);
  if (kv.length !== layers || kv.some((n) => !Number.isSafeInteger(n) || n < 0))
    throw invalid(
      `gguf: lfm2.attention.head_count_kv must hold one count ≥ 0 per layer, got ${describe(kv)}`,
    );
  const attention = [...new Set(kv.filter((n) => n > 0))];
  if (attention.length > 1)
    throw invalid(
      `gguf: lfm2 attention layers with different KV head counts (${attention}) are not implemented`,
    );
  const out = {
    layer_types: kv.map((n) => (n === 0 ? 'conv' : 'full_attention')),
    block_auto_adjust_ff_dim: false,
  };
  if (attention.length === 1) out.num_key_value_heads = attention[0];
  return out;
}

export default {
  architecture: ARCHITECTURE,
  name: 'LFM2',
  // Its relatives the library refuses by name (pretrained/config.js, pretrained/gguf-config.js).
  refuses: {
    Lfm2MoeForCausalLM: 'LFM2 MoE (mixture-of-experts MLPs) is not implemented; Lfm2ForCausalLM is',
    Lfm2VlForConditionalGeneration: 'LFM2-VL (vision-language) is not implemented; Lfm2ForCausalLM is',
  },
  refusesGGUF: { lfm2moe: "llama.cpp's lfm2moe (LFM2 MoE) is not implemented; lfm2 is" },
  keys: {
    modelType: 'lfm2',
    implemented: {
      vocab_size: 65536,
      hidden_size: 2560,
      intermediate_size: 12288,
      block_ff_dim: null,
      num_hidden_layers: 32,
      num_attention_heads: 32,
      num_key_value_heads: 8,
      max_position_embeddings: 128000,
      norm_eps: 1e-5,
      tie_word_embeddings: true,
      tie_embedding: null,
      rope_parameters: null,
      rope_theta: 1000000,
      theta: null,
      rope_scaling: null,
      conv_L_cache: 3,
      block_multiple_of: 256,
      block_ffn_dim_multiplier: 1.0,
      block_auto_adjust_ff_dim: true,
      full_attn_idxs: null,
      layer_types: null,
    },
    // The original LFM2 configs' keys transformers stores and never reads.
    inert: [
      'block_dim',
      'block_norm_eps',
      'block_mlp_init_scale',
      'block_out_init_scale',
      'block_use_swiglu',
      'block_use_xavier_init',
      'conv_dim',
      'conv_dim_out',
      'conv_use_xavier_init',
      'num_heads',
      'use_pos_enc',
    ],
    defaultOnly: { conv_bias: false },
  },
  core: lfm2Core,
  variant: {},
  // Its row of the architectures table of docs/checkpoints.md (scripts/config-keys-doc.mjs).
  docs: {
    computes:
      'short-convolution layers (`layer_types` "conv", or those not in `full_attn_idxs`): [B | C | X] = `conv.in_proj`(x), `conv.out_proj`(C ⊙ conv(B ⊙ X)), causal depthwise kernel `conv_L_cache`, no bias, no activation; attention layers GQA with per-head q/k RMSNorm (`q_layernorm`, `k_layernorm`) before RoPE; SwiGLU (`w1`, `w3`, `w2`) of width `block_auto_adjust_ff_dim` ? `block_multiple_of`·⌈`block_ffn_dim_multiplier`·⌊2·`intermediate_size`/3⌋ / `block_multiple_of`⌉ : `intermediate_size`; final norm `model.embedding_norm`; `block_ff_dim`, `theta`, `tie_embedding` read first as transformers does',
    fixtures: '`lfm2-tiny` (a conv layer, then an attention layer; FF width 80 from 72)',
  },
  gguf: llamaGGUF(['lfm2'], {
    keys: {
      ...Object.fromEntries(Object.entries(LLAMA_GGUF_KEYS).filter(([k]) => k !== 'attention.head_count_kv')),
      'attention.layer_norm_rms_epsilon': 'norm_eps',
      'shortconv.l_cache': 'conv_L_cache',
    },
    tensors: {
      ...GGUF_TENSORS,
      global: { ...GGUF_TENSORS.global, final_norm: 'token_embd_norm.weight' },
      perLayer: {
        ...GGUF_TENSORS.perLayer,
        conv_in_proj: 'shortconv.in_proj.weight',
        conv_weight: 'shortconv.conv.weight',
        conv_out_proj: 'shortconv.out_proj.weight',
      },
    },
    config: ggufConfig,
  }),
  tensors: {
    prefixes: [''],
    layer: 'model.layers.',
    global: {
      embed: 'model.embed_tokens.weight',
      final_norm: 'model.embedding_norm.weight',
      unembed: 'lm_head.weight',
    },
    perLayer: {
      attn_norm: 'operator_norm.weight',
      mlp_norm: 'ffn_norm.weight',
      q: 'self_attn.q_proj.weight',
      k: 'self_attn.k_proj.weight',
      v: 'self_attn.v_proj.weight',
      o: 'self_attn.out_proj.weight',
      q_norm: 'self_attn.q_layernorm.weight',
      k_norm: 'self_attn.k_layernorm.weight',
      gate: 'feed_forward.w1.weight',
      up: 'feed_forward.w3.weight',
      down: 'feed_forward.w2.weight',
      conv_in_proj: 'conv.in_proj.weight',
      conv_weight: 'conv.conv.weight',
      conv_out_proj: 'conv.out_proj.weight',
    },
    transposed: [],
    // The kernel as nn.Conv1d keeps it, (E, 1, K); the core's (E, K) holds the same bytes.
    fileShapes: { conv_weight: ([e, k]) => [e, 1, k] },
  },
};
