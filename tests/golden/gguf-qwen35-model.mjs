// A generated Qwen3.5 checkpoint for the qwen35 GGUF fixtures that llama.cpp runs
// (make_gguf_fixtures.mjs writes it through the test-side converter, tests/js/gguf-qwen35.js, as
// convert_hf_to_gguf would). The folder fixture qwen3_5-tiny has value heads of 6 and key heads
// of 8; llama.cpp's qwen35 sizes both from ssm.state_size and cannot load it (it is checked against
// the library's folder path instead, tests/js/gguf-load.test.mjs). This one keeps llama.cpp's
// shapes: key and value heads of 16, 4 value heads on 2 key heads (the converter's reorder acts),
// three DeltaNet layers and a full one (full_attention_interval 4), rows of 32·n so Q8_0 quantizes
// every matrix but the conv. Weights seeded; the vocab is qwen3_5-tiny's (96 ids).
import { seeded } from './gguf-blocks.mjs';

export const QWEN35_CONFIG = {
  architectures: ['Qwen3_5ForCausalLM'],
  model_type: 'qwen3_5_text',
  bos_token_id: 94,
  eos_token_id: 94,
  vocab_size: 96,
  hidden_size: 64,
  intermediate_size: 96,
  num_hidden_layers: 4,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  head_dim: 32,
  hidden_act: 'silu',
  max_position_embeddings: 128,
  rms_norm_eps: 1e-6,
  tie_word_embeddings: false,
  full_attention_interval: 4,
  linear_conv_kernel_dim: 4,
  linear_key_head_dim: 16,
  linear_value_head_dim: 16,
  linear_num_key_heads: 2,
  linear_num_value_heads: 4,
  rope_parameters: {
    rope_type: 'default',
    rope_theta: 10000,
    partial_rotary_factor: 0.25,
    mrope_section: [2, 1, 1],
    mrope_interleaved: true,
  },
};

// The tensors of layer l in the Hugging Face names: [name, shape, kind] (kind: matrix, norm, conv,
// a_log, dt_bias, gated_norm).
function layerTensors(c, l) {
  const E = c.hidden_size,
    p = `model.layers.${l}.`;
  const common = [
    ['input_layernorm.weight', [E], 'norm'],
    ['post_attention_layernorm.weight', [E], 'norm'],
    ['mlp.gate_proj.weight', [c.intermediate_size, E], 'matrix'],
    ['mlp.up_proj.weight', [c.intermediate_size, E], 'matrix'],
    ['mlp.down_proj.weight', [E, c.intermediate_size], 'matrix'],
  ];
  const d = c.head_dim,
    hv = c.linear_num_value_heads,
    vd = hv * c.linear_value_head_dim;
  const ch = 2 * c.linear_num_key_heads * c.linear_key_head_dim + vd;
  const mixer =
    (l + 1) % c.full_attention_interval === 0
      ? [
          ['self_attn.q_proj.weight', [2 * c.num_attention_heads * d, E], 'matrix'],
          ['self_attn.k_proj.weight', [c.num_key_value_heads * d, E], 'matrix'],
          ['self_attn.v_proj.weight', [c.num_key_value_heads * d, E], 'matrix'],
          ['self_attn.o_proj.weight', [E, c.num_attention_heads * d], 'matrix'],
          ['self_attn.q_norm.weight', [d], 'norm'],
          ['self_attn.k_norm.weight', [d], 'norm'],
        ]
      : [
          ['linear_attn.in_proj_qkv.weight', [ch, E], 'matrix'],
          ['linear_attn.in_proj_z.weight', [vd, E], 'matrix'],
          ['linear_attn.in_proj_b.weight', [hv, E], 'matrix'],
          ['linear_attn.in_proj_a.weight', [hv, E], 'matrix'],
          ['linear_attn.conv1d.weight', [ch, 1, c.linear_conv_kernel_dim], 'conv'],
          ['linear_attn.A_log', [hv], 'a_log'],
          ['linear_attn.dt_bias', [hv], 'dt_bias'],
          ['linear_attn.norm.weight', [c.linear_value_head_dim], 'gated_norm'],
          ['linear_attn.out_proj.weight', [E, vd], 'matrix'],
        ];
  return [...common, ...mixer].map(([name, shape, kind]) => [p + name, shape, kind]);
}

// A value of each kind: matrices N(0, 1/√in) (embeddings N(0, 1)), (1 + w) norms with w ~ N(0, 0.1),
// the gated norm's plain w near 1, A = exp(A_log) in [1, 16) as transformers initializes it.
function draw(kind, shape, rng) {
  const fan = shape.length > 1 ? shape[shape.length - 1] : 1;
  const value = {
    matrix: () => rng.normal() / Math.sqrt(fan),
    embed: () => rng.normal(),
    norm: () => 0.1 * rng.normal(),
    gated_norm: () => 1 + 0.1 * rng.normal(),
    conv: () => 0.5 * rng.normal(),
    a_log: () => Math.log(1 + 15 * rng.uniform()),
    dt_bias: () => 0.5 * rng.normal(),
  }[kind];
  return Float32Array.from({ length: shape.reduce((a, n) => a * n, 1) }, value);
}

/** The generated checkpoint: { config, tensors: Map name → { shape, data } } (seeded; `c` another shape). */
export function qwen35Checkpoint(c = QWEN35_CONFIG) {
  const rng = seeded(0x35);
  const list = [
    ['model.embed_tokens.weight', [c.vocab_size, c.hidden_size], 'embed'],
    ...Array.from({ length: c.num_hidden_layers }, (_, l) => layerTensors(c, l)).flat(),
    ['model.norm.weight', [c.hidden_size], 'norm'],
    ['lm_head.weight', [c.vocab_size, c.hidden_size], 'matrix'],
  ];
  return {
    config: c,
    tensors: new Map(list.map(([name, shape, kind]) => [name, { shape, data: draw(kind, shape, rng) }])),
  };
}
