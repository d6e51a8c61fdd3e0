// Phi-3 (and Phi-4-mini, the same class): Llama with fused qkv_proj and gate_up_proj, a partial RoPE,
// a window on every layer and LongRoPE.
import { LLAMA_TENSORS, llamaCore, llamaKeys } from './llama-layout.js';
import { llamaGGUF } from './gguf-layout.js';

// Phi-3's fused projections: [q; k; v] rows and [gate; up] rows.
const PHI3_TENSORS = {
  ...LLAMA_TENSORS,
  perLayer: {
    ...LLAMA_TENSORS.perLayer,
    qkv: 'self_attn.qkv_proj.weight',
    gate_up: 'mlp.gate_up_proj.weight',
  },
};

export default {
  architecture: 'Phi3ForCausalLM',
  name: 'Phi-3',
  keys: {
    modelType: 'phi3',
    implemented: llamaKeys(
      {
        vocab_size: 32064,
        hidden_size: 3072,
        intermediate_size: 8192,
        max_position_embeddings: 4096,
        rms_norm_eps: 1e-5,
      },
      { original_max_position_embeddings: 4096, partial_rotary_factor: 1, sliding_window: null },
    ),
    inert: ['attention_dropout', 'resid_pdrop', 'embd_pdrop'],
    defaultOnly: {},
  },
  core: llamaCore,
  variant: { fusedProjections: true, partialRotary: true, windows: 'every', longRope: true },
  // Its row of the architectures table of docs/checkpoints.md (scripts/config-keys-doc.mjs).
  docs: {
    computes:
      'fused `qkv_proj` ([q; k; v] rows) and `gate_up_proj` ([gate; up]) read as row blocks on load; RoPE on the first `partial_rotary_factor`·head_dim features; `sliding_window` on every layer; `rope_scaling` longrope (Phi-4-mini, Phi-3-128k): `short_factor` frequencies, cos and sin × `attention_factor` (default √(1 + ln(max / original) / ln original)), inputs capped at `original_max_position_embeddings` (longer ones are refused: transformers would switch to `long_factor`)',
    fixtures: '`phi3-tiny` (factor 0.5, window 5), `phi4-mini-tiny` (factor 0.75, longrope, GQA, tied)',
  },
  // GGUF: llama.cpp disables Phi-3's sliding window (every layer full); fused attn_qkv and
  // ffn_up ([gate; up] rows); rope.dimension_count gives the partial RoPE; LongRoPE as
  // rope_factors_short / rope_factors_long tensors (llama.cpp uses the long ones when its context
  // is longer than rope.scaling.original_context_length; we, the short ones with the input capped
  // there, as for a folder) and rope.scaling.attn_factor.
  gguf: llamaGGUF(['phi3'], {
    inert: ['attention.sliding_window'],
    longRope: true,
    config: () => ({ sliding_window: null }),
  }),
  tensors: PHI3_TENSORS,
};
