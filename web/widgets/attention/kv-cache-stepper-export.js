// The exports of <kv-cache-stepper>: the stepped outputs as CSV, the state as JSON, the views as SVG
// and PNG. Functions of what they are given: the session (kv-cache-stepper-state.js; null while the
// settings make no module), the K/V head shown, the view's heatmaps, and the widget for its theme,
// its shadow root's canvases and its public `state`.
import { withState } from '../base-element.js';
import { composeCanvases, jsonText, toNested } from '../export.js';
import { themeOf } from '../figures/draw-util.js';
import { canvasLayoutSVG, heatmapPart } from '../figures/svg-layout.js';

/** Every stepped output row beside the same row of one full causal forward, and their max |difference|. */
export function kvCSV(session) {
  if (!session) return '';
  const s = session.config;
  const full = session.fullOutput(),
    out = session.outputs;
  const lines = [
    [
      'position',
      ...Array.from({ length: s.E }, (_, i) => `stepped_${i}`),
      ...Array.from({ length: s.E }, (_, i) => `full_${i}`),
      'max_abs_difference',
    ].join(','),
  ];
  for (let t = 0; t < session.length; t++) {
    const a = out.subarray(t * s.E, (t + 1) * s.E),
      b = full.subarray(t * s.E, (t + 1) * s.E);
    let d = 0;
    for (let i = 0; i < s.E; i++) d = Math.max(d, Math.abs(a[i] - b[i]));
    lines.push([t, ...a, ...b, d].join(','));
  }
  return lines.join('\n') + '\n';
}

/**
 * The module's settings, x, every output so far, K/V head kvHead's keys and the last weights, as
 * JSON, with the widget `host`'s state.
 */
export function kvJSON(host, session, kvHead) {
  if (!session) return jsonText(null);
  const s = session.config,
    t = session.length;
  return jsonText(
    withState(host, {
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
      outputs: toNested(session.outputs, t, s.E),
      fullOutput: toNested(session.fullOutput(), t, s.E),
      maxDifference: session.maxDifference,
      kvHead,
      keys: t ? toNested(session.headKeys(kvHead), t, s.dk) : [],
      weights: t ? toNested(session.lastStep.weights, s.H, t) : [],
    }),
  );
}

/**
 * x, the shown head's cached keys and the new query's weights (the view's `heatmaps`) as an SVG
 * document, laid out as on screen (vector cells, one path per colour level; the state in <metadata>).
 */
export function kvSVG(host, session, { heatmaps, kvHead }, options = {}) {
  if (!session || !heatmaps?.x.opts)
    throw new Error('toSVG: nothing is drawn yet (wait for the ready event)');
  const s = session.config,
    t = session.length;
  const parts = [heatmapPart(heatmaps.x, 'The input sequence x')];
  if (t)
    parts.push(
      heatmapPart(heatmaps.keys, 'The cached keys'),
      heatmapPart(heatmaps.weights, 'The new query’s weights over every cached key'),
    );
  return canvasLayoutSVG(host, themeOf(host), parts, {
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
      kvHead,
      maxDifference: session.maxDifference,
      widgetState: host.state,
    },
  });
}

/** The PNG's canvas: x, and the cache's two panels once a token is cached, placed as on screen. */
export function kvPNGCanvas(host, heatmaps, cached) {
  const canvases = [heatmaps.x.canvas, ...(cached ? [heatmaps.keys.canvas, heatmaps.weights.canvas] : [])];
  const o = canvases[0].getBoundingClientRect();
  return composeCanvases(
    canvases.map((c) => {
      const r = c.getBoundingClientRect();
      return { canvas: c, x: r.left - o.left, y: r.top - o.top };
    }),
    themeOf(host).bgSolid,
  );
}
