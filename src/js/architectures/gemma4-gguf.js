// Gemma 4's GGUF part (llama.cpp's `gemma4`: src/models/gemma4.cpp, its converter's Gemma4Model):
// the per-layer keys read back as the config.json keys gemma4.js maps. llama.cpp reads the layer
// types from attention.sliding_window_pattern (one bool per layer), the full layers' head size from
// attention.key_length and the sliding ones' from attention.key_length_swa, the MLP width and KV
// heads per layer where they are arrays (the converter writes the double-wide MLP of the shared
// layers as a feed_forward_length array), and runs the full layers' "proportional" RoPE as a full
// RoPE over global_head_dim whose frequencies the rope_freqs tensor divides (by 1 on the rotated
// pairs, by 1e30 on the others: the loader applies it as it does Llama 3's). Norms are stored as w.
import { AttentionError } from '../errors.js';
import { GGUF_TENSORS, llamaGGUF } from './gguf-layout.js';

const invalid = (message) => new AttentionError('INVALID_ARGUMENT', message);

/** llama.cpp's keys that map one to one (after "gemma4."). */
const KEYS = {
  context_length: 'max_position_embeddings',
  embedding_length: 'hidden_size',
  block_count: 'num_hidden_layers',
  'attention.head_count': 'num_attention_heads',
  'attention.layer_norm_rms_epsilon': 'rms_norm_eps',
  'attention.sliding_window': 'sliding_window',
  embedding_length_per_layer_input: 'hidden_size_per_layer_input',
  vocab_size: 'vocab_size',
};

/** llama.cpp's tensor names of the per-layer inputs and the layer scale. */
export const GEMMA4_GGUF_TENSORS = {
  ...GGUF_TENSORS,
  global: {
    ...GGUF_TENSORS.global,
    per_layer_embed: 'per_layer_token_embd.weight',
    per_layer_model_proj: 'per_layer_model_proj.weight',
    per_layer_proj_norm: 'per_layer_proj_norm.weight',
  },
  perLayer: {
    ...GGUF_TENSORS.perLayer,
    per_layer_gate: 'inp_gate.weight',
    per_layer_proj: 'proj.weight',
    per_layer_post_norm: 'post_norm.weight',
    layer_scale: 'layer_output_scale.weight',
  },
};

// A per-layer key (one value, or one per layer) as a list of `layers` values.
function perLayer(read, suffix, layers, ...fallback) {
  const v = read.array(suffix, ...fallback);
  const list = Array.isArray(v) ? v : Array(layers).fill(v);
  if (list.length !== layers)
    throw invalid(`gguf: gemma4.${suffix} has ${list.length} values for ${layers} layers`);
  return list;
}

// The MLP width: one value, or the converter's double-wide MLP (2× on the shared layers).
function mlpWidth(read, layers, first) {
  const ff = perLayer(read, 'feed_forward_length', layers);
  const base = ff[0];
  const wide = first < layers && ff[first] === 2 * base;
  ff.forEach((n, i) => {
    if (n !== (wide && i >= first ? 2 : 1) * base)
      throw invalid(
        `gguf: gemma4.feed_forward_length [${ff}]: only one width, or twice it on the shared layers, is implemented`,
      );
  });
  return { intermediate_size: base, use_double_wide_mlp: wide };
}

// llama.cpp's shared layers reuse layer (first − 2) if sliding, (first − 1) if full; transformers'
// the last earlier non-shared layer of their type: the two agree when those are sliding then full.
function checkSharing(types, first, layers) {
  if (first === layers) return;
  if (first < 2 || types[first - 1] !== 'full_attention' || types[first - 2] !== 'sliding_attention')
    throw invalid(
      `gguf: gemma4 with shared K/V from layer ${first} needs layers ${first - 2} and ${first - 1} sliding then full (llama.cpp's sharing rule), got ${types.slice(Math.max(0, first - 2), first).join(', ')}`,
    );
}

/** The config.json keys of a `gemma4` file that are not one-to-one. */
function gemma4Config(read, config) {
  const layers = read('block_count');
  const swa = perLayer(read, 'attention.sliding_window_pattern', layers);
  const types = swa.map((s) => (s ? 'sliding_attention' : 'full_attention'));
  if (swa[layers - 1])
    throw invalid(
      'gguf: gemma4.attention.sliding_window_pattern slides the last layer, which transformers makes full: not implemented',
    );
  const shared = read('attention.shared_kv_layers', 0);
  checkSharing(types, layers - shared, layers);
  const headDim = read('attention.key_length_swa'),
    globalDim = config.head_dim; // attention.key_length (gguf-config.js)
  if (read('attention.value_length_swa', headDim) !== headDim)
    throw invalid('gguf: gemma4.attention.value_length_swa differs from key_length_swa: not implemented');
  if (
    read('rope.dimension_count', globalDim) !== globalDim ||
    read('rope.dimension_count_swa', headDim) !== headDim
  )
    throw invalid(
      'gguf: gemma4 with a partial RoPE (rope.dimension_count[_swa] < the head size) is not implemented',
    );
  const heads = read('attention.head_count');
  const kv = perLayer(read, 'attention.head_count_kv', layers, heads);
  if (kv.some((n) => n !== kv[0]))
    throw invalid(`gguf: gemma4.attention.head_count_kv [${kv}] differs by layer: not implemented`);
  return {
    head_dim: headDim,
    global_head_dim: globalDim,
    num_key_value_heads: kv[0],
    layer_types: types,
    num_kv_shared_layers: shared,
    ...mlpWidth(read, layers, layers - shared),
    vocab_size_per_layer_input: config.vocab_size,
    final_logit_softcapping: read('final_logit_softcapping', null),
    rope_parameters: {
      sliding_attention: { rope_type: 'default', rope_theta: read('rope.freq_base_swa', 10000) },
      full_attention: { rope_type: 'default', rope_theta: read('rope.freq_base', 10000) },
    },
  };
}

export const GEMMA4_GGUF = llamaGGUF(['gemma4'], {
  keys: KEYS,
  tensors: GEMMA4_GGUF_TENSORS,
  ropeFreqs: true,
  config: gemma4Config,
});
