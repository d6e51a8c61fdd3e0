// The one place the widgets touch the library: a single import (so every widget on a page shares one
// module and one wasm instance) and a single init() promise. Also loads KaTeX lazily, only for the
// widgets that draw formulas.
import * as attn from '../../src/js/index.js';

export { attn };

let initPromise = null;
let initDone = false;

/** Resolves when the wasm module is ready; init() runs at most once per page. */
export function whenReady() {
  if (!initPromise) {
    initPromise = attn.init().then((m) => { initDone = true; return m; });
  }
  return initPromise;
}

/** True once init() has resolved (widgets then compute synchronously). */
export function isReady() { return initDone; }

/** An absolute URL for a file next to the widgets (web/...), wherever the package is served from. */
export function assetUrl(path) { return new URL(`../${path}`, import.meta.url).href; }

let katexPromise = null;

/**
 * Loads the vendored KaTeX once. Its @font-face rules go into the document, because fonts declared
 * inside a shadow root are ignored; the class styles are linked inside each shadow root.
 * @returns {Promise<{ renderToString(tex: string, opts?: object): string }>}
 */
export function loadKatex() {
  if (!katexPromise) {
    const href = assetUrl('vendor/katex/katex-fonts.css');
    if (typeof document !== 'undefined' && !document.querySelector(`link[data-aw-katex-fonts]`)) {
      const link = document.createElement('link');
      link.rel = 'stylesheet';
      link.href = href;
      link.dataset.awKatexFonts = '';
      document.head.append(link);
    }
    katexPromise = import('../vendor/katex/katex.mjs').then((m) => m.default);
  }
  return katexPromise;
}
