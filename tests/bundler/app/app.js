// A user's app: imports the package by name, lets init() pick a build (or the one ?variant= names),
// runs a forward, then loads the widgets (after init, so they share its module). The page reports
// into #result as JSON for tests/browser/bundler.test.mjs. `wasmBaseUrl` is set by the esbuild
// entry only (esbuild does not copy `new URL(…, import.meta.url)` assets; see docs/bundlers.md).
import { init, kernelVariant, scaledDotProductAttention, seededNormal, threadCount } from 'attention-wasm';
import { fnv1a } from './fnv1a.js'; // the bits of a larger result, compared with Node's

export async function run(initOptions = {}) {
  const out = document.getElementById('result');
  try {
    const variant = new URLSearchParams(location.search).get('variant') ?? 'auto';
    await init({ ...initOptions, variant });
    const q = seededNormal([1, 5, 8], 1);
    const { output, weights } = scaledDotProductAttention(q, q, q, { causal: true });
    // Large enough to be split over the pool where the page runs threaded.
    const big = seededNormal([4, 8, 128, 32], 2);
    const bigHash = fnv1a(scaledDotProductAttention(big, big, big, { causal: true }).output.data);
    await import('attention-wasm/widgets');
    out.textContent = JSON.stringify({
      ok: true,
      kernel: kernelVariant(),
      q: Array.from(q.data),
      output: Array.from(output.data),
      weights: Array.from(weights.data),
      threads: threadCount(),
      isolated: globalThis.crossOriginIsolated === true,
      hardware: navigator.hardwareConcurrency,
      bigHash,
    });
  } catch (error) {
    out.textContent = JSON.stringify({ ok: false, error: String(error) });
  }
}
