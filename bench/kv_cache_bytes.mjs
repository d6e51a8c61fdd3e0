// `node bench/kv_cache_bytes.mjs [shape…] [--tokens 2048,8192]`: the bytes of a model's KV caches in
// each cache type (generate's kvCache: 'f32' | 'f16') at the given prompt lengths, for the real
// checkpoints' shapes of bench/checkpoint_shapes.mjs (default Qwen3-0.6B). Computed from what the
// library reads of the config.json: model.layers' kinds, kvHeads, headDim and kvFrom (layerSummary);
// layers whose keys and values are another's (kvFrom) or that keep a recurrent state (conv, DeltaNet)
// hold no KV cache. tests/js/kv-cache-f16.test.mjs holds the core's own count (createCaches' kvBytes)
// to the same formula on the tiny fixtures.
import { coreConfig } from '../src/js/pretrained/config.js';
import { layerSummary } from '../src/js/pretrained/layers.js';
import { SHAPES } from './checkpoint_shapes.mjs';

/** Bytes of the keys and values of every layer of `layers` (model.layers) for `tokens` tokens of `batch` sequences. */
export function kvCacheBytes(layers, tokens, kvCache, batch = 1) {
  let values = 0;
  layers.forEach((s, l) => {
    if (s.kind === 'attention' && s.kvFrom === l) values += 2 * s.kvHeads * s.headDim;
  });
  return values * tokens * batch * (kvCache === 'f16' ? 2 : 4);
}

function main(argv) {
  const at = argv.indexOf('--tokens');
  const tokens = at >= 0 ? argv[at + 1].split(',').map(Number) : [2048, 8192];
  const names = argv.filter((a, i) => !a.startsWith('--') && (at < 0 || i !== at + 1));
  const gib = (bytes) => (bytes / 2 ** 30).toFixed(3);
  console.log('| shape | tokens | f32 cache (GiB) | f16 cache (GiB) |\n| --- | ---: | ---: | ---: |');
  for (const name of names.length ? names : ['qwen3-0.6b']) {
    const { core } = coreConfig(SHAPES[name].config);
    const layers = Array.from({ length: core.layers }, (_, l) => layerSummary(core, l)); // as model.layers
    for (const t of tokens)
      console.log(
        `| ${name} | ${t} | ${gib(kvCacheBytes(layers, t, 'f32'))} | ${gib(kvCacheBytes(layers, t, 'f16'))} |`,
      );
  }
}

if (import.meta.url === `file://${process.argv[1]}`) main(process.argv.slice(2));
