// The exports of <token-saliency>: the scores as CSV and JSON, and the figure as an SVG document
// painted from the same display list as the canvas (token-saliency-list.js).
import { withState } from '../base-element.js';
import { jsonText } from '../export.js';
import { themeOf } from '../figures/draw-util.js';
import { paintSvg } from '../figures/paint-svg.js';
import { jsonSafe, svgDocument, svgFigure } from '../figures/svg.js';
import { scratchContext } from '../figures/svg-core.js';
import { saliencyGeometry, saliencyList } from './token-saliency-list.js';

/** A CSV field: quoted when it holds a comma, a quote or a line break (a token's text may). */
const field = (t) => (/[",\n\r]/.test(t) ? `"${t.replace(/"/g, '""')}"` : t);

/** The scores as CSV: position, id, token, score. */
export function saliencyCSV(s) {
  if (!s) return '';
  const rows = s.ids.map((id, t) => `${t},${id},${field(s.tokens[t] ?? '')},${s.scores[t]}`);
  return `position,id,token,score\n${rows.join('\n')}\n`;
}

/** What a run used and gave (the JSON export's and the SVG metadata's common part). */
function described(s) {
  return {
    ids: s.ids,
    tokens: s.tokens,
    position: s.position,
    token: s.token,
    against: s.against,
    metric: s.metric,
    method: s.method,
    steps: s.steps,
    value: s.value,
    delta: s.delta,
    scores: Array.from(s.scores),
  };
}

/** The inputs and the scores of `el` as JSON, with the widget's state. */
export function saliencyJSON(el) {
  const s = el.shown;
  if (!s) return jsonText(withState(el, {}));
  return jsonText(withState(el, jsonSafe({ kind: 'token-saliency', ...described(s) })));
}

/**
 * The figure of `el` as an SVG document: the same display list as its `canvas` (the token `focus`
 * outlined, −1: none), as wide as the canvas unless options.width says; the run in <metadata>.
 */
export function saliencySVG(el, canvas, focus, options = {}) {
  const s = el.shown;
  if (!s) throw new Error('toSVG: nothing is drawn yet (set a model and ids, wait for saliency-done)');
  const W = options.width ?? (parseFloat(canvas.style.width) || 600);
  const theme = themeOf(el),
    fig = svgFigure(theme, 1);
  const g = saliencyGeometry(scratchContext(), theme, s.tokens, W);
  fig.body.push(paintSvg(fig, saliencyList(theme, g, s.scores, s.domain, focus)));
  return svgDocument(fig, {
    width: W,
    height: g.height,
    title: `Token saliency (${s.method}) of ${s.tokens.length} tokens at position ${s.position}`,
    state: jsonSafe({ widget: 'token-saliency', ...described(s), widgetState: el.state }),
  });
}
