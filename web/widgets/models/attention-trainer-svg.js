// The SVG export of <attention-trainer>: the loss and accuracy curves and every head's attention on
// the probe sequence as one vector document, laid out as the widget lays them out on screen.
import { SERIES_COLORS } from '../figures/charts.js';
import { figureLegend } from '../figures/display-list.js';
import { paintSvg } from '../figures/paint-svg.js';
import { heatmapPanel, jsonSafe, svgDocument, svgFigure, xyPanel } from '../figures/svg.js';

/** The gap between the charts, the layers and the tiles, CSS px (on screen and in the figure). */
export const TILE_GAP = 10;

/** Each head tile's width for an available width W and H heads. */
export function tileWidth(W, H) {
  return Math.min(260, Math.max(150, Math.floor(W / Math.min(H, 4)) - 12));
}

/**
 * A trainer's curves and heads as an SVG document (vector curves and cells; one colour bar for all
 * heads; settings and step in the <metadata>). `m` is the snapshot drawn, `chartOpts` the two
 * charts' drawXY options, `views` the head tiles' HeatmapViews (layer by layer); `host` what the
 * <attention-trainer> tells about itself: width (its content width), theme (themeOf), settings,
 * ablated (the ablated heads) and state. Options: width (CSS px, default the widget's), fontSize
 * (px, default 12).
 */
export function trainerSVG(m, chartOpts, views, options, host) {
  const W = Math.max(240, Number(options.width) || host.width);
  const fontSize = Math.max(6, Math.min(48, Number(options.fontSize) || 12));
  const theme = host.theme;
  const fig = svgFigure(theme, fontSize / 12);
  // The two charts side by side where both fit (as the auto-fit grid puts them), else stacked.
  const cw = Math.max(240, Math.floor((W - TILE_GAP) / 2));
  const side = 2 * cw + TILE_GAP <= W;
  let y = 0,
    width = 0;
  chartOpts.forEach((o, k) => {
    const x = side ? k * (cw + TILE_GAP) : 0;
    const c = xyPanel(fig, { ...o, width: cw }, { x, y: side ? 0 : y, colors: SERIES_COLORS });
    width = Math.max(width, x + c.w);
    if (!side) y += c.h + TILE_GAP;
    else y = Math.max(y, c.h + TILE_GAP);
  });
  const { T } = m.probe,
    H = m.heads,
    L = m.attention.length;
  const tileW = tileWidth(W, H);
  const panels = [];
  for (let layer = 0; layer < L; layer++) {
    let x = 0,
      rowH = 0;
    for (let head = 0; head < H; head++) {
      const view = views[layer * H + head];
      const w = view.layout(tileW, fontSize / 12).w;
      if (x > 0 && x + w > W) {
        y += rowH + TILE_GAP;
        x = 0;
        rowH = 0;
      }
      const p = heatmapPanel(fig, view, { x, y, width: tileW });
      panels.push({ layer, head, rows: T, cols: T, cells: p.cells });
      width = Math.max(width, x + p.w);
      rowH = Math.max(rowH, p.h);
      x += p.w + TILE_GAP;
    }
    y += rowH + TILE_GAP;
  }
  // One colour bar: every head shares the scale 0…1.
  const domain = { lo: 0, hi: 1, map: 'viridis' };
  const legend = figureLegend(y, width, domain, theme, fontSize / 12);
  fig.body.push(paintSvg(fig, legend.items));
  y += legend.h;
  const state = jsonSafe({
    widget: 'attention-trainer',
    settings: host.settings,
    step: m.step,
    loss: m.loss,
    tokenAccuracy: m.tokenAccuracy,
    sequenceAccuracy: m.sequenceAccuracy,
    ablated: host.ablated,
    probe: m.probe,
    domain,
    options: { width: W, fontSize },
    panels,
    theme: theme.dark ? 'dark' : 'light',
    widgetState: host.state,
  });
  return svgDocument(fig, {
    width: Math.max(width, 1),
    height: y,
    state,
    title: `Training at step ${m.step}: loss, accuracy and the attention of ${L} layers × ${H} heads`,
  });
}
