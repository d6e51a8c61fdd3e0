// The display list (display-list.js) of <token-saliency>'s figure: the one description its canvas
// (paint-canvas.js: on screen, PNG, print) and its SVG figure (paint-svg.js) paint. The text flows in
// rows, one box per token shaded by its score (signed scores on the diverging map with 0 neutral,
// non-negative ones — the gradient's norm — on the sequential one), the token's text inside in the
// ink that reads on its colour; the box of the focused token (keyboard) is outlined in the accent
// colour. Under the text: the colour bar of the scores' domain with its ends written beside it.
import { colorOf, inkOn } from '../figures/colormap.js';
import { fitText, formatNumber } from '../figures/draw-util.js';

/** Box height, padding inside a box, gap between boxes and rows, the figure's padding, a box's widest (px). */
export const BOX_H = 24,
  BOX_PAD = 6,
  GAP = 4,
  PAD = 8,
  MAX_BOX = 160;

/** The colour domain of the scores: symmetric and diverging when any is negative, else [0, max] sequential. */
export function scoreDomain(scores, signed) {
  let m = 0;
  for (const v of scores) if (Number.isFinite(v)) m = Math.max(m, Math.abs(v));
  m = Math.max(m, 1e-12);
  return signed ? { lo: -m, hi: m, map: 'diverging' } : { lo: 0, hi: m, map: 'viridis' };
}

/**
 * Where each token's box goes in a figure `width` px wide: boxes [{ x, y, w, text }] (text already
 * shortened to fit), the legend's top and the figure's height. ctx measures the texts (its font is
 * left at theirs).
 */
export function saliencyGeometry(ctx, theme, tokens, width) {
  ctx.font = `13px ${theme.mono}`;
  const boxes = [];
  let x = PAD,
    y = PAD;
  const maxW = Math.max(40, Math.min(MAX_BOX, width - 2 * PAD));
  for (const token of tokens) {
    const text = fitText(ctx, token === '' ? '∅' : token, maxW - 2 * BOX_PAD);
    const w = Math.min(maxW, Math.ceil(ctx.measureText(text).width) + 2 * BOX_PAD);
    if (x > PAD && x + w > width - PAD) {
      x = PAD;
      y += BOX_H + GAP;
    }
    boxes.push({ x, y, w, text });
    x += w + GAP;
  }
  const legendTop = y + BOX_H + 10;
  return { width, boxes, legendTop, height: legendTop + 12 + 16 + PAD };
}

/** The items of the token boxes (g: saliencyGeometry) for the scores in the domain; focus: a token's index or −1. */
export function saliencyList(theme, g, scores, domain, focus = -1) {
  const { lo, hi, map } = domain;
  const items = [];
  g.boxes.forEach((b, i) => {
    const v = scores[i];
    items.push(
      { kind: 'rect', x: b.x, y: b.y, w: b.w, h: BOX_H, fill: colorOf(map, v, lo, hi) },
      {
        kind: 'text',
        x: b.x + b.w / 2,
        y: b.y + BOX_H / 2,
        text: b.text,
        size: 13,
        anchor: 'middle',
        baseline: 'middle',
        fill: inkOn(map, v, lo, hi),
        mono: true,
      },
    );
  });
  const f = g.boxes[focus];
  if (f)
    items.push({
      kind: 'rect',
      x: f.x - 1.5,
      y: f.y - 1.5,
      w: f.w + 3,
      h: BOX_H + 3,
      stroke: theme.accent,
      width: 2,
    });
  items.push(...legendList(theme, g, domain));
  return items;
}

/** The colour bar of the domain under the text, its low end written left of it and its high end right. */
function legendList(theme, g, { lo, hi, map }) {
  const w = Math.min(200, g.width - 2 * PAD - 120),
    x = PAD + 56,
    y = g.legendTop;
  const label = (tx, text, anchor) => ({
    kind: 'text',
    x: tx,
    y: y + 6,
    text,
    size: 11,
    anchor,
    baseline: 'middle',
    fill: theme.muted,
    mono: true,
  });
  return [
    { kind: 'ramp', x, y, w, h: 12, map },
    label(x - 4, formatNumber(lo, 3), 'end'),
    label(x + w + 4, formatNumber(hi, 3), 'start'),
  ];
}
