// The config.json key tables of the supported architectures (issue #25's rule: no silent wrong
// answers). Each key is implemented (changes what we compute; the value is transformers' class
// default, used when config.json omits the key), inert (cannot change the forward), or inert only at
// its default; pretrained-config.js refuses every other key. Written by hand from transformers
// 5.17's configuration classes (PreTrainedConfig, GPT2Config, LlamaConfig, Qwen2Config, Qwen3Config,
// MistralConfig, SmolLM3Config, Olmo2Config, Phi3Config, Gemma2Config, Gemma3TextConfig): this project's machines
// have no `transformers`. scripts/config-keys-doc.mjs renders them into docs/checkpoints.md.

// PreTrainedConfig's own attributes and the generation/serving bookkeeping configs carry: none can
// change a forward pass (dropouts are off at inference, token ids only name tokens).
export const INERT_COMMON = [
  '_name_or_path', '_commit_hash', '_attn_implementation', '_attn_implementation_autoset', 'architectures',
  'model_type', 'transformers_version', 'dtype', 'torch_dtype', 'use_bfloat16', 'use_cache', 'initializer_range',
  'return_dict', 'output_hidden_states', 'output_attentions', 'torchscript', 'tf_legacy_loss', 'pruned_heads',
  'chunk_size_feed_forward', 'is_decoder', 'id2label', 'label2id', 'num_labels', 'problem_type', 'finetuning_task',
  'tokenizer_class', 'prefix', 'task_specific_params', 'bos_token_id', 'eos_token_id', 'pad_token_id',
  'sep_token_id', 'decoder_start_token_id', 'max_length', 'min_length', 'do_sample', 'early_stopping', 'num_beams',
  'num_beam_groups', 'diversity_penalty', 'temperature', 'top_k', 'top_p', 'typical_p', 'repetition_penalty',
  'length_penalty', 'no_repeat_ngram_size', 'encoder_no_repeat_ngram_size', 'bad_words_ids',
  'num_return_sequences', 'output_scores', 'return_dict_in_generate', 'forced_bos_token_id',
  'forced_eos_token_id', 'remove_invalid_values', 'exponential_decay_length_penalty', 'suppress_tokens',
  'begin_suppress_tokens',
];
export const DEFAULT_ONLY_COMMON = { is_encoder_decoder: false, add_cross_attention: false, tie_encoder_decoder: false, cross_attention_hidden_size: null };
// Keys that can never be read as a plain forward: refused whatever their value.
export const REFUSED = {
  quantization_config: 'quantized checkpoints are not supported (load an F32, F16 or BF16 checkpoint)',
  auto_map: 'the checkpoint needs custom modeling code (auto_map), which this library cannot run',
};

// Qwen2's (and Qwen3's, SmolLM3's) sliding window: it acts only with use_sliding_window true, on the
// layers layer_types marks "sliding_attention" (by default layer i >= max_window_layers).
const QWEN_WINDOWS = { use_sliding_window: false, sliding_window: 4096, max_window_layers: 28, layer_types: null };

// Each architecture: its model_type, the keys we implement with transformers' class defaults (used
// when config.json omits them), the inert keys and the keys inert only at their default.
export const CONFIG_KEYS = {
  GPT2LMHeadModel: {
    modelType: 'gpt2',
    implemented: { vocab_size: 50257, n_positions: 1024, n_embd: 768, n_layer: 12, n_head: 12, n_inner: null,
      activation_function: 'gelu_new', layer_norm_epsilon: 1e-5 },
    inert: ['resid_pdrop', 'embd_pdrop', 'attn_pdrop', 'summary_type', 'summary_use_proj', 'summary_activation',
      'summary_proj_to_labels', 'summary_first_dropout', 'n_ctx', 'reorder_and_upcast_attn'],
    defaultOnly: { scale_attn_weights: true, scale_attn_by_inverse_layer_idx: false, tie_word_embeddings: true },
  },
  LlamaForCausalLM: {
    modelType: 'llama',
    implemented: { vocab_size: 32000, hidden_size: 4096, intermediate_size: 11008, num_hidden_layers: 32,
      num_attention_heads: 32, num_key_value_heads: null, hidden_act: 'silu', max_position_embeddings: 2048,
      rms_norm_eps: 1e-6, tie_word_embeddings: false, head_dim: null, rope_parameters: null, rope_theta: 10000,
      rope_scaling: null },
    inert: ['attention_dropout'],
    defaultOnly: { attention_bias: false, mlp_bias: false, pretraining_tp: 1 },
  },
  Qwen2ForCausalLM: {
    modelType: 'qwen2',
    implemented: { vocab_size: 151936, hidden_size: 4096, intermediate_size: 22016, num_hidden_layers: 32,
      num_attention_heads: 32, num_key_value_heads: 32, hidden_act: 'silu', max_position_embeddings: 32768,
      rms_norm_eps: 1e-6, tie_word_embeddings: false, rope_parameters: null, rope_theta: 10000, rope_scaling: null,
      ...QWEN_WINDOWS },
    inert: ['attention_dropout'],
    defaultOnly: {},
  },
  Qwen3ForCausalLM: {
    modelType: 'qwen3',
    implemented: { vocab_size: 151936, hidden_size: 4096, intermediate_size: 22016, num_hidden_layers: 32,
      num_attention_heads: 32, num_key_value_heads: 32, head_dim: 128, hidden_act: 'silu', max_position_embeddings: 32768,
      rms_norm_eps: 1e-6, tie_word_embeddings: false, rope_parameters: null, rope_theta: 10000, rope_scaling: null,
      ...QWEN_WINDOWS },
    inert: ['attention_dropout'],
    defaultOnly: { attention_bias: false },
  },
  MistralForCausalLM: {
    modelType: 'mistral',
    implemented: { vocab_size: 32000, hidden_size: 4096, intermediate_size: 14336, num_hidden_layers: 32,
      num_attention_heads: 32, num_key_value_heads: 8, head_dim: null, hidden_act: 'silu', max_position_embeddings: 131072,
      rms_norm_eps: 1e-6, tie_word_embeddings: false, rope_parameters: null, rope_theta: 10000, rope_scaling: null,
      sliding_window: 4096 },
    inert: ['attention_dropout'],
    defaultOnly: {},
  },
  SmolLM3ForCausalLM: {
    modelType: 'smollm3',
    implemented: { vocab_size: 128256, hidden_size: 2048, intermediate_size: 11008, num_hidden_layers: 36,
      num_attention_heads: 16, num_key_value_heads: 4, hidden_act: 'silu', max_position_embeddings: 32768,
      rms_norm_eps: 1e-6, tie_word_embeddings: true, rope_parameters: null, rope_theta: 2000000, rope_scaling: null,
      no_rope_layers: null, no_rope_layer_interval: 4, ...QWEN_WINDOWS, sliding_window: null },
    inert: ['attention_dropout'],
    defaultOnly: { attention_bias: false, mlp_bias: false, pretraining_tp: 1 },
  },
  Olmo2ForCausalLM: {
    modelType: 'olmo2',
    implemented: { vocab_size: 50304, hidden_size: 4096, intermediate_size: 11008, num_hidden_layers: 32,
      num_attention_heads: 32, num_key_value_heads: null, hidden_act: 'silu', max_position_embeddings: 2048,
      rms_norm_eps: 1e-5, tie_word_embeddings: false, rope_parameters: null, rope_theta: 10000, rope_scaling: null },
    inert: ['attention_dropout'],
    defaultOnly: { attention_bias: false },
  },
  Gemma2ForCausalLM: {
    modelType: 'gemma2',
    implemented: { vocab_size: 256000, hidden_size: 2304, intermediate_size: 9216, num_hidden_layers: 26,
      num_attention_heads: 8, num_key_value_heads: 4, head_dim: 256, hidden_activation: 'gelu_pytorch_tanh',
      max_position_embeddings: 8192, rms_norm_eps: 1e-6, tie_word_embeddings: true, rope_parameters: null,
      rope_theta: 10000, rope_scaling: null, query_pre_attn_scalar: 256, sliding_window: 4096, layer_types: null,
      attn_logit_softcapping: 50, final_logit_softcapping: 30 },
    // Gemma2MLP reads hidden_activation; the checkpoints also carry an unused hidden_act.
    inert: ['attention_dropout', 'cache_implementation', 'hidden_act'],
    defaultOnly: { attention_bias: false, use_bidirectional_attention: false },
  },
  Gemma3ForCausalLM: {
    modelType: 'gemma3_text',
    implemented: { vocab_size: 262208, hidden_size: 2304, intermediate_size: 9216, num_hidden_layers: 26,
      num_attention_heads: 8, num_key_value_heads: 4, head_dim: 256, hidden_activation: 'gelu_pytorch_tanh',
      max_position_embeddings: 131072, rms_norm_eps: 1e-6, tie_word_embeddings: true, rope_parameters: null,
      rope_theta: 1000000, rope_scaling: null, rope_local_base_freq: 10000, query_pre_attn_scalar: 256,
      sliding_window: 4096, layer_types: null, sliding_window_pattern: 6, _sliding_window_pattern: 6 },
    inert: ['attention_dropout', 'cache_implementation'],
    defaultOnly: { attention_bias: false, attn_logit_softcapping: null, final_logit_softcapping: null,
      use_bidirectional_attention: false },
  },
  Phi3ForCausalLM: {
    modelType: 'phi3',
    implemented: { vocab_size: 32064, hidden_size: 3072, intermediate_size: 8192, num_hidden_layers: 32,
      num_attention_heads: 32, num_key_value_heads: null, hidden_act: 'silu', max_position_embeddings: 4096,
      rms_norm_eps: 1e-5, tie_word_embeddings: false, rope_parameters: null, rope_theta: 10000, rope_scaling: null,
      partial_rotary_factor: 1, sliding_window: null },
    // original_max_position_embeddings is read only by rope_type longrope, which is refused.
    inert: ['attention_dropout', 'resid_pdrop', 'embd_pdrop', 'original_max_position_embeddings'],
    defaultOnly: {},
  },
};
export const ARCHITECTURES = Object.keys(CONFIG_KEYS);
