// The tutorial's formulas: the page's TeX (data-tex) rendered by the vendored KaTeX, display formulas
// split at top-level \qquad so they wrap on a narrow screen, and a formula that still scrolls inside
// its box made a tab stop. Its width is final only once the math fonts have loaded, so it is checked
// again then and whenever a formula's box or content resizes (ResizeObserver + document.fonts: a slow
// machine or phone loads the fonts after the first pass).
import { keepScrollFocusable } from './widgets/figures/a11y.js';
import { loadKatex } from './widgets.js';

const $$ = (sel, root = document) => [...root.querySelectorAll(sel)];

/**
 * A display formula's top-level pieces, split at each \qquad outside braces, environments and
 * \left … \right: rendered one by one, they wrap on a narrow screen instead of running off it.
 */
function formulaParts(tex) {
  const parts = [];
  let depth = 0,
    start = 0;
  for (let i = 0; i < tex.length; i++) {
    const c = tex[i];
    if (c === '{') depth++;
    else if (c === '}') depth--;
    else if (c === '\\') {
      const name = /^\\([a-zA-Z]+|.?)/.exec(tex.slice(i))[1];
      if (name === 'begin' || name === 'left') depth++;
      else if (name === 'end' || name === 'right') depth--;
      else if (name === 'qquad' && depth === 0) {
        parts.push(tex.slice(start, i));
        start = i + name.length + 1;
      }
      i += name.length;
    }
  }
  parts.push(tex.slice(start));
  return parts.map((p) => p.trim()).filter(Boolean);
}

export async function renderMath() {
  const katex = await loadKatex();
  for (const el of $$('.math[data-tex]')) {
    // Our own TeX strings from the page source; KaTeX builds the DOM.
    const display = el.classList.contains('display');
    const parts = display ? formulaParts(el.dataset.tex) : [el.dataset.tex];
    if (parts.length > 1) {
      el.replaceChildren(
        ...parts.map((tex) => {
          const part = document.createElement('span');
          part.className = 'math-part';
          katex.render(tex, part, { displayMode: true, throwOnError: false, output: 'htmlAndMathml' });
          return part;
        }),
      );
      el.classList.add('split');
    } else {
      katex.render(el.dataset.tex, el, {
        displayMode: display,
        throwOnError: false,
        output: 'htmlAndMathml',
      });
    }
    el.classList.add('rendered');
  }
  // A formula that still scrolls inside its box (a narrow screen) is a tab stop, so keys can scroll
  // it. Its width is final only once the math fonts have loaded (on a slow machine or phone that is
  // after this first pass): keepScrollFocusable re-checks on every resize and font load, and the
  // page is ready only once the fonts are.
  const checks = $$('.math.display.rendered').map((el) => keepScrollFocusable(el));
  await document.fonts.ready;
  for (const check of checks) check();
}
