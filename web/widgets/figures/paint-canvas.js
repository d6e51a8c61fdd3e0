// The canvas backend of the display list (display-list.js has the item kinds): paints a list onto
// a 2-D context in CSS px (the caller has set the device-pixel transform). Every item sets the
// state it draws with, so nothing leaks from one item (or one frame) into the next.
//
// Text (token labels included) is drawn with fillText, so it is never parsed as HTML.
import { colormap } from './colormap.js';
import { ARROW_DASH, HALO_WIDTH, arrowGeometry } from './display-list.js';
import { prepareCanvas } from './draw-util.js';

// Packed RGBA (little-endian: 0xAABBGGRR) versions of the colour maps, built once per map.
const packedCache = new Map();
function packedLut(name) {
  let p = packedCache.get(name);
  if (!p) {
    const lut = colormap(name);
    p = new Uint32Array(256);
    for (let i = 0; i < 256; i++)
      p[i] = ((255 << 24) | (lut[i * 3 + 2] << 16) | (lut[i * 3 + 1] << 8) | lut[i * 3]) >>> 0;
    packedCache.set(name, p);
  }
  return p;
}

// One pixel per cell, scaled up without smoothing. Colours are written as packed RGBA words
// (a 256-entry table), which keeps 512 × 512 cells at a few milliseconds.
function cells(ctx, { x, y, cw, ch, rows, cols, levels, map, maskedRgb }) {
  const img = new ImageData(cols, rows);
  const px = new Uint32Array(img.data.buffer); // (rows, cols) RGBA, little-endian words
  const packed = packedLut(map);
  const [mr, mg, mb] = maskedRgb;
  const maskedPx = ((255 << 24) | (mb << 16) | (mg << 8) | mr) >>> 0;
  for (let i = 0; i < levels.length; i++) px[i] = levels[i] < 0 ? maskedPx : packed[levels[i]];
  const off = new OffscreenCanvas(cols, rows);
  off.getContext('2d').putImageData(img, 0, 0);
  // Sharp cell edges when scaling up; averaged when many cells share a pixel.
  ctx.imageSmoothingEnabled = cw < 1 || ch < 1;
  ctx.drawImage(off, x, y, cols * cw, rows * ch);
}

function lines(ctx, { segs, stroke, width = 1, alpha }) {
  ctx.strokeStyle = stroke;
  ctx.lineWidth = width;
  if (alpha !== undefined) ctx.globalAlpha = alpha;
  ctx.beginPath();
  for (let i = 0; i < segs.length; i += 4) {
    ctx.moveTo(segs[i], segs[i + 1]);
    ctx.lineTo(segs[i + 2], segs[i + 3]);
  }
  ctx.stroke();
  if (alpha !== undefined) ctx.globalAlpha = 1;
}

function polygon(ctx, { points, fill, stroke, width }) {
  ctx.fillStyle = fill;
  ctx.strokeStyle = stroke;
  ctx.lineWidth = width;
  ctx.beginPath();
  for (let i = 0; i < points.length; i += 2) {
    if (i) ctx.lineTo(points[i], points[i + 1]);
    else ctx.moveTo(points[i], points[i + 1]);
  }
  ctx.closePath();
  ctx.fill();
  ctx.stroke();
}

// Axis-aligned strokes: 'h' / 'v' by a length, 'H' / 'V' to a coordinate. One path, or one stroke
// per segment (strokeEach: where translucent lines cross, each adds its own tint).
function rules(ctx, { segs, stroke, width = 1, dash, strokeEach }) {
  ctx.strokeStyle = stroke;
  ctx.lineWidth = width;
  if (dash) ctx.setLineDash(dash);
  ctx.beginPath();
  for (const [x, y, dir, v] of segs) {
    ctx.moveTo(x, y);
    if (dir === 'v') ctx.lineTo(x, y + v);
    else if (dir === 'h') ctx.lineTo(x + v, y);
    else if (dir === 'V') ctx.lineTo(x, v);
    else ctx.lineTo(v, y);
    if (strokeEach) {
      ctx.stroke();
      ctx.beginPath();
    }
  }
  if (!strokeEach) ctx.stroke();
  if (dash) ctx.setLineDash([]);
}

// Drawing clipped to a box, where an item has one.
function clipped(ctx, clip, draw) {
  if (!clip) return draw();
  ctx.save();
  ctx.beginPath();
  ctx.rect(clip.x, clip.y, clip.w, clip.h);
  ctx.clip();
  draw();
  ctx.restore();
}

function rect(ctx, { x, y, w, h, fill, stroke, width }) {
  if (fill) {
    ctx.fillStyle = fill;
    ctx.fillRect(x, y, w, h);
  }
  if (stroke) {
    ctx.strokeStyle = stroke;
    ctx.lineWidth = width;
    ctx.strokeRect(x, y, w, h);
  }
}

function boxes(ctx, { boxes, fill }) {
  ctx.fillStyle = fill;
  for (const [x, y, w, h] of boxes) ctx.fillRect(x, y, w, h);
}

function polyline(ctx, { points, stroke, width = 1, dash, clip }) {
  clipped(ctx, clip, () => {
    ctx.strokeStyle = stroke;
    ctx.lineWidth = width;
    if (dash) ctx.setLineDash(dash);
    ctx.beginPath();
    for (let i = 0; i < points.length; i += 2) {
      if (i) ctx.lineTo(points[i], points[i + 1]);
      else ctx.moveTo(points[i], points[i + 1]);
    }
    ctx.stroke();
    if (dash) ctx.setLineDash([]);
  });
}

function dots(ctx, { points, r, fill, clip, alphas }) {
  clipped(ctx, clip, () => {
    ctx.fillStyle = fill;
    for (let i = 0; i < points.length; i += 2) {
      if (alphas) ctx.globalAlpha = alphas[i / 2];
      ctx.beginPath();
      ctx.arc(points[i], points[i + 1], r, 0, 2 * Math.PI);
      ctx.fill();
    }
    if (alphas) ctx.globalAlpha = 1;
  });
}

function circle(ctx, { cx, cy, r, fill, stroke, dash }) {
  if (dash) ctx.setLineDash(dash);
  ctx.beginPath();
  ctx.arc(cx, cy, r, 0, 2 * Math.PI);
  if (fill) {
    ctx.fillStyle = fill;
    ctx.fill();
  }
  if (stroke) {
    ctx.strokeStyle = stroke;
    ctx.lineWidth = 1;
    ctx.stroke();
  }
  if (dash) ctx.setLineDash([]);
}

// The colour bar: one 1.5-px strip per pixel column (no gaps at fractional positions).
function ramp(ctx, { x, y, w, h, map }) {
  const lut = colormap(map);
  for (let i = 0; i < w; i++) {
    const k = Math.round((i / (w - 1)) * 255) * 3;
    ctx.fillStyle = `rgb(${lut[k]},${lut[k + 1]},${lut[k + 2]})`;
    ctx.fillRect(x + i, y, 1.5, h);
  }
}

// The shaft (dashed: ARROW_DASH) and the head. The round cap stays set, as it always has.
function arrow(ctx, it) {
  const { ex, ey, head } = arrowGeometry(it);
  ctx.strokeStyle = it.color;
  ctx.fillStyle = it.color;
  ctx.lineWidth = it.width;
  ctx.lineCap = 'round';
  ctx.setLineDash(it.dashed ? ARROW_DASH : []);
  ctx.beginPath();
  ctx.moveTo(it.x0, it.y0);
  ctx.lineTo(ex, ey);
  ctx.stroke();
  ctx.setLineDash([]);
  ctx.beginPath();
  ctx.moveTo(...head[0]);
  ctx.lineTo(...head[1]);
  ctx.lineTo(...head[2]);
  ctx.closePath();
  ctx.fill();
}

const ALIGN = { start: 'left', middle: 'center', end: 'right' };

function text(ctx, theme, t) {
  ctx.font = `${t.weight ? `${t.weight} ` : ''}${t.size}px ${t.mono ? theme.mono : theme.font}`;
  ctx.fillStyle = t.fill;
  ctx.textAlign = ALIGN[t.anchor || 'start'];
  ctx.textBaseline = t.baseline || 'alphabetic';
  const fill = (x, y) => {
    if (t.halo) {
      ctx.lineWidth = HALO_WIDTH;
      ctx.strokeStyle = t.halo;
      ctx.strokeText(t.text, x, y);
    }
    if (t.maxWidth === undefined) ctx.fillText(t.text, x, y);
    else ctx.fillText(t.text, x, y, t.maxWidth);
  };
  if (!t.rotate) return fill(t.x, t.y);
  ctx.save();
  ctx.translate(t.x, t.y);
  ctx.rotate((t.rotate / 180) * Math.PI); // exact for multiples of 45°
  fill(0, 0);
  ctx.restore();
}

const PAINT = { cells, lines, rules, rect, boxes, polyline, polygon, dots, circle, ramp, arrow };

/** Paints the display list `items` onto ctx; theme gives the font families. */
export function paintCanvas(ctx, items, theme) {
  for (const it of items) {
    if (it.kind === 'text') text(ctx, theme, it);
    else if (PAINT[it.kind]) PAINT[it.kind](ctx, it);
    else throw new Error(`paintCanvas: unknown item kind ${it.kind}`);
  }
}

// The list function each canvas was last painted from (paintFigure), for checks that paint it afresh.
const painted = new WeakMap();

/**
 * Paints a figure onto its canvas, the one way every widget's canvas is drawn: the canvas sized to
 * w × h CSS px at the device pixel ratio (prepareCanvas), filled with the theme's background (the
 * SVG document draws its own), then the display list listAt(ctx, theme). listAt(ctx, theme, at)
 * gives the same figure's list at a figure offset and font scale (at = { ox, oy, s }; without `at`,
 * the canvas's list, with its transient marks), as the SVG export paints it (a figure whose SVG
 * is only ever drawn at (0, 0) and scale 1 may ignore `at`); paintedList(canvas) returns it.
 * Returns the context.
 */
export function paintFigure(canvas, w, h, theme, listAt) {
  const ctx = prepareCanvas(canvas, w, h);
  if (theme.bg) {
    ctx.fillStyle = theme.bg;
    ctx.fillRect(0, 0, w, h);
  }
  paintCanvas(ctx, listAt(ctx, theme), theme);
  painted.set(canvas, listAt);
  return ctx;
}

/** The list function (see paintFigure) a canvas was last painted from, or undefined. */
export function paintedList(canvas) {
  return painted.get(canvas);
}
