// What the families share in GGUF files (llama.cpp's format): the tensor names llama.cpp gives each
// role (src/llama-arch.cpp; the same for every family: blk.N.attn_q.weight …), the metadata keys
// the Llama layout reads (gguf-py's constants.py, read as llama.cpp's load_hparams reads them) and
// the hooks a family's `gguf` part gives (src/js/pretrained/gguf-config.js applies them):
//   names: the general.architecture values llama.cpp writes for it;
//   keys: GGUF key (after "<arch>.") → config.json key, read as is; inert: keys llama.cpp does not
//   read for the family (they cannot change what it computes); special keys read by pretrained/gguf-config.js:
//   rope.dimension_count, attention.value_length, rope.scaling.*;
//   permutedQK: llama.cpp's rope type NORM (rotates adjacent pairs): its converter permuted the
//   q/k rows (LlamaModel.permute), which the loader undoes;
//   normsPlusOne: norm weights stored as 1 + w (Gemma), used as stored; ropeFreqs: a rope_freqs
//   tensor (Llama 3's scaled RoPE) divides the frequencies; longRope: Phi-3's rope_factors_short /
//   rope_factors_long tensors with rope.scaling.attn_factor and rope.scaling.original_context_length;
//   config(read, config): config.json keys llama.cpp fixes or that the file does not carry (config:
//   the keys read so far; read.array reads a key that may hold one value per layer).
//   core: fields of the core's config the family's files fix (Qwen3.5's DeltaNet layout);
//   skipTensor(name, config, read): tensors the file may hold that the model does not run (unread).
import { AttentionError } from '../errors.js';

/** llama.cpp's tensor names by role (LLM_TENSOR_NAMES); per-layer ones after "blk.N.". */
export const GGUF_TENSORS = {
  layer: 'blk.',
  global: {
    embed: 'token_embd.weight',
    positions: 'position_embd.weight',
    final_norm: 'output_norm.weight',
    final_norm_bias: 'output_norm.bias',
    unembed: 'output.weight',
  },
  perLayer: {
    attn_norm: 'attn_norm.weight',
    attn_norm_bias: 'attn_norm.bias',
    mlp_norm: 'ffn_norm.weight',
    mlp_norm_bias: 'ffn_norm.bias',
    post_attn_norm: 'post_attention_norm.weight',
    post_mlp_norm: 'post_ffw_norm.weight',
    q: 'attn_q.weight',
    k: 'attn_k.weight',
    v: 'attn_v.weight',
    q_bias: 'attn_q.bias',
    k_bias: 'attn_k.bias',
    v_bias: 'attn_v.bias',
    qkv: 'attn_qkv.weight',
    qkv_bias: 'attn_qkv.bias',
    q_norm: 'attn_q_norm.weight',
    k_norm: 'attn_k_norm.weight',
    o: 'attn_output.weight',
    o_bias: 'attn_output.bias',
    gate: 'ffn_gate.weight',
    up: 'ffn_up.weight',
    gate_up: 'ffn_up.weight', // Phi-3: [gate; up] rows in one ffn_up (llama.cpp's fused SwiGLU)
    down: 'ffn_down.weight',
    up_bias: 'ffn_up.bias',
    down_bias: 'ffn_down.bias',
  },
};

/** Tensors llama.cpp's converter writes that the loader reads itself, not as a role. */
export const ROPE_FREQS = 'rope_freqs.weight';
/** Phi-3's LongRoPE factors (one per rotated pair; llama.cpp picks long past n_ctx_orig). */
export const ROPE_FACTORS = { short: 'rope_factors_short.weight', long: 'rope_factors_long.weight' };

/** The Llama layout's keys (llama.cpp's LLM_KV_* for the llama-like archs) → config.json keys. */
export const LLAMA_GGUF_KEYS = {
  context_length: 'max_position_embeddings',
  embedding_length: 'hidden_size',
  block_count: 'num_hidden_layers',
  feed_forward_length: 'intermediate_size',
  'attention.head_count': 'num_attention_heads',
  'attention.head_count_kv': 'num_key_value_heads',
  'attention.layer_norm_rms_epsilon': 'rms_norm_eps',
  'attention.key_length': 'head_dim',
  'rope.freq_base': 'rope_theta',
  vocab_size: 'vocab_size',
};

/** The llama-like families' GGUF part, with their own names and hooks. */
export function llamaGGUF(names, more = {}) {
  return {
    names,
    keys: LLAMA_GGUF_KEYS,
    inert: [],
    tensors: GGUF_TENSORS,
    permutedQK: false,
    normsPlusOne: false,
    ropeFreqs: false,
    longRope: false,
    config: () => ({}),
    ...more,
  };
}

// llama.cpp's Gemma 2/3 attention scale (gemma_pytorch's config): 1/√(n_embd / n_head) for the
// 27B models (told by their layer count), else 1/√head_dim — expressed as query_pre_attn_scalar.
export function gemmaQueryScalar(read, bigLayers) {
  const perHead = Math.floor(read('embedding_length') / read('attention.head_count'));
  const headDim = read('attention.key_length', perHead); // llama.cpp's n_embd_head_k
  return read('block_count') === bigLayers ? perHead : headDim;
}

/**
 * llama.cpp's sliding-window period of a family that reads `attention.sliding_window_pattern`
 * (one whole number n ≥ 1; `fallback` when the file has none): every n-th layer is full.
 */
export function swaPeriod(read, fallback) {
  const n = read('attention.sliding_window_pattern', fallback);
  if (!Number.isInteger(n) || n < 1)
    throw new AttentionError(
      'INVALID_ARGUMENT',
      `gguf: attention.sliding_window_pattern must be a whole number ≥ 1 (every n-th layer full), got ${n}`,
    );
  return n;
}

/** Layer types by llama.cpp's set_swa_pattern(n): layer il slides iff il % n < n − 1. */
export function swaPattern(layers, n) {
  return Array.from({ length: layers }, (_, il) => (il % n < n - 1 ? 'sliding_attention' : 'full_attention'));
}
