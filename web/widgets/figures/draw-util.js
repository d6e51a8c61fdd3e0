// Small drawing helpers shared by the canvas views: number formatting, text fitting, theme colours.

/** Rounds for display: −∞ as "−∞", tiny magnitudes without "-0.00". */
export function formatNumber(v, decimals = 2) {
  if (v === -Infinity) return '−∞';
  if (v === Infinity) return '∞';
  if (Number.isNaN(v)) return 'NaN';
  const s = Number(v).toFixed(decimals);
  return /^-0\.?0*$/.test(s) ? s.slice(1) : s.replace('-', '−');
}

/** The exact float32 value as text (shortest round-trip form of the stored number). */
export function exactNumber(v) {
  if (!Number.isFinite(v)) return formatNumber(v);
  return String(Math.fround(v)).replace('-', '−');
}

/** `text` cut with an ellipsis so it fits `maxWidth` CSS pixels in the context's current font. */
export function fitText(ctx, text, maxWidth) {
  const s = String(text);
  if (maxWidth <= 0) return '';
  if (ctx.measureText(s).width <= maxWidth) return s;
  const chars = Array.from(s);
  let lo = 0,
    hi = Math.min(chars.length, 200);
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (ctx.measureText(chars.slice(0, mid).join('') + '…').width <= maxWidth) lo = mid;
    else hi = mid - 1;
  }
  return chars.slice(0, lo).join('') + '…';
}

function parseRgb(color) {
  const m = /rgba?\(([^)]+)\)/.exec(color || '');
  if (!m) return null;
  const parts = m[1]
    .split(/[ ,/]+/)
    .filter(Boolean)
    .map(Number);
  return { r: parts[0], g: parts[1], b: parts[2], a: parts.length > 3 ? parts[3] : 1 };
}

/** The first non-transparent background colour at or above `el` (crossing shadow roots). */
function backgroundBehind(el) {
  for (let n = el; n; n = n.parentElement || n.getRootNode?.().host) {
    const c = parseRgb(getComputedStyle(n).backgroundColor);
    if (c && c.a > 0.5) return c;
    if (n === document.documentElement) break;
  }
  return { r: 255, g: 255, b: 255, a: 1 };
}

const DEFAULT_FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif';
const DEFAULT_MONO = 'ui-monospace, "SF Mono", Menlo, Consolas, "DejaVu Sans Mono", monospace';

/**
 * Colours and fonts for canvas drawing, read from the host so canvases follow the CSS theme:
 * --aw-font, --aw-mono, --aw-accent, --aw-bg (else the page background), and `color` for text.
 */
export function themeOf(host) {
  const cs = getComputedStyle(host);
  const v = (name) => cs.getPropertyValue(name).trim();
  const bgVar = v('--aw-bg');
  const bgRgb = backgroundBehind(host); // the host's own background when --aw-bg sets one
  const dark = 0.2126 * bgRgb.r + 0.7152 * bgRgb.g + 0.0722 * bgRgb.b < 110;
  const bgSolid = `rgb(${bgRgb.r}, ${bgRgb.g}, ${bgRgb.b})`;
  return {
    fg: cs.color || (dark ? '#eee' : '#222'),
    muted: v('--aw-muted') || (dark ? '#a0a7b4' : '#5b6270'),
    accent: v('--aw-accent') || (dark ? '#ffb454' : '#b94a08'),
    font: v('--aw-font') || DEFAULT_FONT,
    mono: v('--aw-mono') || DEFAULT_MONO,
    bg: bgVar && bgVar !== 'transparent' ? bgVar : '',
    bgSolid,
    dark,
    maskedRgb: dark ? [58, 62, 70, 255] : [222, 222, 222, 255],
    hatch: dark ? 'rgba(255,255,255,0.35)' : 'rgba(0,0,0,0.28)',
  };
}

/**
 * Sizes a canvas for the device pixel ratio (only when its size changed: resizing reallocates) and
 * returns its 2-D context cleared, with the transform set so drawing is in CSS pixels.
 */
export function prepareCanvas(canvas, width, height) {
  const dpr = Math.max(1, globalThis.devicePixelRatio || 1);
  const w = Math.round(width * dpr),
    h = Math.round(height * dpr);
  if (canvas.width !== w || canvas.height !== h) {
    canvas.width = w;
    canvas.height = h;
  }
  canvas.style.width = `${width}px`;
  canvas.style.height = `${height}px`;
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, width, height);
  return ctx;
}
