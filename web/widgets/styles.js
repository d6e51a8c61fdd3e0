// The stylesheet shared by every widget's shadow root. Theme with CSS custom properties on the
// element or any ancestor:
//   --aw-font, --aw-mono        text and number fonts
//   --aw-fg, --aw-muted         text colours (default: the page's colour)
//   --aw-bg, --aw-surface       widget background (default transparent) and control background
//   --aw-accent                 focus rings, selection, active step
//   --aw-border, --aw-radius, --aw-padding
// Canvas drawing reads the same properties, so pictures follow the theme too.
export const BASE_CSS = `
:host {
  display: block;
  position: relative;
  box-sizing: border-box;
  font-family: var(--aw-font, system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif);
  font-size: 14px;
  line-height: 1.45;
  color: var(--aw-fg, inherit);
  background: var(--aw-bg, transparent);
  border: 1px solid var(--aw-border, color-mix(in srgb, currentColor 16%, transparent));
  border-radius: var(--aw-radius, 10px);
  padding: var(--aw-padding, 12px 14px);
  min-width: 0;
}
:host([hidden]) { display: none; }
*, *::before, *::after { box-sizing: border-box; }
[hidden] { display: none !important; }
.bar { display: flex; flex-wrap: wrap; align-items: center; gap: 8px 10px; margin-bottom: 8px; }
.title { font-weight: 650; font-size: 15px; margin-right: auto; letter-spacing: -0.005em; }
.muted { color: var(--aw-muted, color-mix(in srgb, currentColor 62%, transparent)); }
.small { font-size: 12.5px; }
button, select, input {
  font: inherit; font-size: 13px; color: inherit;
  background: var(--aw-surface, color-mix(in srgb, currentColor 5%, transparent));
  border: 1px solid color-mix(in srgb, currentColor 22%, transparent);
  border-radius: 6px; padding: 3px 9px; min-height: 28px;
}
button { cursor: pointer; }
button:hover { background: color-mix(in srgb, currentColor 11%, transparent); }
button[aria-pressed="true"], button[aria-selected="true"] {
  background: var(--aw-accent, #b94a08); border-color: var(--aw-accent, #b94a08); color: var(--aw-on-accent, #fff);
}
button:disabled { opacity: 0.45; cursor: default; }
:focus-visible, canvas:focus { outline: 2px solid var(--aw-accent, #b94a08); outline-offset: 2px; }
canvas { display: block; max-width: 100%; touch-action: manipulation; border-radius: 4px; }
.exports { display: flex; gap: 4px; }
.exports button { font-size: 11.5px; letter-spacing: 0.04em; padding: 2px 7px; min-height: 24px; }
.error {
  margin: 6px 0; padding: 8px 10px; border-radius: 6px; font-size: 13.5px;
  color: var(--aw-error, #b3261e); background: color-mix(in srgb, var(--aw-error, #b3261e) 10%, transparent);
  border: 1px solid color-mix(in srgb, var(--aw-error, #b3261e) 35%, transparent);
}
.tooltip {
  position: absolute; z-index: 10; pointer-events: none; max-width: min(420px, 90%);
  font-family: var(--aw-mono, ui-monospace, Menlo, Consolas, monospace); font-size: 12px; line-height: 1.4;
  padding: 6px 8px; border-radius: 6px; white-space: pre-wrap; overflow-wrap: anywhere;
  background: var(--aw-tooltip-bg, #1d2330); color: var(--aw-tooltip-fg, #f4f6fa);
  box-shadow: 0 4px 16px rgba(0,0,0,0.25);
}
.tip-head { font-weight: 600; font-family: var(--aw-font, system-ui, sans-serif); }
.readout {
  font-family: var(--aw-mono, ui-monospace, Menlo, Consolas, monospace); font-size: 12.5px;
  min-height: 2.8em; margin-top: 8px; padding: 6px 9px; border-radius: 6px; overflow-wrap: anywhere;
  background: color-mix(in srgb, currentColor 4%, transparent);
}
.readout .terms { display: block; margin-top: 3px; color: var(--aw-muted, color-mix(in srgb, currentColor 65%, transparent)); white-space: pre-wrap; }
.scroll { overflow-x: auto; overflow-y: hidden; }
.legend-note { font-size: 12px; }
.swatch { display: inline-block; width: 11px; height: 11px; border-radius: 2px; vertical-align: -1px; margin-right: 4px; }
label.inline { display: inline-flex; align-items: center; gap: 6px; font-size: 13px; }
.seg { display: inline-flex; border-radius: 7px; overflow: hidden; border: 1px solid color-mix(in srgb, currentColor 22%, transparent); }
.seg button { border: 0; border-radius: 0; min-height: 26px; }
.seg button + button { border-left: 1px solid color-mix(in srgb, currentColor 22%, transparent); }
/* Print (print.js swaps canvases for their SVG on beforeprint): the views, not the controls. */
.aw-print-figure { display: block; margin: 4px 0; }
.aw-print-figure svg { display: block; max-width: 100%; height: auto; }
[data-aw-print-hidden] { display: none !important; }
@media print {
  :host { break-inside: avoid; }
  .exports, .tooltip, .readout, .tabs, .nav, button, select, input, textarea, form,
  label:has(> select), label:has(> input) { display: none !important; }
  .scroll { overflow: visible; }
}
`;
