// The canvas painting of a HeatmapView (heatmap-view.js): cells, hatching, borders, numbers, labels,
// the Σ column and the legend, for the view's options `o` and its layout `g` (heatmap-geometry.js).
// Transient marks (hover, keyboard focus, the selected row) stay with the view.
//
// Text (token labels included) is drawn with fillText, so it is never parsed as HTML.
import { colormap, inkOn } from './colormap.js';
import { fitText, formatNumber } from './draw-util.js';
import { PAD, colLabelEvery, legendBox, rowLabelEvery, showsSums, valueSize } from './heatmap-geometry.js';

// Packed RGBA (little-endian: 0xAABBGGRR) versions of the colour maps, built once per map.
const packedCache = new Map();
function packedLut(name, lut) {
  let p = packedCache.get(name);
  if (!p) {
    p = new Uint32Array(256);
    for (let i = 0; i < 256; i++)
      p[i] = ((255 << 24) | (lut[i * 3 + 2] << 16) | (lut[i * 3 + 1] << 8) | lut[i * 3]) >>> 0;
    packedCache.set(name, p);
  }
  return p;
}

// One pixel per cell, scaled up without smoothing. Colours are written as packed RGBA words
// (a 256-entry table), which keeps 512 × 512 cells at a few milliseconds. Returns the flat
// indices of the masked (−∞) cells.
export function drawCellImage(ctx, o, g, theme) {
  const { lo, hi, map } = o.domain,
    lut = colormap(map);
  const img = new ImageData(o.cols, o.rows);
  const px = new Uint32Array(img.data.buffer); // (rows, cols) RGBA, little-endian words
  const packed = packedLut(map, lut);
  const [mr, mg, mb] = theme.maskedRgb;
  const maskedPx = ((255 << 24) | (mb << 16) | (mg << 8) | mr) >>> 0;
  const k = hi > lo ? 255 / (hi - lo) : 0;
  const masked = []; // flat indices of −∞ cells
  const n = o.rows * o.cols,
    data = o.data;
  const below = packed[0];
  for (let i = 0; i < n; i++) {
    const v = data[i];
    if (v >= lo) {
      // the common case (false for NaN and −∞)
      const t = ((v - lo) * k + 0.5) | 0;
      px[i] = packed[t > 255 ? 255 : t];
    } else if (v > -Infinity) {
      px[i] = below;
    } else {
      masked.push(i);
      px[i] = maskedPx;
    }
  }
  const off = new OffscreenCanvas(o.cols, o.rows);
  off.getContext('2d').putImageData(img, 0, 0);
  // Sharp cell edges when scaling up; averaged when many cells share a pixel.
  ctx.imageSmoothingEnabled = g.cw < 1 || g.ch < 1;
  ctx.drawImage(off, g.x0, g.y0, o.cols * g.cw, o.rows * g.ch);
  return masked;
}

/** A diagonal stroke over each masked cell (flat indices `masked`). */
export function drawHatch(ctx, o, g, theme, masked) {
  ctx.save();
  ctx.strokeStyle = theme.hatch;
  ctx.lineWidth = 1;
  ctx.beginPath();
  for (const i of masked) {
    const x = g.x0 + (i % o.cols) * g.cw,
      y = g.y0 + Math.floor(i / o.cols) * g.ch;
    ctx.moveTo(x + 1, y + g.ch - 1);
    ctx.lineTo(x + g.cw - 1, y + 1);
  }
  ctx.stroke();
  ctx.restore();
}

/** Lines between rows and between columns, in the background colour. */
export function drawBorders(ctx, o, g, theme) {
  ctx.strokeStyle = theme.bgSolid;
  ctx.lineWidth = 1;
  ctx.beginPath();
  for (let c = 1; c < o.cols; c++) {
    ctx.moveTo(g.x0 + c * g.cw, g.y0);
    ctx.lineTo(g.x0 + c * g.cw, g.y0 + o.rows * g.ch);
  }
  for (let r = 1; r < o.rows; r++) {
    ctx.moveTo(g.x0, g.y0 + r * g.ch);
    ctx.lineTo(g.x0 + o.cols * g.cw, g.y0 + r * g.ch);
  }
  ctx.stroke();
}

/** Each cell's rounded number, in the ink that reads on its colour. */
export function drawValues(ctx, o, g, theme) {
  const { lo, hi, map } = o.domain;
  ctx.font = `${valueSize(g)}px ${theme.mono}`;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'middle';
  for (let r = 0; r < o.rows; r++)
    for (let c = 0; c < o.cols; c++) {
      const v = o.data[r * o.cols + c];
      ctx.fillStyle = Number.isFinite(v) ? inkOn(map, v, lo, hi) : theme.fg;
      ctx.fillText(formatNumber(v, o.decimals), g.x0 + (c + 0.5) * g.cw, g.y0 + (r + 0.5) * g.ch, g.cw - 2);
    }
}

/** The title, the row labels (the selected row's in the accent) and the column labels, thinned to fit. */
export function drawLabels(ctx, o, g, theme) {
  ctx.fillStyle = theme.fg;
  ctx.font = `12px ${theme.font}`;
  if (o.title) {
    ctx.textAlign = 'left';
    ctx.textBaseline = 'top';
    ctx.font = `600 12px ${theme.font}`;
    ctx.fillText(fitText(ctx, o.title, g.w - 2 * PAD), PAD, PAD);
    ctx.font = `12px ${theme.font}`;
  }
  if (o.rowLabels) {
    const every = rowLabelEvery(g);
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    for (let r = 0; r < o.rows; r += every) {
      ctx.fillStyle = o.selectedRow === r ? theme.accent : theme.fg;
      ctx.fillText(fitText(ctx, o.rowLabels[r], g.rowW - 10), g.x0 - 6, g.y0 + (r + 0.5) * g.ch);
    }
  }
  if (o.colLabels) {
    const every = colLabelEvery(ctx, o, g);
    ctx.fillStyle = theme.fg;
    for (let c = 0; c < o.cols; c += every) {
      const x = g.x0 + (c + 0.5) * g.cw,
        text = o.colLabels[c];
      if (g.angled) {
        ctx.save();
        ctx.translate(x, g.y0 - 5);
        ctx.rotate(-Math.PI / 4);
        ctx.textAlign = 'left';
        ctx.textBaseline = 'middle';
        ctx.fillText(fitText(ctx, text, 90), 0, 0);
        ctx.restore();
      } else {
        ctx.textAlign = 'center';
        ctx.textBaseline = 'bottom';
        ctx.fillText(fitText(ctx, text, g.cw * every - 2), x, g.y0 - 4);
      }
    }
  }
}

/** The Σ column: its heading, and each row's sum where rows are tall enough. */
export function drawSums(ctx, o, g, theme) {
  const x = g.x0 + o.cols * g.cw + 8;
  ctx.font = `11px ${theme.mono}`;
  ctx.textAlign = 'left';
  ctx.textBaseline = 'bottom';
  ctx.fillStyle = theme.muted;
  ctx.fillText('Σ row', x, g.y0 - 4);
  if (!showsSums(g)) return;
  ctx.textBaseline = 'middle';
  for (let r = 0; r < o.rows; r++) {
    let s = 0;
    for (let c = 0; c < o.cols; c++) {
      const v = o.data[r * o.cols + c];
      if (Number.isFinite(v)) s += v;
    }
    ctx.fillStyle = theme.fg;
    ctx.fillText(s.toFixed(3), x, g.y0 + (r + 0.5) * g.ch);
  }
}

/** The colour bar with its three values, and the masked swatch where `maskedCount` > 0. */
export function drawLegend(ctx, o, g, theme, maskedCount) {
  const { lo, hi, map } = o.domain,
    lut = colormap(map);
  const { x, y, w } = legendBox(o, g);
  for (let i = 0; i < w; i++) {
    const k = Math.round((i / (w - 1)) * 255) * 3;
    ctx.fillStyle = `rgb(${lut[k]},${lut[k + 1]},${lut[k + 2]})`;
    ctx.fillRect(x + i, y, 1.5, 10);
  }
  ctx.fillStyle = theme.muted;
  ctx.font = `10px ${theme.mono}`;
  ctx.textBaseline = 'top';
  const tick = (t, v, align) => {
    ctx.textAlign = align;
    ctx.fillText(formatNumber(v, Math.abs(hi - lo) < 0.1 ? 4 : 2), x + t * w, y + 13);
  };
  tick(0, lo, 'left');
  tick(0.5, (lo + hi) / 2, 'center');
  tick(1, hi, 'right');
  if (maskedCount) {
    const mx = x + w + 14;
    ctx.fillStyle = `rgb(${theme.maskedRgb.slice(0, 3).join(',')})`;
    ctx.fillRect(mx, y, 14, 10);
    ctx.strokeStyle = theme.hatch;
    ctx.beginPath();
    ctx.moveTo(mx + 1, y + 9);
    ctx.lineTo(mx + 13, y + 1);
    ctx.stroke();
    ctx.fillStyle = theme.muted;
    ctx.textAlign = 'left';
    ctx.textBaseline = 'top';
    ctx.font = `11px ${theme.font}`;
    ctx.fillText('masked (−∞)', mx + 20, y - 1);
  }
}
