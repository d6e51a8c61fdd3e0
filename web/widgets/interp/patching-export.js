// The exports of <patching-view>: the patching result as CSV, JSON and an SVG figure, and the PNG's
// picture; with attribution patching shown, its values and its agreement with exact patching (the
// correlation) in each. Functions of the run shown `s` (null: none yet), the widget `el` (its theme
// and state) and its PatchingFigure (the grids and the scatter as drawn).
import { withState } from '../base-element.js';
import { composeCanvases, jsonText, toNested } from '../export.js';
import { formatNumber, themeOf } from '../figures/draw-util.js';
import { SERIES_COLORS } from '../figures/charts.js';
import { canvasLayoutSVG, heatmapPart, screenLayoutSVG, xyPart } from '../figures/svg-layout.js';

/**
 * The grid as CSV: layer, head (or position), the share restored; with attribution beside exact a
 * fourth column, `attribution`; attribution alone in place of `restored`.
 */
export function patchingCSV(s) {
  if (!s) return '';
  const col = s.component === 'head' ? 'head' : 'position';
  const both = Boolean(s.exact && s.attribution);
  const last = s.exact || !s.attribution ? 'restored' : 'attribution';
  const lines = [`layer,${col},${last}${both ? ',attribution' : ''}`];
  for (let i = 0; i < s.result.length; i++)
    lines.push(`${Math.floor(i / s.cols)},${i % s.cols},${s.result[i]}${both ? `,${s.attribution[i]}` : ''}`);
  return `${lines.join('\n')}\n`;
}

/** What the exports add for attribution patching: the method, its grid and the correlation. */
function attributionPart(s, nested) {
  if (!s.attribution) return {};
  return {
    method: s.method,
    attribution: nested ? toNested(s.attribution, s.L, s.cols) : s.attribution,
    correlation: s.correlation,
  };
}

/** The inputs of a shown run, as the JSON and the SVG's metadata both record them. */
const inputsOf = (s) => ({
  component: s.component,
  clean: s.clean,
  corrupted: s.corrupted,
  position: s.position,
  token: s.token,
  against: s.against,
  cleanDiff: s.cleanDiff,
  corruptedDiff: s.corruptedDiff,
});

/** The inputs and the grid of shown `s` as JSON, with the state of the widget `el`. */
export function patchingJSON(el, s) {
  if (!s) return jsonText(withState(el, {}));
  return jsonText(
    withState(el, {
      kind: s.exact || !s.attribution ? 'activation-patching' : 'attribution-patching',
      ...inputsOf(s),
      result: toNested(s.result, s.L, s.cols),
      ...attributionPart(s, true),
    }),
  );
}

/** The result grid of shown `s` as an SVG document (vector cells; the inputs and state in <metadata>). */
export function patchingSVG(el, s, figure, options = {}) {
  if (!s) throw new Error('toSVG: nothing is drawn yet (press Run first)');
  const state = {
    widget: 'patching-view',
    ...inputsOf(s),
    result: s.result,
    ...attributionPart(s, false),
    widgetState: el.state,
  };
  const o = { width: options.width, fontSize: options.fontSize, state };
  if (!(s.exact && s.attribution))
    return screenLayoutSVG(themeOf(el), [figure.grid], {
      ...o,
      title: `${s.exact ? 'Activation' : 'Attribution'} patching (${s.component}): ${s.L} layers × ${s.cols}`,
    });
  // Attribution beside exact: the two grids and the scatter, where the page lays them out.
  const scatter = figure.scatter;
  const parts = [
    heatmapPart(figure.grid, 'Exact (activation patching)'),
    heatmapPart(figure.attributionGrid, 'Attribution patching'),
    xyPart(
      scatter.canvas,
      scatter.options,
      SERIES_COLORS,
      `Agreement: r = ${formatNumber(s.correlation, 3)}`,
    ),
  ];
  return canvasLayoutSVG(el, themeOf(el), parts, {
    ...o,
    title: `Activation and attribution patching (${s.component}): ${s.L} layers × ${s.cols}`,
  });
}

/** The PNG's picture: the grid; with attribution beside exact, both grids and the scatter as laid out. */
export function patchingPNG(el, s, figure) {
  const grid = figure.grid.canvas;
  if (!(s?.exact && s.attribution)) return grid;
  const origin = grid.getBoundingClientRect();
  const at = (canvas) => {
    const r = canvas.getBoundingClientRect();
    return { canvas, x: r.left - origin.left, y: r.top - origin.top };
  };
  return composeCanvases(
    [grid, figure.attributionGrid.canvas, figure.scatter.canvas].map(at),
    themeOf(el).bgSolid,
  );
}
