// The exports of <mask-editor>: the shown mask and weights as CSV, JSON and an SVG figure.
import { withState } from '../base-element.js';
import { jsonText, toNested } from '../export.js';
import { themeOf } from '../figures/draw-util.js';
import { colorOf } from '../figures/colormap.js';
import { paintSvg } from '../figures/paint-svg.js';
import { canvasLayoutSVG, heatmapPart } from '../figures/svg-layout.js';
import { ALLOWED_DOMAIN } from './mask-editor-data.js';

/** The shown mask s as CSV: one line per cell (row, its token, column, its token, may attend, weight). */
export function maskCSV(s) {
  if (!s) return '';
  const q = (t) => {
    let x = String(t);
    if (/^[=+\-@\t\r]/.test(x)) x = `'${x}`;
    return /[",\n\r]/.test(x) ? `"${x.replace(/"/g, '""')}"` : x;
  };
  const lines = ['row,row_label,col,col_label,may_attend,weight'];
  for (let i = 0; i < s.rows; i++)
    for (let j = 0; j < s.cols; j++) {
      lines.push(
        [
          i,
          q(s.queryTokens[i]),
          j,
          q(s.keyTokens[j]),
          s.allowed[i * s.cols + j],
          String(Math.fround(s.weights[i * s.cols + j])),
        ].join(','),
      );
    }
  return lines.join('\n') + '\n';
}

/** The shown mask and weights s as JSON, with the state of `el` (the <mask-editor>). */
export function maskJSON(s, el) {
  if (!s) return jsonText(null);
  return jsonText(
    withState(el, {
      kind: 'attention-mask',
      mode: s.mode,
      toggles: s.toggles,
      head: s.head,
      queryTokens: s.queryTokens,
      keyTokens: s.keyTokens,
      mayAttend: Array.from({ length: s.rows }, (_, i) =>
        Array.from(s.allowed.subarray(i * s.cols, (i + 1) * s.cols)),
      ),
      weights: toNested(s.weights, s.rows, s.cols),
    }),
  );
}

/**
 * The mask's key under its panel (the page shows it as HTML under the canvas): a "may attend"
 * swatch and a hatched masked swatch, 12 px each, with their words, from (x, y).
 */
export function maskKeyList(theme, x, y, s = 1) {
  const word = (wx, text) => ({
    kind: 'text',
    x: wx,
    y: y + 6,
    text,
    size: 12 * s,
    baseline: 'middle',
    fill: theme.muted,
  });
  const maskedFill = `rgb(${theme.maskedRgb.slice(0, 3).join(',')})`;
  return [
    { kind: 'rect', x, y, w: 12, h: 12, fill: colorOf('viridis', 1, ALLOWED_DOMAIN.lo, ALLOWED_DOMAIN.hi) },
    word(x + 17, 'may attend (1)'),
    { kind: 'rect', x: x + 120, y, w: 12, h: 12, fill: maskedFill },
    { kind: 'lines', segs: [x + 121, y + 11, x + 131, y + 1], stroke: theme.hatch, bare: true },
    word(x + 137, 'masked (0 → score −∞)'),
  ];
}

/**
 * The shown mask and weights s, drawn by the HeatmapViews maskView and weightView of `el` (the
 * <mask-editor>: its canvases are laid out, its state goes in), as an SVG document laid out as on
 * screen with their headings and the mask's key (vector cells, one path per colour level; the state
 * in <metadata>).
 */
export function maskSVG(s, { maskView, weightView }, el, options = {}) {
  if (!s || !maskView.opts) throw new Error('toSVG: nothing is drawn yet (wait for the ready event)');
  const mask = heatmapPart(maskView, 'Mask M — rows: queries, columns: keys');
  const draw = mask.draw;
  mask.draw = (fig, x, y) => {
    const p = draw(fig, x, y),
      theme = fig.theme,
      ly = y + p.h + 6;
    fig.body.push(paintSvg(fig, maskKeyList(theme, x, ly, fig.s)));
    return { ...p, h: p.h + 24 };
  };
  const masked = s.allowed.reduce((n, v) => n + (v ? 0 : 1), 0);
  return canvasLayoutSVG(
    el,
    themeOf(el),
    [
      mask,
      heatmapPart(
        weightView,
        `Softmax weights after masking (${s.head === 'mean' ? 'mean of heads' : `head ${s.head}`})`,
      ),
    ],
    {
      width: options.width,
      fontSize: options.fontSize,
      title: `Attention mask (${s.mode}, ${masked} of ${s.rows * s.cols} cells masked) and the softmax weights after masking`,
      state: {
        widget: 'mask-editor',
        mode: s.mode,
        toggles: s.toggles,
        head: s.head,
        queryTokens: s.queryTokens,
        keyTokens: s.keyTokens,
        widgetState: el.state,
      },
    },
  );
}
