// SVG figures of the widgets whose panels the page lays out (flex, grid): each panel drawn by a panel
// function of svg.js, or by the widget's own shapes, where it sits on screen. Options of every such
// figure (docs/widgets.md, "Figures"):
//   fontSize  the text size in px of the finished figure (default 12, as on screen); panels are
//             laid out again for it, and a row of panels that grows or shrinks moves the rows below;
//   width     the finished figure's width in px (default: as on screen); the drawing is scaled to it
//             as vectors (the viewBox keeps the layout), and fontSize still holds in the result.
import { barsPanel, heatmapPanel, jsonSafe, svgDocument, svgFigure, xyPanel } from './svg.js';
import { paintSvg } from './paint-svg.js';

const FONT = 12; // the screen's text size, the figures' default

/** A figure option as a number in [lo, hi], or null when absent or not a number. */
function option(value, lo, hi) {
  const v = Number(value);
  return value == null || !Number.isFinite(v) || v <= 0 ? null : Math.min(hi, Math.max(lo, v));
}

/**
 * Places `items` ({ rect: DOMRect on screen, heading?, draw(fig, x, y) → { w?, h?, panel? } }) as on
 * screen, row by row: items whose screen tops fall within one row share its y; the next row starts
 * where the tallest drawn item of the previous one ends plus the gap the screen had. Returns the
 * figure document with `state.panels` (each item's origin, size and panel description) and `theme`.
 */
function layout(theme, items, { title, state, width, fontSize }) {
  const left = Math.min(...items.map((i) => i.rect.left)),
    right = Math.max(...items.map((i) => i.rect.right));
  const outWidth = option(width, 60, 10000);
  const text = option(fontSize, 4, 96) ?? FONT;
  // Drawn at font scale s, then scaled by outWidth / (drawn width): the finished text is
  // 12·s·outWidth / drawn width, so s is solved for (the drawn width depends a little on s).
  let s = (text / FONT) * (outWidth ? Math.max(1, right - left) / outWidth : 1);
  let d = draw(theme, items, left, s);
  for (let i = 0; outWidth && i < 4; i++) {
    const next = (text / FONT) * (d.width / outWidth);
    if (Math.abs(next - s) <= 1e-4 * s) break;
    s = next;
    d = draw(theme, items, left, s);
  }
  return svgDocument(d.fig, {
    width: d.width,
    height: d.height,
    title,
    outWidth,
    state: jsonSafe({
      ...state,
      panels: d.panels.map((p, i) => ({ ...(items[i].meta || {}), ...p })),
      theme: theme.dark ? 'dark' : 'light',
      ...(outWidth ? { width: outWidth } : {}),
      ...(fontSize != null ? { fontSize: text } : {}),
    }),
  });
}

/** A part's heading: 13 px × s, semibold, 8 px × s above the part's top (x, y). */
const headingItem = (theme, s, x, y, text) => ({
  kind: 'text',
  x,
  y: y - 8 * s,
  text,
  size: 13 * s,
  fill: theme.fg,
  weight: 650,
});

// The items drawn into a new figure at font scale s (see layout): its size and each item's panel.
function draw(theme, items, left, s) {
  const fig = svgFigure(theme, s);
  const head = items.some((i) => i.heading) ? Math.ceil(22 * s) : 0;
  const order = items
    .map((item, index) => ({ item, index }))
    .sort((a, b) => a.item.rect.top - b.item.rect.top || a.item.rect.left - b.item.rect.left);
  const panels = new Array(items.length);
  let width = 1,
    height = 1,
    rowTop = null,
    rowBottom = -Infinity,
    rowY = head,
    drawnBottom = head,
    screenBottom = null;
  for (const { item, index } of order) {
    const r = item.rect;
    if (rowTop === null || r.top >= rowBottom) {
      // a new row, below the previous one
      const gap = screenBottom === null ? 0 : Math.max(0, r.top - screenBottom);
      rowY = rowTop === null ? head : drawnBottom + gap;
      rowTop = r.top;
      screenBottom = rowBottom = r.bottom;
    }
    rowBottom = Math.max(rowBottom, r.bottom);
    screenBottom = Math.max(screenBottom, r.bottom);
    const x = Math.round((r.left - left) * 100) / 100,
      y = Math.round((rowY + r.top - rowTop) * 100) / 100;
    if (item.heading) fig.body.push(paintSvg(fig, [headingItem(theme, s, x, y, item.heading)]));
    const out = item.draw(fig, x, y) || {};
    const w = out.w ?? r.width,
      h = out.h ?? r.height;
    panels[index] = {
      x,
      y,
      w: Math.round(w * 100) / 100,
      h: Math.round(h * 100) / 100,
      ...(out.panel || {}),
    };
    drawnBottom = Math.max(drawnBottom, y + h);
    width = Math.max(width, x + w);
    height = Math.max(height, y + h);
  }
  return { fig, panels, width, height };
}

/**
 * A figure of HeatmapViews placed where they are on screen, for the widgets whose panels the page
 * lays out (flex/grid): the picture their PNG export composes. `state` gains `panels` (each one's
 * title, size and cell area).
 * @param {object} theme  themeOf(host)
 * @param {object[]} views  HeatmapViews, drawn
 * @param {{ title: string, state: object, width?: number, fontSize?: number }} o
 */
export function screenLayoutSVG(theme, views, { title, state, width, fontSize }) {
  const items = views.map((v) => ({
    rect: v.canvas.getBoundingClientRect(),
    meta: { title: v.opts.title || '', rows: v.opts.rows, cols: v.opts.cols },
    draw: (fig, x, y) => {
      const p = heatmapPanel(fig, v, { x, y, width: v.width });
      return { w: p.w, h: p.h, panel: { cells: p.cells } };
    },
  }));
  return layout(theme, items, { title, state, width, fontSize });
}

/**
 * A figure of a widget's canvases placed where they are on screen, each drawn by its part's
 * `draw(fig, x, y)` (a panel function of svg.js, or the widget's own shapes pushed to fig.body, their
 * sizes times fig.s), which returns its size and, for the metadata, a description of what it drew
 * (`panel`: kind, cells or bars in figure coordinates). A part's `heading` is written above it.
 * Canvases hidden (or not laid out) are left out. `state` gains `panels` (each with the index of its
 * canvas among the widget's canvases, `canvas`, and its origin in the figure, x and y) and `theme`.
 * @param {Element} host  the widget (its shadow root's canvases number the panels)
 * @param {object} theme  themeOf(host)
 * @param {{ canvas: HTMLCanvasElement, heading?: string, draw: (fig, x, y) => ({ w?: number, h?: number, panel?: object } | void) }[]} parts
 * @param {{ title: string, state: object, width?: number, fontSize?: number }} o
 */
export function canvasLayoutSVG(host, theme, parts, { title, state, width, fontSize }) {
  const shown = parts.filter(
    (p) => p.canvas && p.canvas.getClientRects().length > 0 && p.canvas.getBoundingClientRect().width > 0,
  );
  if (!shown.length) throw new Error('toSVG: nothing is drawn yet (wait for the ready event)');
  const all = [...host.shadowRoot.querySelectorAll('canvas')];
  const items = shown.map((p) => ({
    rect: p.canvas.getBoundingClientRect(),
    heading: p.heading,
    draw: p.draw,
    meta: { canvas: all.indexOf(p.canvas) },
  }));
  return layout(theme, items, { title, state, width, fontSize });
}

/** A HeatmapView drawn by heatmapPanel as a part of canvasLayoutSVG (its cells in the metadata). */
export function heatmapPart(view, heading) {
  return {
    canvas: view.canvas,
    heading,
    draw: (fig, x, y) => {
      const p = heatmapPanel(fig, view, { x, y, width: view.width });
      return {
        w: p.w,
        h: p.h,
        panel: { kind: 'heatmap', rows: view.opts.rows, cols: view.opts.cols, cells: p.cells },
      };
    },
  };
}

/** drawBars' options drawn by barsPanel as a part of canvasLayoutSVG (its bars in the metadata). */
export function barsPart(canvas, opts, heading) {
  return {
    canvas,
    heading,
    draw: (fig, x, y) => {
      const p = barsPanel(fig, opts, { x, y });
      return { w: p.w, h: p.h, panel: { kind: 'bars', bars: p.bars, fill: p.fill } };
    },
  };
}

/** drawXY's options drawn by xyPanel as a part of canvasLayoutSVG. */
export function xyPart(canvas, opts, colors, heading) {
  return {
    canvas,
    heading,
    draw: (fig, x, y) => ({ ...xyPanel(fig, opts, { x, y, colors }), panel: { kind: 'chart' } }),
  };
}
