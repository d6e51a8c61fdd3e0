// The tiles of <attention-heatmap> (one per head, or the mean): how many go on a row, on screen and
// in its SVG figure, and the figure itself.
import { PART_GAP } from '../figures/display-list.js';
import { barsPanel, heatmapPanel, jsonSafe, svgDocument, svgFigure } from '../figures/svg.js';

const TILE_MIN = 210;
/** The gap between tiles, CSS px. */
export const GAP = 14;

// As many tiles per row as fit in W, then balanced (4 heads on a 3-wide row → 2 + 2, not 3 + 1).
// Tiles want room for their labels and cells of ≥ 18 px while the sentence is short.
export function tileLayout(W, n, Tk) {
  const tileMin = Math.max(TILE_MIN, Math.min(480, 80 + Tk * 18));
  const fit = n === 1 ? 1 : Math.max(1, Math.min(n, Math.floor((W + GAP) / (tileMin + GAP))));
  const perRow = Math.ceil(n / Math.ceil(n / fit));
  return {
    perRow,
    tileW: Math.floor((W - GAP * (perRow - 1)) / perRow),
    colW: (W - GAP * (perRow - 1)) / perRow,
  };
}

/**
 * The figure of an <attention-heatmap> (see its toSVG for the options): `sh` is what it shows (its
 * `shown`), `views` the HeatmapView of each tile, `barsOpts` the query row's drawBars options (or
 * null), `host` what it tells about itself: width (its content width), theme (themeOf), domain (the
 * tiles' colour scale), config (null with external data), query, palette, signed (the tiles are
 * signed weights) and state.
 */
export function heatmapSVG(sh, views, barsOpts, options, host) {
  const W = Math.max(160, Number(options.width) || host.width);
  const fontSize = Math.max(6, Math.min(48, Number(options.fontSize) || 12));
  const theme = host.theme;
  const fig = svgFigure(theme, fontSize / 12);
  const n = sh.matrices.length,
    Tk = sh.matrices[0].cols;
  const { perRow, tileW, colW } = tileLayout(W, n, Tk);
  let y = 0,
    width = 0;
  const panels = [];
  for (let start = 0; start < n; start += perRow) {
    let rowH = 0;
    for (let k = start; k < Math.min(n, start + perRow); k++) {
      const x = (k - start) * (colW + GAP);
      const p = heatmapPanel(fig, views[k], { x, y, width: tileW });
      panels.push({
        head: sh.matrices[k].head,
        rows: sh.matrices[k].rows,
        cols: sh.matrices[k].cols,
        cells: p.cells,
      });
      rowH = Math.max(rowH, p.h);
      width = Math.max(width, x + p.w);
    }
    y += rowH + (start + perRow < n ? GAP : 0);
  }
  if (options.bars && barsOpts) {
    const b = barsPanel(fig, { ...barsOpts, width: Math.min(W, 900) }, { x: 0, y: y + PART_GAP });
    y += PART_GAP + b.h;
    width = Math.max(width, b.w);
  }
  const view = sh.view === 'all' ? 'all heads' : sh.view === 'mean' ? 'mean over heads' : `head ${sh.view}`;
  const c = host.config;
  const state = jsonSafe({
    widget: 'attention-heatmap',
    view: sh.view,
    query: host.query,
    palette: host.palette,
    queryTokens: sh.queryTokens,
    keyTokens: sh.keyTokens,
    domain: host.domain,
    config: c ? { ...c, stateDict: c.stateDict ? '(set from JS, not stored)' : null } : null,
    options: { width: W, fontSize, bars: Boolean(options.bars) },
    panels,
    theme: theme.dark ? 'dark' : 'light',
    widgetState: host.state,
  });
  return svgDocument(fig, {
    width: Math.max(width, 1),
    height: Math.max(y, 1),
    state,
    title: `${host.signed ? 'Signed weights (of the values, not probabilities)' : 'Attention weights'}, ${view}: ${sh.matrices[0].rows} query by ${Tk} key tokens`,
  });
}
