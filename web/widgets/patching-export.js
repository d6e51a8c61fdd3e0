// The exports of <patching-view>: the patching result as CSV, JSON and an SVG figure.
import { withState } from './base-element.js';
import { jsonText, toNested } from './export.js';
import { themeOf } from './draw-util.js';
import { screenLayoutSVG } from './svg-layout.js';

/** The grid as CSV: layer, head (or position), the share restored. */
export function patchingCSV(s) {
  if (!s) return '';
  const col = s.component === 'head' ? 'head' : 'position';
  const lines = [`layer,${col},restored`];
  for (let i = 0; i < s.result.length; i++)
    lines.push(`${Math.floor(i / s.cols)},${i % s.cols},${s.result[i]}`);
  return `${lines.join('\n')}\n`;
}

/** The inputs and the grid of `el` as JSON, with the widget's state. */
export function patchingJSON(el) {
  const s = el._shown;
  if (!s) return jsonText(withState(el, {}));
  return jsonText(
    withState(el, {
      kind: 'activation-patching',
      component: s.component,
      clean: s.clean,
      corrupted: s.corrupted,
      position: s.position,
      token: s.token,
      against: s.against,
      cleanDiff: s.cleanDiff,
      corruptedDiff: s.corruptedDiff,
      result: toNested(s.result, s.L, s.cols),
    }),
  );
}

/** The result grid of `el` as an SVG document (vector cells; the inputs and state in <metadata>). */
export function patchingSVG(el, options = {}) {
  const s = el._shown;
  if (!s) throw new Error('toSVG: nothing is drawn yet (press Run first)');
  return screenLayoutSVG(themeOf(el), [el._view], {
    width: options.width,
    fontSize: options.fontSize,
    title: `Activation patching (${s.component}): ${s.L} layers × ${s.cols}`,
    state: {
      widget: 'patching-view',
      component: s.component,
      clean: s.clean,
      corrupted: s.corrupted,
      position: s.position,
      token: s.token,
      against: s.against,
      cleanDiff: s.cleanDiff,
      corruptedDiff: s.corruptedDiff,
      result: s.result,
      widgetState: el.state,
    },
  });
}
