// The config.json key tables (the rule: no silent wrong answers). Each key is implemented (changes
// what we compute; the value is transformers' class default, used when config.json omits the key),
// inert (cannot change the forward), or inert only at its default; pretrained/config.js refuses every
// other key. The keys every architecture shares are here; each architecture's own table is in its
// registry module (src/js/architectures/). Written by hand from transformers 5.17's configuration
// classes: this project's machines have no `transformers`. scripts/config-keys-doc.mjs renders them
// into docs/checkpoints.md.
import { ARCHITECTURES, CONFIG_KEYS } from '../architectures/index.js';

export { ARCHITECTURES, CONFIG_KEYS };

// PreTrainedConfig's own attributes and the generation/serving bookkeeping configs carry: none can
// change a forward pass (dropouts are off at inference, token ids only name tokens).
export const INERT_COMMON = [
  '_name_or_path',
  '_commit_hash',
  '_attn_implementation',
  '_attn_implementation_autoset',
  'architectures',
  'model_type',
  'transformers_version',
  'dtype',
  'torch_dtype',
  'use_bfloat16',
  'use_cache',
  'initializer_range',
  'return_dict',
  'output_hidden_states',
  'output_attentions',
  'torchscript',
  'tf_legacy_loss',
  'pruned_heads',
  'chunk_size_feed_forward',
  'is_decoder',
  'id2label',
  'label2id',
  'num_labels',
  'problem_type',
  'finetuning_task',
  'tokenizer_class',
  'prefix',
  'task_specific_params',
  'bos_token_id',
  'eos_token_id',
  'pad_token_id',
  'sep_token_id',
  'decoder_start_token_id',
  'max_length',
  'min_length',
  'do_sample',
  'early_stopping',
  'num_beams',
  'num_beam_groups',
  'diversity_penalty',
  'temperature',
  'top_k',
  'top_p',
  'typical_p',
  'repetition_penalty',
  'length_penalty',
  'no_repeat_ngram_size',
  'encoder_no_repeat_ngram_size',
  'bad_words_ids',
  'num_return_sequences',
  'output_scores',
  'return_dict_in_generate',
  'forced_bos_token_id',
  'forced_eos_token_id',
  'remove_invalid_values',
  'exponential_decay_length_penalty',
  'suppress_tokens',
  'begin_suppress_tokens',
];
export const DEFAULT_ONLY_COMMON = {
  is_encoder_decoder: false,
  add_cross_attention: false,
  tie_encoder_decoder: false,
  cross_attention_hidden_size: null,
};
// Keys that can never be read as a plain forward: refused whatever their value.
export const REFUSED = {
  quantization_config: 'quantized checkpoints are not supported (load an F32, F16 or BF16 checkpoint)',
  auto_map: 'the checkpoint needs custom modeling code (auto_map), which this library cannot run',
};
