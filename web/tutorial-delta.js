// The tutorial's "Attention without softmax" section: the seeded (untrained) Qwen3.5-shaped fixture
// tests/golden/pretrained/qwen3_5-tiny, loaded through the library, gives its first DeltaNet layer's
// effective attention to an <attention-heatmap signed> (the <delta-rule-steps> beside it loads the same
// folder by its src). The prose's live numbers come from the same forward.
import { attn, ready } from './widgets.js';

const FOLDER = '/tests/golden/pretrained/qwen3_5-tiny/';
const TEXT = 'Hello world, the sea there';
const LAYER = 0;

async function fetchFile(name, as) {
  const res = await fetch(FOLDER + name);
  if (!res.ok) throw new Error(`${FOLDER}${name}: HTTP ${res.status}`);
  return as === 'json' ? res.json() : new Uint8Array(await res.arrayBuffer());
}

/** The model's layer-LAYER map and tokens on TEXT (the model disposed after). */
async function runFixture() {
  const [config, weights, tokenizer, tokenizerConfig] = await Promise.all([
    fetchFile('config.json', 'json'),
    fetchFile('model.safetensors'),
    fetchFile('tokenizer.json', 'json'),
    fetchFile('tokenizer_config.json', 'json'),
  ]);
  await ready;
  const model = await attn.loadPretrained({ config, weights, tokenizer, tokenizerConfig });
  try {
    const ids = Array.from(model.encode(TEXT));
    const { attention } = model.forward([ids], { attention: true });
    return {
      ids,
      tokens: model.tokenStrings(ids),
      map: attention[LAYER],
      layer: model.layers[LAYER],
    };
  } finally {
    model.dispose();
  }
}

/** Fills the section's two widgets and its live numbers (`bind(name, text)`); a failure is said in the prose. */
export async function showDeltaSection(bind) {
  const heatmap = document.querySelector('#delta-map'),
    steps = document.querySelector('#delta-steps');
  if (!heatmap || !steps) return;
  // A clicked cell of the map walks its head at its query token in the step view.
  heatmap.addEventListener('cell-click', ({ detail }) => {
    if (!Number.isInteger(detail.head)) return;
    steps.head = detail.head;
    steps.token = detail.row;
  });
  let r;
  try {
    r = await runFixture();
  } catch (e) {
    bind('delta-summary', `The tiny model could not be loaded: ${e.message}`);
    return;
  }
  const T = r.ids.length,
    H = r.map.shape[1];
  heatmap.data = { weights: r.map.data, shape: [H, T, T], queryTokens: r.tokens, keyTokens: r.tokens };
  let negative = 0,
    causal = 0,
    lo = 0;
  for (let h = 0; h < H; h++)
    for (let t = 0; t < T; t++)
      for (let s = 0; s <= t; s++) {
        const a = r.map.data[(h * T + t) * T + s];
        causal++;
        if (a < 0) negative++;
        lo = Math.min(lo, a);
      }
  bind(
    'delta-summary',
    `${H} value heads on ${r.layer.kvHeads} key heads, ${T} tokens: ${negative} of the ${causal} weights ` +
      `on or below the diagonal are negative (the most negative ${lo.toFixed(3).replace('-', '−')}).`,
  );
}
