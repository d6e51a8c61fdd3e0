// In-page checks of the display lists (imported as /tests/browser/display-list-page.js by
// display-list.test.mjs): a widget's canvas must be exactly the list painted onto a fresh canvas,
// and its SVG must hold the list's items, in order (each item found as the element it paints to).
import { prepareCanvas, themeOf } from '/web/widgets/draw-util.js';
import { paintCanvas } from '/web/widgets/paint-canvas.js';
import { colormap } from '/web/widgets/colormap.js';
import { hex3 } from '/web/widgets/svg-core.js';

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
      return it.rotate ? /rotate/.test(e.getAttribute('transform') || '') : close(t.getAttribute('x'), it.x);
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
