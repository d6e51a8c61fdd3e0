// The SVG figure of an <attention-model-view>: its layers' tiles as on screen (a layer has its own
// number of tiles: its heads, one for a conv layer), one colour bar for the softmax layers (0…1), and
// each signed layer's own bar drawn in its first tile; its size checked against a limit.
import { themeOf } from '../figures/draw-util.js';
import { heatmapPanel, jsonSafe, svgDocument, svgFigure } from '../figures/svg.js';
import { figureLegend } from '../figures/display-list.js';
import { paintSvg } from '../figures/paint-svg.js';

/** The largest model-view SVG toSVG() writes (bytes); over it, it throws and offers one layer. */
export const SVG_MAX_BYTES = 8 * 1024 * 1024;
/** The gap between tiles and between layers, CSS px (the widget's grid uses it too). */
export const TILE_GAP = 8;

/**
 * The figure of `el` (an <attention-model-view>) showing `sh` (its `shown`) in `tiles` ({ layer,
 * head, view } each); options as its toSVG. Each tile's width comes from el.constructor.tileWidth
 * (W, the layer's heads).
 */
export function modelViewSVG(el, sh, tiles, options) {
  const W = Math.max(160, Number(options.width) || el.contentWidth);
  const fontSize = Math.max(6, Math.min(48, Number(options.fontSize) || 12));
  const s = fontSize / 12;
  const layers = svgLayers(options.layer, sh.L);
  const theme = themeOf(el);
  const fig = svgFigure(theme, s);
  const panels = [];
  let y = 0,
    width = 0;
  for (const layer of layers) {
    // The layer's name (12 px, muted, 4 px above), then its tiles wrapped as the flex row wraps them.
    fig.body.push(
      paintSvg(fig, [
        { kind: 'text', x: 0, y: y + 4 + 12 * s, text: sh.names[layer], size: 12 * s, fill: theme.muted },
      ]),
    );
    y += 4 + Math.ceil(15 * s) + TILE_GAP;
    const tileW = el.constructor.tileWidth(W, sh.heads[layer]);
    let x = 0,
      rowH = 0;
    for (const { view, head } of tiles.filter((t) => t.layer === layer)) {
      const w = view.layout(tileW, s).w;
      if (x > 0 && x + w > W) {
        y += rowH + TILE_GAP;
        x = 0;
        rowH = 0;
      }
      const p = heatmapPanel(fig, view, { x, y, width: tileW });
      panels.push({ layer, head, kind: sh.kinds[layer], rows: sh.T, cols: sh.T, cells: p.cells });
      width = Math.max(width, x + p.w);
      rowH = Math.max(rowH, p.h);
      x += p.w + TILE_GAP;
    }
    y += rowH + TILE_GAP;
  }
  // One colour bar for the softmax layers: every such tile shares the scale 0…1.
  const domain = { lo: 0, hi: 1, map: el.palette };
  if (layers.some((l) => !sh.signed[l])) {
    const legend = figureLegend(y, width, domain, theme, s);
    fig.body.push(paintSvg(fig, legend.items));
    y += legend.h;
  }
  const state = jsonSafe({
    widget: 'attention-model-view',
    palette: el.palette,
    diverging: el.diverging,
    ids: sh.ids,
    tokens: sh.tokens,
    L: sh.L,
    H: sh.H,
    heads: sh.heads,
    kinds: sh.kinds,
    T: sh.T,
    layers,
    domain,
    options: { width: W, fontSize, ...(layers.length === 1 && sh.L > 1 ? { layer: layers[0] } : {}) },
    panels,
    theme: theme.dark ? 'dark' : 'light',
    widgetState: el.state,
  });
  const heads = new Set(layers.map((l) => sh.heads[l]));
  const svg = svgDocument(fig, {
    width: Math.max(width, 240),
    height: y,
    state,
    title: `Attention weights of ${layers.length === 1 ? `layer ${layers[0]}` : `all ${sh.L} layers`} × ${heads.size === 1 ? [...heads][0] : 'their'} heads on ${sh.T} tokens`,
  });
  checkSvgSize(svg, Number(options.maxBytes) || SVG_MAX_BYTES, layers, sh.L);
  return svg;
}

/** The layers toSVG draws: all L, or the one of option `layer` (an integer in 0…L−1). */
function svgLayers(layer, L) {
  if (layer === undefined || layer === null) return [...Array(L).keys()];
  const l = Number(layer);
  if (!Number.isInteger(l) || l < 0 || l >= L)
    throw new RangeError(`toSVG: layer must be an integer in 0…${L - 1}, not ${layer}`);
  return [l];
}

/**
 * Throws an Error (code 'SVG_TOO_LARGE', its size in `bytes`) when the figure of `layers` (of L) is
 * over `max` bytes of UTF-8, offering one layer (or the PNG export when it is one already).
 */
function checkSvgSize(svg, max, layers, L) {
  // Counted in UTF-16 units first: UTF-8 is at most 3 bytes per unit, so short figures skip encoding.
  const bytes = svg.length > max / 3 ? new TextEncoder().encode(svg).length : svg.length;
  if (bytes <= max) return;
  const mb = (b) => `${(b / 1048576).toFixed(1)} MB`;
  const e = new Error(
    `The ${layers.length === 1 ? `layer ${layers[0]}` : 'model view'} as SVG would be ${mb(bytes)}, over the limit of ${mb(max)}: ` +
      (layers.length > 1
        ? `export one layer instead, toSVG({ layer: n }) with n in 0…${L - 1}.`
        : 'use the PNG export.'),
  );
  e.code = 'SVG_TOO_LARGE';
  e.bytes = bytes;
  throw e;
}
