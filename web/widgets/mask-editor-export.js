// The exports of <mask-editor>: the shown mask and weights as CSV, JSON and an SVG figure.
import { withState } from './base-element.js';
import { jsonText, toNested } from './export.js';
import { themeOf } from './draw-util.js';
import { colorOf } from './colormap.js';
import { num, paint, svgText } from './svg.js';
import { canvasLayoutSVG, heatmapPart } from './svg-layout.js';
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

/** The shown mask and weights of `el` as JSON, with the widget's state. */
export function maskJSON(el) {
  const s = el._shown;
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
 * The mask and the weights of `el` as an SVG document, laid out as on screen with their headings and
 * the mask's key (vector cells, one path per colour level; the state in <metadata>).
 */
export function maskSVG(el, options = {}) {
  const s = el._shown;
  if (!s || !el._maskView.opts) throw new Error('toSVG: nothing is drawn yet (wait for the ready event)');
  const mask = heatmapPart(el._maskView, 'Mask M — rows: queries, columns: keys');
  const draw = mask.draw;
  mask.draw = (fig, x, y) => {
    const p = draw(fig, x, y),
      theme = fig.theme,
      ly = y + p.h + 6;
    fig.body.push(
      `<rect x="${num(x)}" y="${num(ly)}" width="12" height="12" ${paint('fill', colorOf('viridis', 1, ALLOWED_DOMAIN.lo, ALLOWED_DOMAIN.hi))}/>`,
      svgText(fig, x + 17, ly + 6, 'may attend (1)', { baseline: 'middle', fill: theme.muted }),
      `<rect x="${num(x + 120)}" y="${num(ly)}" width="12" height="12" ${paint('fill', `rgb(${theme.maskedRgb.slice(0, 3).join(',')})`)}/>` +
        `<path d="M${num(x + 121)} ${num(ly + 11)}L${num(x + 131)} ${num(ly + 1)}" ${paint('stroke', theme.hatch)}/>`,
      svgText(fig, x + 137, ly + 6, 'masked (0 → score −∞)', { baseline: 'middle', fill: theme.muted }),
    );
    return { ...p, h: p.h + 24 };
  };
  const masked = s.allowed.reduce((n, v) => n + (v ? 0 : 1), 0);
  return canvasLayoutSVG(
    el,
    themeOf(el),
    [
      mask,
      heatmapPart(
        el._weightView,
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
