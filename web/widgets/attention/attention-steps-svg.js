// The SVG figure of <attention-steps>: the shown step's matrix as one heatmap panel.
import { heatmapPanel, jsonSafe, svgDocument, svgFigure } from '../figures/svg.js';

/**
 * The figure of the step `c` (the element's `current`) drawn by the HeatmapView `view`, as an SVG
 * document (see the element's toSVG for the options). `host`: what the element tells about itself —
 * width (its content width), theme (themeOf), config (null for a trace set from JS) and state (its
 * svgState()).
 */
export function stepsSVG(c, view, options, host) {
  const W = Math.max(160, Number(options.width) || host.width);
  const fontSize = Math.max(6, Math.min(48, Number(options.fontSize) || 12));
  const theme = host.theme;
  const fig = svgFigure(theme, fontSize / 12);
  const p = heatmapPanel(fig, view, { x: 0, y: 0, width: W });
  const cfg = host.config;
  const state = jsonSafe({
    widget: 'attention-steps',
    step: c.name,
    index: c.index,
    head: c.hasHead ? c.head : null,
    title: c.title,
    rowLabels: c.rowLabels,
    colLabels: c.colLabels,
    domain: view.opts.domain,
    config: cfg ? { ...cfg, stateDict: cfg.stateDict ? '(set from JS, not stored)' : null } : null,
    options: { width: W, fontSize },
    theme: theme.dark ? 'dark' : 'light',
    panels: [{ rows: c.rows, cols: c.cols, cells: p.cells }],
    widgetState: host.state,
  });
  return svgDocument(fig, {
    width: p.w,
    height: p.h,
    state,
    title: `${c.title}${c.hasHead ? `, head ${c.head}` : ''}: ${c.rows} by ${c.cols}`,
  });
}
