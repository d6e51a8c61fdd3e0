// The SVG backend of the display list (display-list.js has the item kinds): paints a list into an
// SVG figure (svgFigure of svg-core.js) — cells into the figure's shared per-colour paths, the rest
// as vector shapes and text elements (text stays text) — and returns the markup of everything but
// the cells, one element a line.
import { colormap } from './colormap.js';
import { ARROW_DASH, arrowGeometry } from './display-list.js';
import { cssHex, hex3, num, paint, svgText } from './svg-core.js';

/** The colour bar's gradient (33 stops of the map's table, enough for its piecewise-linear anchors). */
function gradient(fig, map) {
  const id = `aw-cbar-${map.replace(/[^a-z0-9-]/gi, '')}`;
  if (!fig.defs.has(id)) {
    const lut = colormap(map);
    let stops = '';
    for (let j = 0; j <= 32; j++)
      stops += `<stop offset="${+(j / 32).toFixed(4)}" stop-color="${hex3(lut, Math.round((j * 255) / 32))}"/>`;
    fig.defs.set(id, `<linearGradient id="${id}" x1="0" y1="0" x2="1" y2="0">${stops}</linearGradient>`);
  }
  return id;
}

// The cells into the figure's shared paths: runs of one level along each row.
function cells(fig, { x, y, cw, ch, rows, cols, levels, map, maskedRgb }) {
  const lut = colormap(map);
  const fills = Array.from({ length: 256 }, (_, i) => hex3(lut, i));
  const maskedFill = cssHex(`rgb(${maskedRgb.slice(0, 3).join(',')})`).hex;
  for (let r = 0; r < rows; r++) {
    let c = 0;
    while (c < cols) {
      const lev = levels[r * cols + c];
      let e = c + 1;
      while (e < cols && levels[r * cols + e] === lev) e++;
      fig.cells.add(lev < 0 ? maskedFill : fills[lev], cw, ch, x, y, r, c, e - c);
      c = e;
    }
  }
  return '';
}

function lines(fig, { segs, stroke, width, alpha, bare, svgCap }) {
  let d = '';
  for (let i = 0; i < segs.length; i += 4)
    d += `M${num(segs[i])} ${num(segs[i + 1])}L${num(segs[i + 2])} ${num(segs[i + 3])}`;
  if (bare) return `<path d="${d}" ${paint('stroke', stroke)}/>`;
  const opacity = alpha === undefined ? '' : ` stroke-opacity="${+alpha.toFixed(3)}"`;
  const w = width === undefined ? '' : ` stroke-width="${num(width)}"`;
  const cap = svgCap ? ` stroke-linecap="${svgCap}"` : '';
  return `<path fill="none" ${paint('stroke', stroke)}${opacity}${w}${cap} d="${d}"/>`;
}

function polygon(fig, { points, fill, stroke, width }) {
  let d = '';
  for (let i = 0; i < points.length; i += 2) d += `${i ? 'L' : 'M'}${num(points[i])} ${num(points[i + 1])}`;
  return `<path ${paint('fill', fill)} ${paint('stroke', stroke)} stroke-width="${num(width)}" d="${d}z"/>`;
}

const dashAttr = (dash) => (dash ? ` stroke-dasharray="${dash.join(' ')}"` : '');

// Axis-aligned strokes as one path of h / v (relative) and H / V (absolute) moves.
function rules(fig, { segs, stroke, width, dash }) {
  let d = '';
  for (const [x, y, dir, v] of segs) d += `M${num(x)} ${num(y)}${dir}${num(v)}`;
  const w = width === undefined ? '' : ` stroke-width="${num(width)}"`;
  return d ? `<path fill="none" ${paint('stroke', stroke)}${w}${dashAttr(dash)} d="${d}"/>` : '';
}

// The points of a clipped item inside its clip box (the SVG has no clip path, so no id to collide).
function inside(points, clip) {
  if (!clip) return points;
  const out = [];
  for (let i = 0; i < points.length; i += 2) {
    const x = points[i],
      y = points[i + 1];
    if (x >= clip.x && x <= clip.x1 && y >= clip.y && y <= clip.y1) out.push(x, y);
  }
  return out;
}

// Filled boxes as one path (none when there are none).
function boxes(fig, { boxes, fill }) {
  let d = '';
  for (const [x, y, w, h] of boxes) d += `M${num(x)} ${num(y)}h${num(w)}v${num(h)}h${num(-w)}z`;
  return d ? `<path ${paint('fill', fill)} d="${d}"/>` : '';
}

function polyline(fig, { points, stroke, width, svgJoin, dash, clip }) {
  const p = inside(points, clip);
  if (clip && p.length < 4) return '';
  const pts = [];
  for (let i = 0; i < p.length; i += 2) pts.push(`${num(p[i])},${num(p[i + 1])}`);
  const join = svgJoin ? ` stroke-linejoin="${svgJoin}"` : '';
  return `<polyline fill="none" ${paint('stroke', stroke)} stroke-width="${width}"${join}${dashAttr(dash)} points="${pts.join(' ')}"/>`;
}

function dots(fig, { points, r, fill, clip, alphas }) {
  const p = inside(points, clip);
  let out = '';
  for (let i = 0; i < p.length; i += 2) {
    const alpha = alphas ? ` fill-opacity="${+alphas[i / 2].toFixed(3)}"` : '';
    out += `<circle cx="${num(p[i])}" cy="${num(p[i + 1])}" r="${r}"${alpha}/>`;
  }
  return alphas && !out ? '' : `<g ${paint('fill', fill)}>${out}</g>`;
}

function circle(fig, { cx, cy, r, fill, stroke, dash }) {
  const paints = `${fill ? paint('fill', fill) : 'fill="none"'}${stroke ? ` ${paint('stroke', stroke)}` : ''}`;
  return `<circle cx="${num(cx)}" cy="${num(cy)}" r="${num(r)}" ${paints}${dashAttr(dash)}/>`;
}

function rect(fig, { x, y, w, h, fill, stroke, width }) {
  const box = `x="${num(x)}" y="${num(y)}" width="${num(w)}" height="${num(h)}"`;
  const strokeAttrs = stroke ? ` ${paint('stroke', stroke)} stroke-width="${num(width)}"` : '';
  return `<rect ${box} ${fill ? paint('fill', fill) : 'fill="none"'}${strokeAttrs}/>`;
}

function ramp(fig, { x, y, w, h, map }) {
  return `<rect x="${num(x)}" y="${num(y)}" width="${num(w)}" height="${num(h)}" fill="url(#${gradient(fig, map)})"/>`;
}

function text(fig, t) {
  const { size, anchor, baseline, fill, mono, weight, halo } = t;
  const o = { size, anchor, baseline, fill, mono, weight, halo };
  if (!t.rotate) return svgText(fig, t.x, t.y, t.text, o);
  return `<g transform="translate(${num(t.x)} ${num(t.y)}) rotate(${t.rotate})">${svgText(fig, 0, 0, t.text, o)}</g>`;
}

// The round-capped shaft and the filled head, as two paths.
function arrow(fig, it) {
  const { ex, ey, head } = arrowGeometry(it);
  const dash = it.dashed ? dashAttr(ARROW_DASH) : '';
  const [tip, b1, b2] = head.map(([x, y]) => `${num(x)} ${num(y)}`);
  return (
    `<path fill="none" ${paint('stroke', it.color)} stroke-width="${num(it.width)}" stroke-linecap="round"${dash} d="M${num(it.x0)} ${num(it.y0)}L${num(ex)} ${num(ey)}"/>` +
    `<path ${paint('fill', it.color)} d="M${tip}L${b1}L${b2}z"/>`
  );
}

const PAINT = { cells, lines, rules, rect, boxes, polyline, polygon, dots, circle, ramp, text, arrow };

/** Paints the display list `items` into the figure; returns the markup of all but the cells. */
export function paintSvg(fig, items) {
  const out = [];
  for (const it of items) {
    if (!PAINT[it.kind]) throw new Error(`paintSvg: unknown item kind ${it.kind}`);
    out.push(PAINT[it.kind](fig, it));
  }
  return out.filter(Boolean).join('\n');
}
