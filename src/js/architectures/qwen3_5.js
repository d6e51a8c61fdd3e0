// Qwen3.5 (transformers' Qwen3_5ForCausalLM, the text model): the Llama layout with RMSNorms of
// (1 + w), three of every four layers a gated DeltaNet (linear attention, src/model/delta_net.h) and
// the others softmax attention whose q_proj holds per head [q | gate] (output × σ(gate) before
// o_proj), per-head q/k RMSNorm and RoPE on the first partial_rotary_factor · head_dim features.
// Its mRoPE (rope_parameters.mrope_section) splits the rotated frequencies between temporal, height
// and width positions; for text all three positions are the token's, so it is plain RoPE.
import { describe } from '../options.js';
import { LLAMA_TENSORS, llamaCore } from './llama-layout.js';
import { QK_NORM, invalid } from './shared.js';
import { QWEN35_GGUF } from './qwen3_5-gguf.js';

// MixerKind (src/model/blocks.h): 0 softmax attention, 2 the gated DeltaNet.
const MIXER = { full_attention: 0, linear_attention: 2 };

const QWEN3_5_TENSORS = {
  ...LLAMA_TENSORS,
  perLayer: {
    ...LLAMA_TENSORS.perLayer,
    q_gate: 'self_attn.q_proj.weight',
    linear_qkv: 'linear_attn.in_proj_qkv.weight',
    linear_z: 'linear_attn.in_proj_z.weight',
    linear_b: 'linear_attn.in_proj_b.weight',
    linear_a: 'linear_attn.in_proj_a.weight',
    linear_conv: 'linear_attn.conv1d.weight',
    linear_decay: 'linear_attn.A_log',
    linear_dt_bias: 'linear_attn.dt_bias',
    linear_norm: 'linear_attn.norm.weight',
    linear_out: 'linear_attn.out_proj.weight',
  },
  // nn.Conv1d(C, C, K, groups=C) keeps its weight (C, 1, K): the core's (C, K), the same bytes
  fileShapes: { linear_conv: ([c, k]) => [c, 1, k] },
};

// Each layer's kind: layer_types, else linear but every full_attention_interval-th layer
// (Qwen3_5TextConfig: "linear_attention" where (i + 1) % interval != 0).
function layerTypes(config, layers) {
  const given = config.layer_types;
  if (given != null) {
    if (!Array.isArray(given) || given.length !== layers || given.some((t) => !Object.hasOwn(MIXER, t)))
      throw invalid(
        `config.json: layer_types must list "linear_attention" or "full_attention" for each of the ${layers} layers, got ${describe(given)}`,
      );
    return given;
  }
  const interval = config.full_attention_interval ?? 4;
  if (!Number.isSafeInteger(interval) || interval < 1)
    throw invalid(
      `config.json: full_attention_interval must be a positive integer, got ${describe(interval)}`,
    );
  return Array.from({ length: layers }, (_, i) =>
    (i + 1) % interval !== 0 ? 'linear_attention' : 'full_attention',
  );
}

// The config without its mRoPE keys (checked: with text positions they change nothing) and with
// Qwen3_5TextConfig's default partial_rotary_factor 0.25 where neither layout gives one.
function textRope(config) {
  const p = config.rope_parameters;
  const out = { ...config };
  if (p != null && typeof p === 'object' && !Array.isArray(p)) {
    const { mrope_section: section, mrope_interleaved: interleaved, ...rest } = p;
    if (
      section !== undefined &&
      (!Array.isArray(section) || section.some((n) => !Number.isSafeInteger(n) || n < 0))
    )
      throw invalid(
        `config.json: rope_parameters.mrope_section must list integers >= 0, got ${describe(section)}`,
      );
    if (interleaved !== undefined && typeof interleaved !== 'boolean')
      throw invalid(
        `config.json: rope_parameters.mrope_interleaved must be true or false, got ${describe(interleaved)}`,
      );
    out.rope_parameters = rest;
  }
  if (out.partial_rotary_factor === undefined && out.rope_parameters?.partial_rotary_factor === undefined)
    out.partial_rotary_factor = 0.25;
  return out;
}

/** The core config of a Qwen3.5 text config (r: pretrained/config.js's reader). */
function qwen35Core(config, r, family) {
  const core = llamaCore(textRope(config), r, family);
  const types = layerTypes(config, core.layers);
  const section = config.rope_parameters?.mrope_section;
  if (Array.isArray(section) && section.reduce((a, n) => a + n, 0) * 2 > (core.rotaryDims || core.headDim))
    throw invalid(
      `config.json: rope_parameters.mrope_section ${describe(section)} names more frequencies than the ${(core.rotaryDims || core.headDim) / 2} rotated ones`,
    );
  return {
    ...core,
    normWeightOffset: 1,
    layerMixer: types.map((t) => MIXER[t]),
    linearKHeads: r.int('linear_num_key_heads'),
    linearVHeads: r.int('linear_num_value_heads'),
    linearKDim: r.int('linear_key_head_dim'),
    linearVDim: r.int('linear_value_head_dim'),
    linearConvKernel: r.int('linear_conv_kernel_dim'),
    linearLayout: 0,
    attnOutputGate: true,
  };
}

const text = {
  architecture: 'Qwen3_5ForCausalLM',
  name: 'Qwen3.5',
  keys: {
    modelType: 'qwen3_5_text',
    implemented: {
      vocab_size: 248320,
      hidden_size: 4096,
      intermediate_size: 12288,
      num_hidden_layers: 32,
      num_attention_heads: 16,
      num_key_value_heads: 4,
      head_dim: 256,
      hidden_act: 'silu',
      max_position_embeddings: 32768,
      rms_norm_eps: 1e-6,
      tie_word_embeddings: false,
      rope_parameters: null,
      rope_theta: 10000,
      rope_scaling: null,
      partial_rotary_factor: 0.25,
      linear_conv_kernel_dim: 4,
      linear_key_head_dim: 128,
      linear_value_head_dim: 128,
      linear_num_key_heads: 16,
      linear_num_value_heads: 32,
      layer_types: null,
      full_attention_interval: 4,
    },
    // mtp_*: the multi-token-prediction head (mtp.* tensors), which the forward does not run;
    // mamba_ssm_dtype: the dtype kernels keep the recurrent state in (we keep it in double).
    inert: ['attention_dropout', 'mtp_num_hidden_layers', 'mtp_use_dedicated_embeddings', 'mamba_ssm_dtype'],
    defaultOnly: { attention_bias: false, attn_output_gate: true },
  },
  core: qwen35Core,
  variant: { qkNorm: QK_NORM.perHead, partialRotary: true },
  // Its row of the architectures table of docs/checkpoints.md (scripts/config-keys-doc.mjs).
  docs: {
    computes:
      'RMSNorm with (1 + w); linear layers by `layer_types` (or all but every `full_attention_interval`-th): gated DeltaNet — fused `in_proj_qkv`, causal depthwise `conv1d` + SiLU, L2-normed q/k, β = σ(b), g = −exp(`A_log`)·softplus(a + `dt_bias`), the delta rule per value head (`linear_num_value_heads` sharing `linear_num_key_heads` in groups), gated RMSNorm (plain w) × SiLU(z), `out_proj`; full layers: `q_proj` per head [q | gate], per-head q/k RMSNorm, RoPE on `partial_rotary_factor`·head_dim features (mRoPE sections with text positions are plain RoPE), GQA, output × σ(gate)',
    fixtures:
      '`qwen3_5-tiny` (2 DeltaNet layers, 4 value heads on 2 key heads; 1 full layer, GQA, factor 0.5)',
  },
  tensors: QWEN3_5_TENSORS,
  // llama.cpp's qwen35 files (qwen3_5-gguf.js: tiled value heads, −exp(A_log), norms + 1).
  gguf: QWEN35_GGUF,
  // GGUF files of the same lineage refused by name (pretrained/gguf-config.js): qwen3next, qwen35moe.
  refusesGGUF: {
    qwen3next:
      'Qwen3-Next (a mixture of experts over DeltaNet and gated attention layers) is not implemented',
    qwen35moe: 'Qwen3.5-MoE (mixture-of-experts MLPs) is not implemented',
  },
  // Architectures of the same lineage this library refuses by name (pretrained/config.js).
  refuses: {
    Qwen3NextForCausalLM:
      'Qwen3-Next (qwen3_next: a mixture of experts over DeltaNet and gated attention layers) is not implemented',
    Qwen3_5MoeForCausalLM: 'Qwen3.5-MoE (qwen3_5_moe: mixture-of-experts MLPs) is not implemented',
    Qwen3_5MoeForConditionalGeneration:
      'Qwen3.5-MoE (qwen3_5_moe: mixture-of-experts MLPs) is not implemented',
  },
};

export default text;
