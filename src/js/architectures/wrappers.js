// Multimodal checkpoints whose text model is a registered family: transformers'
// *ForConditionalGeneration classes, a config with a `text_config` (the text model's own config.json
// keys) beside the towers' configs (vision, audio) and a few keys of the composition. The library runs
// the text model alone: its config is `text_config` read by its family (every key checked there), the
// towers are ignored and said so (PretrainedModel.ignored), and each key of the composition is
// classed here as a tower's, inert (it only concerns the towers' inputs) or refused.
//
// Tensor names: a text model's tensor "model.X" is "model.language_model.X" in transformers 5's
// files and "language_model.model.X" in transformers 4's ("lm_head.weight": itself, or
// "language_model.lm_head.weight"); the towers' tensors are never read.

/**
 * The composition classes: { architecture, modelType, text (text_config's model_type → the family's
 * architecture), towers (config key → what it configures), inert (keys of the composition that cannot
 * change the text model's forward))}.
 */
export const WRAPPERS = Object.freeze([
  {
    architecture: 'Mistral3ForConditionalGeneration',
    modelType: 'mistral3',
    text: { ministral3: 'Ministral3ForCausalLM', mistral: 'MistralForCausalLM' },
    towers: { vision_config: 'the vision tower (Pixtral) and its projector' },
    inert: [
      'image_token_index',
      'image_token_id',
      'projector_hidden_act',
      'vision_feature_layer',
      'multimodal_projector_bias',
      'spatial_merge_size',
    ],
  },
  {
    architecture: 'Gemma4ForConditionalGeneration',
    modelType: 'gemma4',
    text: { gemma4_text: 'Gemma4ForCausalLM' },
    towers: {
      vision_config: 'the vision tower and its embedder',
      audio_config: 'the audio tower (conformer) and its embedder',
    },
    // the ids of the image, video and audio placeholders and their delimiters
    inert: [
      'boi_token_id',
      'eoi_token_id',
      'image_token_id',
      'video_token_id',
      'boa_token_id',
      'eoa_token_index',
      'audio_token_id',
    ],
  },
  {
    architecture: 'Qwen3_5ForConditionalGeneration',
    modelType: 'qwen3_5',
    text: { qwen3_5_text: 'Qwen3_5ForCausalLM' },
    towers: { vision_config: 'the vision tower (model.visual)' },
    // the ids of the image and video placeholders and their delimiters
    inert: ['image_token_id', 'video_token_id', 'vision_start_token_id', 'vision_end_token_id'],
  },
]);

/** Tensors a composition's files hold that the text model never reads: the towers', the MTP head's. */
export const IGNORED_TENSORS = Object.freeze([
  /^model\.visual\./,
  /^model\.vision_tower\./,
  /^vision_tower\./,
  /^model\.audio_tower\./,
  /^model\.embed_vision\./,
  /^model\.embed_audio\./,
  /^model\.multi_modal_projector\./,
  /^multi_modal_projector\./,
  /^mtp\./,
]);

const byArchitecture = new Map(WRAPPERS.map((w) => [w.architecture, w]));

/** The composition class of a config.json's architectures[0], or undefined. */
export function wrapperOf(architecture) {
  return byArchitecture.get(architecture);
}

/** The names a composition's file may give a text model's tensor `name`. */
export function wrappedNames(name) {
  const inner = name.startsWith('model.') ? `model.language_model.${name.slice('model.'.length)}` : name;
  return [inner, `language_model.${name}`];
}
