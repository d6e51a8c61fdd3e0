// SVG export of the heatmap views: the picture a HeatmapView draws on its canvas (and the bar and
// line charts of charts.js beside it), as vector shapes a paper can use (Inkscape, Illustrator, a
// browser, LaTeX through svg/pdf conversion). Each panel paints the display list its canvas paints
// (display-list.js; paint-svg.js is the SVG backend), so both draw the same figure.
//
//   - Cells are shapes, never an embedded raster: the cells of one colour level (one of the colour
//     map's 256 entries, the same quantisation the canvas uses) are ONE <path> for the whole figure
//     (per cell size: the panels of every widget today share theirs),
//     runs of equal cells in a row merged into one rectangle, coordinates in cell units under a
//     scale() so each rectangle costs ~14 bytes (a 64 × 64 heatmap is well under 250 KB).
//   - Self-contained: system font stacks by name, no <image>, no <foreignObject>, no link; the one
//     internal reference is the colour bar's gradient (url(#aw-cbar-<map>), the same for every
//     figure of a map, so several SVGs inlined in one page never disagree).
//   - Text (token labels are user content) is XML-escaped, and characters XML cannot hold (control
//     characters, lone surrogates) become U+FFFD.
//   - The view's state (widget, view, tokens, options) is JSON inside <metadata id="aw-state">.
//
// This module is the export's entry point: the building blocks live in svg-core.js, the panels in
// svg-heatmap.js (HeatmapView), svg-charts.js (bar and line charts) and svg-xy.js (x–y charts).
export {
  CellPaths,
  cssHex,
  jsonSafe,
  num,
  paint,
  svgDocument,
  svgFigure,
  svgText,
  xmlText,
} from './svg-core.js';
export { heatmapPanel } from './svg-heatmap.js';
export { barsPanel, linesPanel } from './svg-charts.js';
export { xyPanel } from './svg-xy.js';
