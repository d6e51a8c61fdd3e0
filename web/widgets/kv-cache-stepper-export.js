// The exports of <kv-cache-stepper>: the stepped outputs as CSV, the state as JSON, the views as SVG.
import { withState } from './base-element.js';
import { jsonText, toNested } from './export.js';
import { themeOf } from './draw-util.js';
import { canvasLayoutSVG, heatmapPart } from './svg-layout.js';
import { headKeys } from './kv-cache-stepper-view.js';

/** Every stepped output row beside the same row of one full causal forward, and their max |difference|. */
export function kvCSV(el) {
  const s = el._state;
  if (!s) return '';
  const full = el.fullOutput(),
    out = el.outputs;
  const lines = [
    [
      'position',
      ...Array.from({ length: s.E }, (_, i) => `stepped_${i}`),
      ...Array.from({ length: s.E }, (_, i) => `full_${i}`),
      'max_abs_difference',
    ].join(','),
  ];
  for (let t = 0; t < el.length; t++) {
    const a = out.subarray(t * s.E, (t + 1) * s.E),
      b = full.subarray(t * s.E, (t + 1) * s.E);
    let d = 0;
    for (let i = 0; i < s.E; i++) d = Math.max(d, Math.abs(a[i] - b[i]));
    lines.push([t, ...a, ...b, d].join(','));
  }
  return lines.join('\n') + '\n';
}

/** The module's settings, x, every output so far, the shown head's keys and the last weights, as JSON. */
export function kvJSON(el) {
  const s = el._state;
  if (!s) return jsonText(null);
  const t = el.length;
  return jsonText(
    withState(el, {
      kind: 'kv-cache',
      embedDim: s.E,
      heads: s.H,
      kvHeads: s.Hkv,
      headDim: s.dk,
      rope: s.rope,
      sequenceLength: s.T,
      seed: s.seed,
      length: t,
      x: toNested(s.x, s.T, s.E),
      outputs: toNested(el.outputs, t, s.E),
      fullOutput: toNested(el.fullOutput(), t, s.E),
      maxDifference: el.maxDifference,
      kvHead: el.kvHead,
      keys: t ? toNested(headKeys(el, el.kvHead), t, s.dk) : [],
      weights: t ? toNested(el._steps.at(-1).weights, s.H, t) : [],
    }),
  );
}

/**
 * x, the shown head's cached keys and the new query's weights of `el` as an SVG document, laid out as
 * on screen (vector cells, one path per colour level; the state in <metadata>).
 */
export function kvSVG(el, options = {}) {
  const s = el._state;
  if (!s || !el._xView.opts) throw new Error('toSVG: nothing is drawn yet (wait for the ready event)');
  const t = el.length;
  const parts = [heatmapPart(el._xView, 'The input sequence x')];
  if (t)
    parts.push(
      heatmapPart(el._keysView, 'The cached keys'),
      heatmapPart(el._wView, 'The new query’s weights over every cached key'),
    );
  return canvasLayoutSVG(el, themeOf(el), parts, {
    width: options.width,
    fontSize: options.fontSize,
    title: `KV cache after ${t} of ${s.T} tokens: ${s.H} query heads over ${s.Hkv} key/value heads, d_k = ${s.dk}${s.rope ? ', RoPE' : ''}`,
    state: {
      widget: 'kv-cache-stepper',
      embedDim: s.E,
      heads: s.H,
      kvHeads: s.Hkv,
      rope: s.rope,
      sequenceLength: s.T,
      seed: s.seed,
      length: t,
      kvHead: el.kvHead,
      maxDifference: el.maxDifference,
      widgetState: el.state,
    },
  });
}
