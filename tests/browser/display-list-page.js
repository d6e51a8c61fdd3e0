// In-page checks of the display lists (imported as /tests/browser/display-list-page.js by the
// display-list and display-list-widgets tests): a widget's canvas must be exactly the list painted
// onto a fresh canvas, and its SVG must hold the list's items, in order (each item found as the
// element it paints to).
import { prepareCanvas, themeOf } from '/web/widgets/figures/draw-util.js';
import { paintCanvas } from '/web/widgets/figures/paint-canvas.js';
import { colormap } from '/web/widgets/figures/colormap.js';
import { baseY, hex3 } from '/web/widgets/figures/svg-core.js';
import { readSvg } from '/tests/browser/svg-inspect.js';

/**
 * How many pixels differ between `canvas` and a fresh canvas of its size painted with
 * paint(ctx, theme) (−1: sizes differ). A widget's arrows leave round line caps in its context, which
 * its next frame starts with, so both the first frame's caps and later frames' are tried.
 */
export function canvasDiff(canvas, host, paint) {
  return Math.min(...['butt', 'round'].map((cap) => diffWithCap(canvas, host, paint, cap)));
}

function diffWithCap(canvas, host, paint, cap) {
  const theme = themeOf(host);
  const fresh = document.createElement('canvas');
  const w = parseFloat(canvas.style.width),
    h = parseFloat(canvas.style.height);
  const ctx = prepareCanvas(fresh, w, h);
  ctx.lineCap = cap;
  if (theme.bg) {
    ctx.fillStyle = theme.bg;
    ctx.fillRect(0, 0, w, h);
  }
  paintCanvas(ctx, paint(ctx, theme), theme);
  if (fresh.width !== canvas.width || fresh.height !== canvas.height) return -1;
  const a = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
  const b = ctx.getImageData(0, 0, fresh.width, fresh.height).data;
  let n = 0;
  for (let i = 0; i < a.length; i += 4)
    if (a[i] !== b[i] || a[i + 1] !== b[i + 1] || a[i + 2] !== b[i + 2] || a[i + 3] !== b[i + 3]) n++;
  return n;
}

const count = (s, re) => (s.match(re) || []).length;

// Whether element e is what item `it` paints to (cells go into the shared scale() paths instead).
function matches(it, e) {
  const d = e.getAttribute('d') || '';
  const close = (a, b) => Math.abs(Number(a) - b) <= 0.02;
  switch (it.kind) {
    case 'text': {
      const t = e.localName === 'g' ? e.querySelector('text') : e;
      if (!t || t.localName !== 'text' || t.textContent !== String(it.text)) return false;
      if (it.rotate) return /rotate/.test(e.getAttribute('transform') || '');
      const y = baseY(it.y, it.size, it.baseline || 'alphabetic');
      return close(t.getAttribute('x'), it.x) && close(t.getAttribute('y'), y);
    }
    case 'rules':
      return e.localName === 'path' && count(d, /M/g) === it.segs.length;
    case 'lines':
      return e.localName === 'path' && count(d, /L/g) === it.segs.length / 4;
    case 'boxes':
      return e.localName === 'path' && count(d, /z/g) === it.boxes.length;
    case 'polyline':
      return e.localName === 'polyline';
    case 'dots':
      return e.localName === 'g' && e.querySelectorAll('circle').length <= it.points.length / 2;
    case 'arrow':
      return e.localName === 'path' && e.getAttribute('stroke-linecap') === 'round';
    case 'circle':
      return e.localName === 'circle' && close(e.getAttribute('cx'), it.cx);
    case 'polygon':
      return e.localName === 'path' && count(d, /L/g) === it.points.length / 2 - 1;
    case 'rect':
      return (
        e.localName === 'rect' && close(e.getAttribute('x'), it.x) && close(e.getAttribute('width'), it.w)
      );
    case 'ramp':
      return e.localName === 'rect' && /url\(#aw-cbar-/.test(e.getAttribute('fill'));
    default:
      return false;
  }
}

/**
 * The items of `items` not found, in order, among the top-level elements of the SVG document `doc`
 * (an empty list: the SVG describes the list). Items that paint nothing (empty rules, boxes and
 * clipped lines) are skipped, and so are the cells (see cellMismatches).
 */
export function missingItems(doc, items) {
  const els = [...doc.documentElement.children].filter((e) => !/^(title|metadata|defs)$/.test(e.localName));
  const missing = [];
  let at = 0;
  for (const it of items) {
    if (it.kind === 'cells') continue;
    if ((it.kind === 'rules' || it.kind === 'lines') && !it.segs.length) continue;
    if ((it.kind === 'boxes' && !it.boxes.length) || (it.kind === 'polyline' && it.clip)) continue;
    const k = els.findIndex((e, i) => i >= at && matches(it, e));
    if (k < 0) missing.push(`${it.kind} ${it.text ?? ''}`);
    else at = k + 1;
  }
  return missing;
}

/** Cells of a 'cells' item whose colour differs from the SVG's rectangle at their centre (readSvg's fillAt). */
export function cellMismatches(item, fillAt, hex) {
  const lut = colormap(item.map);
  let n = 0;
  for (let r = 0; r < item.rows; r++)
    for (let c = 0; c < item.cols; c++) {
      const lev = item.levels[r * item.cols + c];
      const want = lev < 0 ? item.maskedRgb.slice(0, 3) : hex(hex3(lut, lev));
      const got = fillAt(item.x + (c + 0.5) * item.cw, item.y + (r + 0.5) * item.ch);
      if (!got || got.some((v, i) => v !== want[i])) n++;
    }
  return n;
}

// Where the SVG put an item that carries its place (a text, a box, the colour bar, a circle): the
// element's x and y, and the item's (a text's y as the SVG writes it, from its baseline).
function placeOfItem(it) {
  if (it.kind === 'text' && !it.rotate) return [it.x, baseY(it.y, it.size, it.baseline || 'alphabetic')];
  if (it.kind === 'rect' || it.kind === 'ramp') return [it.x, it.y];
  if (it.kind === 'circle') return [it.cx, it.cy];
  return null;
}
function placeOfElement(e) {
  const n = (a) => Number(e.getAttribute(a));
  if (e.localName === 'circle') return [n('cx'), n('cy')];
  return e.localName === 'text' || e.localName === 'rect' ? [n('x'), n('y')] : null;
}

/**
 * The offsets (dx, dy) at which the SVG may have put a panel whose list at (0, 0) is `items`: one
 * for each element of the SVG that could be the list's first placed item.
 */
function candidateOffsets(doc, items) {
  const first = items.find((it) => placeOfItem(it));
  if (!first) return [{ dx: 0, dy: 0 }];
  const [ix, iy] = placeOfItem(first);
  const out = [];
  for (const e of doc.documentElement.children) {
    if (e.localName !== 'text' && e.localName !== 'rect' && e.localName !== 'circle') continue;
    if (first.kind === 'text' && e.textContent !== String(first.text)) continue;
    const p = placeOfElement(e);
    if (p) out.push({ dx: Math.round((p[0] - ix) * 100) / 100, dy: Math.round((p[1] - iy) * 100) / 100 });
  }
  return out;
}

/**
 * Every canvas of widget `el` against the display list it was painted from (paintedList): how many
 * pixels differ from that list painted afresh, and, with the list placed where the SVG document
 * `svg` put the panel (laid out at font scale 1), the items the SVG misses (texts as <text>, with
 * their words and places), and the cells not in the list's colours. Canvases not shown are named.
 */
export async function checkCanvases(el, svg) {
  const { paintedList } = await import('/web/widgets/figures/paint-canvas.js');
  const { doc, fillAt, hex } = await readSvg(svg);
  const theme = themeOf(el),
    ctx = document.createElement('canvas').getContext('2d');
  const out = [];
  [...el.shadowRoot.querySelectorAll('canvas')].forEach((canvas, index) => {
    const listAt = paintedList(canvas);
    if (!canvas.getClientRects().length || !canvas.width) return out.push({ index, shown: false });
    if (!listAt) return out.push({ index, shown: true, list: false });
    const pixels = canvasDiff(canvas, el, (c, th) => listAt(c, th));
    let best = null;
    for (const { dx, dy } of candidateOffsets(doc, listAt(ctx, theme, { ox: 0, oy: 0, s: 1 }))) {
      const items = listAt(ctx, theme, { ox: dx, oy: dy, s: 1 });
      const missing = missingItems(doc, items);
      if (!best || missing.length < best.missing.length) best = { items, missing };
      if (!missing.length) break;
    }
    const { items, missing } = best;
    const cells = items.filter((it) => it.kind === 'cells');
    out.push({
      index,
      shown: true,
      list: true,
      pixels,
      n: items.length,
      kinds: [...new Set(items.map((it) => it.kind))].sort().join(' '),
      texts: items.filter((it) => it.kind === 'text').length,
      missing,
      cells: cells.reduce((n, it) => n + cellMismatches(it, fillAt, hex), 0),
    });
  });
  return out;
}
