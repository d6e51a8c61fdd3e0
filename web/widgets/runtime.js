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
    initPromise = attn.init().then((m) => {
      initDone = true;
      return m;
    });
  }
  return initPromise;
}

/** True once init() has resolved (widgets then compute synchronously). */
export function isReady() {
  return initDone;
}

let katexPromise = null;

/**
 * Loads the vendored KaTeX once: the library, its stylesheet as a string (`katexCss`, for the shadow
 * roots that show formulas) and its fonts, added to the document (fonts declared inside a shadow root
 * are ignored). Every file is reached by a literal import or `new URL('literal', import.meta.url)`,
 * so a bundler finds all of them.
 * @returns {Promise<{ renderToString(tex: string, opts?: object): string, katexCss: string }>}
 */
export function loadKatex() {
  katexPromise ??= Promise.all([
    import('../vendor/katex/katex.mjs'),
    import('../vendor/katex/katex-styles.mjs'),
    import('../vendor/katex/katex-fonts.mjs'),
  ]).then(([katex, styles, fonts]) => {
    fonts.registerKatexFonts();
    return Object.assign(Object.create(katex.default), { katexCss: styles.default });
  });
  return katexPromise;
}
