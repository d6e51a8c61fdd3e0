// The SVG figure of <attention-steps>: the shown step's matrix as one heatmap panel.
import { themeOf } from './draw-util.js';
import { heatmapPanel, jsonSafe, svgDocument, svgFigure } from './svg.js';

/** el.toSVG(options) of an <attention-steps> (see its toSVG). */
export function stepsSVG(el, options) {
  const c = el._current;
  if (!c || !el._view.opts) throw new Error('toSVG: nothing is drawn yet (wait for the ready event)');
  const W = Math.max(160, Number(options.width) || el.contentWidth);
  const fontSize = Math.max(6, Math.min(48, Number(options.fontSize) || 12));
  const theme = themeOf(el);
  const fig = svgFigure(theme, fontSize / 12);
  const p = heatmapPanel(fig, el._view, { x: 0, y: 0, width: W });
  const cfg = el._trace ? null : el.config;
  const state = jsonSafe({
    widget: 'attention-steps',
    step: c.name,
    index: c.index,
    head: c.hasHead ? c.head : null,
    title: c.title,
    rowLabels: c.rowLabels,
    colLabels: c.colLabels,
    domain: el._view.opts.domain,
    config: cfg ? { ...cfg, stateDict: cfg.stateDict ? '(set from JS, not stored)' : null } : null,
    options: { width: W, fontSize },
    theme: theme.dark ? 'dark' : 'light',
    panels: [{ rows: c.rows, cols: c.cols, cells: p.cells }],
    widgetState: el.svgState(),
  });
  return svgDocument(fig, {
    width: p.w,
    height: p.h,
    state,
    title: `${c.title}${c.hasHead ? `, head ${c.head}` : ''}: ${c.rows} by ${c.cols}`,
  });
}
