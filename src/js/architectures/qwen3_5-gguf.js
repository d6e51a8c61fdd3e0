// Qwen3.5's GGUF part (llama.cpp's `qwen35`: src/models/qwen35.cpp, its converter's
// Qwen3_5TextModel). What differs from the folder, read back as the folder's config.json keys:
// - the DeltaNet sizes are ssm.* keys: conv_kernel (K), state_size (the key head size),
//   group_count (key heads), time_step_rank (value heads), inner_size (value heads × value head
//   size); the layer kinds attention.recurrent_layers (one bool per block) or, without it,
//   full_attention_interval as in the folder;
// - the value heads are reordered from the folder's grouped order (value head h reads key head
//   h / (H_v / H_k)) to "tiled" (h reads h mod H_k) in every tensor that has them, and ssm_a holds
//   −exp(A_log): the core reads them as stored (linearLayout 1, src/model/delta_net.h);
// - the RMSNorms of (1 + w) are stored with the 1 added (all but ssm_norm, plain w in both);
// - rope.dimension_sections (the mRoPE sections, 4 of them): with text positions all sections see
//   the token's position, so it is plain RoPE on rope.dimension_count features, as in the folder;
// - the multi-token-prediction block(s) (nextn_predict_layers) are written as extra blocks after
//   the model's: not run by llama.cpp's main pass nor here, their tensors left unread.
import { describe } from '../options.js';
import { GGUF_TENSORS, LLAMA_GGUF_KEYS, llamaGGUF } from './gguf-layout.js';
import { invalid } from './shared.js';

/** llama.cpp's tensor names of Qwen3.5's roles (LLM_TENSOR_NAMES). */
export const QWEN35_GGUF_TENSORS = {
  ...GGUF_TENSORS,
  perLayer: {
    ...GGUF_TENSORS.perLayer,
    mlp_norm: 'post_attention_norm.weight', // LLM_TENSOR_ATTN_POST_NORM: the MLP's pre-norm here
    q_gate: 'attn_q.weight',
    linear_qkv: 'attn_qkv.weight',
    linear_z: 'attn_gate.weight',
    linear_b: 'ssm_beta.weight',
    linear_a: 'ssm_alpha.weight',
    linear_conv: 'ssm_conv1d.weight',
    linear_decay: 'ssm_a',
    linear_dt_bias: 'ssm_dt.bias',
    linear_norm: 'ssm_norm.weight',
    linear_out: 'ssm_out.weight',
  },
};

const KEYS = {
  ...LLAMA_GGUF_KEYS,
  'ssm.conv_kernel': 'linear_conv_kernel_dim',
  'ssm.state_size': 'linear_key_head_dim',
  'ssm.group_count': 'linear_num_key_heads',
  'ssm.time_step_rank': 'linear_num_value_heads',
};

const positive = (read, suffix) => {
  const v = read(suffix);
  if (!Number.isSafeInteger(v) || v < 1)
    throw invalid(`gguf: qwen35.${suffix} must be a positive integer, got ${describe(v)}`);
  return v;
};

// The blocks of the model and of its MTP head (blocks [layers, block_count)).
function blockCounts(read) {
  const blocks = positive(read, 'block_count');
  const mtp = read('nextn_predict_layers', 0);
  if (!Number.isSafeInteger(mtp) || mtp < 0 || mtp >= blocks)
    throw invalid(
      `gguf: qwen35.nextn_predict_layers must be an integer in [0, ${blocks}), got ${describe(mtp)}`,
    );
  return { blocks, layers: blocks - mtp };
}

// Each layer's kind as llama.cpp decides it: attention.recurrent_layers, else every
// full_attention_interval-th layer full (default 4); MTP blocks must be full (they are dense).
function layerTypes(read, { blocks, layers }) {
  const given = read.array('attention.recurrent_layers', null);
  if (given === null) {
    const interval = read('full_attention_interval', 4);
    if (!Number.isSafeInteger(interval) || interval < 1)
      throw invalid(
        `gguf: qwen35.full_attention_interval must be a positive integer, got ${describe(interval)}`,
      );
    return Array.from({ length: layers }, (_, i) =>
      (i + 1) % interval !== 0 ? 'linear_attention' : 'full_attention',
    );
  }
  if (!Array.isArray(given) || given.length !== blocks || given.some((b) => typeof b !== 'boolean'))
    throw invalid(
      `gguf: qwen35.attention.recurrent_layers must hold one bool per block (${blocks}), got ${describe(given)}`,
    );
  if (given.slice(layers).some(Boolean))
    throw invalid('gguf: qwen35.attention.recurrent_layers marks an MTP block recurrent: not implemented');
  read('full_attention_interval', 4); // written beside the list, which wins (llama.cpp)
  return given.slice(0, layers).map((r) => (r ? 'linear_attention' : 'full_attention'));
}

// The mRoPE sections: 4 integers ≥ 0 naming at most the rotated frequencies (checked, then dropped:
// with text positions they change nothing).
function checkSections(read, config) {
  const s = read.array('rope.dimension_sections', null);
  if (s === null) return;
  if (!Array.isArray(s) || s.length !== 4 || s.some((n) => !Number.isSafeInteger(n) || n < 0))
    throw invalid(`gguf: qwen35.rope.dimension_sections must hold 4 integers ≥ 0, got ${describe(s)}`);
  const rotated = Math.round(config.head_dim * (config.partial_rotary_factor ?? 1)) / 2;
  if (s.reduce((a, n) => a + n, 0) > rotated)
    throw invalid(
      `gguf: qwen35.rope.dimension_sections ${describe(s)} name more frequencies than the ${rotated} rotated ones`,
    );
}

/** The config.json keys of a `qwen35` file that are not one-to-one. */
function qwen35Config(read, config) {
  const counts = blockCounts(read);
  const types = layerTypes(read, counts);
  const inner = positive(read, 'ssm.inner_size'),
    vHeads = positive(read, 'ssm.time_step_rank');
  if (inner % vHeads !== 0)
    throw invalid(`gguf: qwen35.ssm.inner_size ${inner} is not a multiple of ssm.time_step_rank ${vHeads}`);
  checkSections(read, config);
  return {
    num_hidden_layers: counts.layers,
    layer_types: types,
    linear_value_head_dim: inner / vHeads,
    partial_rotary_factor: config.partial_rotary_factor ?? 1,
  };
}

export const QWEN35_GGUF = llamaGGUF(['qwen35'], {
  keys: KEYS,
  tensors: QWEN35_GGUF_TENSORS,
  normsPlusOne: true,
  config: qwen35Config,
  // the value heads tiled and ssm_a = −exp(A_log), as stored (delta_net.h's GGUF layout)
  core: { linearLayout: 1 },
  // the MTP blocks' tensors (blk.N. for the model's layers ≤ N < block_count): left unread
  skipTensor: (name, config, read) => {
    const m = /^blk\.(\d+)\./.exec(name);
    return m !== null && Number(m[1]) >= config.num_hidden_layers && Number(m[1]) < read('block_count');
  },
});
