// Colour maps for the heatmaps, readable with the common colour-vision deficiencies:
//   viridis  sequential, for weights in [0, 1] (matplotlib's viridis, 9 anchors interpolated)
//   cividis  sequential, blue – grey – yellow, tuned for red-green deficiencies (6 anchors)
//   gray     sequential, black – white (prints on any printer)
//   diverging  blue – near-white – orange (ColorBrewer PuOr-like), for signed values centred at 0
//   red-blue   blue – white – red (ColorBrewer RdBu, negative blue), the other diverging choice
// The sequential ones are the `palette` choices of <attention-heatmap> and <attention-model-view>.
// Each map is a 256-entry RGB lookup table so drawing 512×512 cells stays cheap.

const ANCHORS = {
  viridis: [
    '#440154',
    '#472d7b',
    '#3b528b',
    '#2c728e',
    '#21918c',
    '#28ae80',
    '#5ec962',
    '#addc30',
    '#fde725',
  ],
  cividis: ['#00224e', '#35456c', '#666970', '#948e77', '#c8b866', '#fee838'],
  gray: ['#000000', '#ffffff'],
  diverging: [
    '#2d4f8e',
    '#4f7cba',
    '#8fb1d9',
    '#cfdff0',
    '#f4f1ec',
    '#f8d4ad',
    '#eea660',
    '#cf7130',
    '#8f3f10',
  ],
  'red-blue': [
    '#2166ac',
    '#4393c3',
    '#92c5de',
    '#d1e5f0',
    '#f7f7f7',
    '#fddbc7',
    '#f4a582',
    '#d6604d',
    '#b2182b',
  ],
};

function hexToRgb(hex) {
  const n = parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

/** Builds a 256×3 Uint8Array lookup table by linear interpolation between anchors. */
function buildLut(anchors) {
  const rgb = anchors.map(hexToRgb);
  const lut = new Uint8Array(256 * 3); // (256, rgb)
  for (let i = 0; i < 256; i++) {
    const t = (i / 255) * (rgb.length - 1);
    const k = Math.min(Math.floor(t), rgb.length - 2);
    const f = t - k;
    for (let c = 0; c < 3; c++) lut[i * 3 + c] = Math.round(rgb[k][c] * (1 - f) + rgb[k + 1][c] * f);
  }
  return lut;
}

const LUTS = Object.fromEntries(Object.entries(ANCHORS).map(([k, v]) => [k, buildLut(v)]));
LUTS['blue-orange'] = LUTS.diverging;

/** @returns {Uint8Array} the (256, 3) table for `name` ('viridis' | 'cividis' | 'gray' | 'diverging' (= 'blue-orange') | 'red-blue'; others: viridis) */
export function colormap(name) {
  return LUTS[name] || LUTS.viridis;
}

/** The sequential palettes a widget's `palette` attribute accepts. */
export const PALETTES = Object.freeze(['viridis', 'cividis', 'gray']);

/** A `palette` attribute value as a sequential map name ('viridis' when absent or unknown). */
export function paletteName(value) {
  const v = String(value ?? '')
    .trim()
    .toLowerCase();
  return PALETTES.includes(v) ? v : v === 'grey' ? 'gray' : 'viridis';
}

/** The diverging palettes a signed view's `diverging` attribute accepts ('blue-orange' is the map 'diverging'). */
export const DIVERGING_PALETTES = Object.freeze(['blue-orange', 'red-blue']);

/** A `diverging` attribute value as a map name: 'red-blue', or 'diverging' (blue–orange, the default). */
export function divergingName(value) {
  const v = String(value ?? '')
    .trim()
    .toLowerCase();
  return v === 'red-blue' || v === 'rdbu' ? 'red-blue' : 'diverging';
}

/** What a signed attention-like map's numbers are (its legend caption, readout and summary say so). */
export const SIGNED_NOTE = 'signed: weights of the values, not probabilities';

/** The LUT index (0…255) of value v in [lo, hi]; values outside are clamped. */
export function lutIndex(v, lo, hi) {
  if (!(hi > lo)) return 128;
  const t = (v - lo) / (hi - lo);
  return Math.max(0, Math.min(255, Math.round(t * 255)));
}

/** CSS colour of value v for `name` over [lo, hi]. */
export function colorOf(name, v, lo, hi) {
  const lut = colormap(name);
  const i = lutIndex(v, lo, hi) * 3;
  return `rgb(${lut[i]}, ${lut[i + 1]}, ${lut[i + 2]})`;
}

/** Black or white, whichever reads better on the map's colour for v (for numbers inside cells). */
export function inkOn(name, v, lo, hi) {
  const lut = colormap(name);
  const i = lutIndex(v, lo, hi) * 3;
  const luminance = 0.2126 * lut[i] + 0.7152 * lut[i + 1] + 0.0722 * lut[i + 2];
  return luminance > 140 ? '#111' : '#fff';
}

/**
 * A sensible domain for a matrix: [0, 1] for probabilities, symmetric [-m, m] for signed data
 * (so 0 is the neutral colour), [min, max] otherwise. Non-finite values (−∞ from masking) are skipped.
 * @returns {{ lo: number, hi: number, map: 'viridis' | 'diverging' }}
 */
export function autoDomain(data, kind = 'auto') {
  let lo = Infinity,
    hi = -Infinity;
  for (const v of data)
    if (Number.isFinite(v)) {
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
  if (lo === Infinity) {
    lo = 0;
    hi = 1;
  }
  if (kind === 'probability' || (kind === 'auto' && lo >= 0 && hi <= 1))
    return { lo: 0, hi: Math.max(hi, 1e-6) > 0.5 ? 1 : Math.max(hi, 1e-6), map: 'viridis' };
  if (kind === 'signed' || lo < 0) {
    const m = Math.max(Math.abs(lo), Math.abs(hi), 1e-6);
    return { lo: -m, hi: m, map: 'diverging' };
  }
  return { lo, hi: hi > lo ? hi : lo + 1, map: 'viridis' };
}
