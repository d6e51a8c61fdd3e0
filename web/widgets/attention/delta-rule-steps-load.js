// <delta-rule-steps>' own model: a Qwen3.5 checkpoint folder at a URL (config.json, model.safetensors
// and, when present, tokenizer.json + tokenizer_config.json), run once on the widget's text for one
// DeltaNet layer's hooks (its read o too, to show beside the walk's) and its effective attention. The model is disposed before this returns.
import { attn, whenReady } from '../runtime.js';
import { deltaHooks } from './delta-rule-data.js';

async function get(url, as, optional = false) {
  const res = await fetch(url);
  if (!res.ok) {
    if (optional && res.status === 404) return null;
    throw new Error(`${url}: HTTP ${res.status}`);
  }
  return as === 'json' ? res.json() : new Uint8Array(await res.arrayBuffer());
}

/** Space-separated token ids (a folder without a tokenizer), refused when not ids of the vocabulary. */
function idsOf(text, vocab) {
  const ids = text.trim().split(/\s+/).map(Number);
  if (!ids.length || ids.some((x) => !Number.isInteger(x) || x < 0 || x >= vocab))
    throw new Error(
      `this folder has no tokenizer.json: text must be token ids 0 … ${vocab - 1} separated by spaces`,
    );
  return ids;
}

/**
 * { activations, layer, tokens, map, layout: 'grouped', eps } of folder `src` on `text`; `layer` −1:
 * the first DeltaNet layer. A layer that is not a DeltaNet layer, or a model without one, is refused.
 */
export async function loadDeltaData(src, text, layer) {
  const base = src.endsWith('/') ? src : `${src}/`;
  const [config, weights, tokenizer, tokenizerConfig] = await Promise.all([
    get(`${base}config.json`, 'json'),
    get(`${base}model.safetensors`),
    get(`${base}tokenizer.json`, 'json', true),
    get(`${base}tokenizer_config.json`, 'json', true),
  ]);
  await whenReady();
  const model = await attn.loadPretrained({
    config,
    weights,
    ...(tokenizer ? { tokenizer, tokenizerConfig: tokenizerConfig ?? undefined } : {}),
  });
  try {
    const kinds = model.layers.map((l) => l.kind);
    const l = layer < 0 ? kinds.indexOf('delta') : layer;
    if (l < 0) throw new Error('this model has no gated DeltaNet layer');
    if (kinds[l] !== 'delta')
      throw new Error(`layer ${l} is ${kinds[l] ?? 'not a layer'}, not a DeltaNet layer`);
    const ids = tokenizer ? Array.from(model.encode(text)) : idsOf(text, model.vocabSize);
    if (!ids.length) throw new Error('there are no tokens: give some text');
    const { attention } = model.forward([ids], { attention: true });
    const { activations } = model.run([ids], {
      capture: [...deltaHooks(l), `blocks.${l}.linear_attn.hook_o`],
    });
    const tokens = tokenizer ? model.tokenStrings(ids) : ids.map(String);
    const eps = (config.text_config ?? config).rms_norm_eps ?? 1e-6;
    return { activations, layer: l, tokens, map: attention[l].data, layout: 'grouped', eps };
  } finally {
    model.dispose();
  }
}
