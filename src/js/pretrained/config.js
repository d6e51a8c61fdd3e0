// config.json → the core's PretrainedConfig, under the rule "no silent wrong answers": every key of a
// supported architecture's config must be in its table (its registry module in src/js/architectures/,
// pretrained/keys.js for the shared keys) as implemented, inert or
// inert only at its default; any other key, a default-only key at another value, a rope_type we do
// not implement, quantization_config, auto_map and any unknown architecture is INVALID_ARGUMENT
// naming the key and the value. Both config layouts are read: transformers 4 (rope_theta,
// rope_scaling at the top level) and transformers 5 (rope_parameters); when both appear they must agree.
import { AttentionError } from '../errors.js';
import { describe } from '../options.js';
import { REFUSED_ARCHITECTURES, familyOf } from '../architectures/index.js';
import { WRAPPERS, wrapperOf, wrappedNames } from '../architectures/wrappers.js';
import { ropeFrequencies, ropeSettings as settingsOf, sameValue } from '../architectures/rope.js';
import { ARCHITECTURES, CONFIG_KEYS, DEFAULT_ONLY_COMMON, INERT_COMMON, REFUSED } from './keys.js';

export { ARCHITECTURES, CONFIG_KEYS, DEFAULT_ONLY_COMMON, INERT_COMMON, REFUSED, ropeFrequencies };

/**
 * The RoPE settings of a config in either layout (architectures/rope.js): { type, theta, params,
 * partial }, rope_theta defaulting to the architecture's class default.
 */
export function ropeSettings(config, architecture) {
  return settingsOf(config, architecture, CONFIG_KEYS[architecture].implemented.rope_theta);
}

const invalid = (message) => new AttentionError('INVALID_ARGUMENT', message);

// Every key of `config` is in the architecture's table; default-only keys hold their default.
function checkKeys(config, architecture) {
  const t = CONFIG_KEYS[architecture];
  for (const [key, value] of Object.entries(config)) {
    if (Object.hasOwn(REFUSED, key)) throw invalid(`config.json: ${key}: ${REFUSED[key]}`);
    if (Object.hasOwn(t.implemented, key) || t.inert.includes(key) || INERT_COMMON.includes(key)) continue;
    const defaults = Object.hasOwn(t.defaultOnly, key)
      ? t.defaultOnly
      : Object.hasOwn(DEFAULT_ONLY_COMMON, key)
        ? DEFAULT_ONLY_COMMON
        : null;
    if (!defaults)
      throw invalid(`config.json: key "${key}" (${describe(value)}) is not implemented for ${architecture}`);
    // null for a default of false is false, as in transformers (Python's None is falsy): Gemma 2's
    // config class writes use_bidirectional_attention: null.
    if (!sameValue(value, defaults[key]) && !(defaults[key] === false && value === null)) {
      throw invalid(
        `config.json: ${key} = ${JSON.stringify(value)} is not implemented for ${architecture} (only ${JSON.stringify(defaults[key])})`,
      );
    }
  }
}

// A config value or its class default, checked as a positive integer / number > 0: what a family's
// core() reads its config through.
function reader(config, architecture) {
  const defaults = CONFIG_KEYS[architecture].implemented;
  const get = (key) => config[key] ?? defaults[key];
  return {
    get,
    int(key, fallback = get(key)) {
      const v = config[key] ?? fallback;
      if (!Number.isSafeInteger(v) || v < 1)
        throw invalid(`config.json: ${key} must be a positive integer, got ${describe(v)}`);
      return v;
    },
    num(key) {
      const v = get(key);
      if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0)
        throw invalid(`config.json: ${key} must be a number > 0, got ${describe(v)}`);
      return v;
    },
  };
}

// The architecture a config names: model_type (what transformers' Auto classes read) and
// architectures[0] must name the same supported model.
function architectureOf(config) {
  const list = config.architectures;
  const architecture = Array.isArray(list) && list.length === 1 ? list[0] : undefined;
  if (Object.hasOwn(REFUSED_ARCHITECTURES, architecture ?? ''))
    throw invalid(`config.json: architecture ${architecture}: ${REFUSED_ARCHITECTURES[architecture]}`);
  if (!Object.hasOwn(CONFIG_KEYS, architecture)) {
    throw invalid(
      `config.json: architecture ${describe(Array.isArray(list) && list.length === 1 ? architecture : list)} is not supported; supported: ${ARCHITECTURES.join(', ')} (and the text model of ${WRAPPERS.map((w) => w.architecture).join(', ')})`,
    );
  }
  const want = CONFIG_KEYS[architecture].modelType;
  if (config.model_type !== undefined && config.model_type !== want) {
    throw invalid(
      `config.json: model_type ${describe(config.model_type)} does not match architecture ${architecture} (model_type "${want}")`,
    );
  }
  return architecture;
}

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

// The text model's config.json of a composition class (architectures/wrappers.js): text_config with
// its family's architecture, every key of the composition classed; what it ignores, said.
function unwrap(config, wrapper) {
  const where = `config.json (${wrapper.architecture})`;
  if (config.model_type !== undefined && config.model_type !== wrapper.modelType)
    throw invalid(`${where}: model_type ${describe(config.model_type)} is not "${wrapper.modelType}"`);
  const text = config.text_config;
  if (!isObject(text)) throw invalid(`${where}: text_config must be the text model's config object`);
  // text_config without a model_type: the composition's one text model, where it has one
  const types = Object.keys(wrapper.text);
  const architecture = wrapper.text[text.model_type ?? (types.length === 1 ? types[0] : undefined)];
  if (architecture === undefined) {
    throw invalid(
      `${where}: a text model of model_type ${describe(text.model_type)} is not supported; supported: ${Object.keys(wrapper.text).join(', ')}`,
    );
  }
  const ignored = [];
  for (const [key, value] of Object.entries(config)) {
    if (Object.hasOwn(REFUSED, key)) throw invalid(`config.json: ${key}: ${REFUSED[key]}`);
    if (Object.hasOwn(wrapper.towers, key)) {
      if (value !== null) ignored.push(`${wrapper.towers[key]} (${key})`); // null: no such tower
    } else if (!['text_config', 'tie_word_embeddings'].includes(key) && !wrapper.inert.includes(key))
      if (!INERT_COMMON.includes(key))
        throw invalid(`${where}: key "${key}" (${describe(value)}) is not implemented`);
  }
  // The text model's tie_word_embeddings: text_config's, else the composition's, else the family's
  // default; both given and different is refused (which one ties the head is not implemented).
  const outer = config.tie_word_embeddings,
    inner = text.tie_word_embeddings;
  if (outer !== undefined && inner !== undefined && outer !== inner) {
    throw invalid(
      `${where}: tie_word_embeddings is ${outer} but ${inner} in text_config: which one ties the head is not implemented`,
    );
  }
  const tie = inner ?? outer ?? CONFIG_KEYS[architecture].implemented.tie_word_embeddings;
  return { text: { ...text, architectures: [architecture], tie_word_embeddings: tie }, ignored };
}

/**
 * The core's config of a parsed config.json; anything not implemented is INVALID_ARGUMENT naming it.
 * { architecture (the text model's), core, family, ignored (what a composition's file holds that is
 * not run: its towers), names(name) (the names a file may give a tensor of the family) }.
 */
export function coreConfig(config) {
  if (config === null || typeof config !== 'object' || Array.isArray(config))
    throw invalid(`config must be the parsed config.json object, got ${describe(config)}`);
  const list = config.architectures;
  const wrapper = Array.isArray(list) && list.length === 1 ? wrapperOf(list[0]) : undefined;
  if (wrapper) {
    const { text, ignored } = unwrap(config, wrapper);
    return { ...coreConfig(text), ignored, names: wrappedNames };
  }
  const architecture = architectureOf(config);
  const family = familyOf(architecture);
  family.refuse?.(config); // a variant refused by its name before its keys are classed one by one
  checkKeys(config, architecture);
  const r = reader(config, architecture);
  return { architecture, core: family.core(config, r, family), family, ignored: [], names: (n) => [n] };
}
