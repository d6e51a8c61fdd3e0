// The chrome of <attention-steps> around its matrix: the step tabs, the head selector, the formula,
// the shape, the sentences and the previous / next buttons, and their styles.
import { h } from './base-element.js';
import { shapeSymbols, shapeWords, stepInfo } from './step-info.js';

export const STEPS_CSS = `
.tabs { display: flex; flex-wrap: wrap; gap: 4px; margin: 2px 0 12px; }
.tabs button { font-size: 12.5px; padding: 2px 9px; min-height: 26px; border-radius: 999px; font-variant-numeric: tabular-nums; }
.tabs button .n { opacity: 0.8; margin-right: 4px; font-size: 11px; } /* 0.6 fell below 4.5:1 contrast */
.tabs button[aria-selected="true"] .n { opacity: 1; } /* on the accent, 0.8 falls below 4.5:1 */
.formula { overflow-x: auto; overflow-y: hidden; padding: 2px 0; font-size: 15px; min-height: 2.6em; }
.formula .katex-display { margin: 0.35em 0 0.5em; }
.shape { display: flex; flex-wrap: wrap; gap: 4px 10px; align-items: baseline; margin-bottom: 4px; font-size: 13px; }
.shape code { font-family: var(--aw-mono, ui-monospace, Menlo, Consolas, monospace); font-size: 12.5px;
  padding: 1px 6px; border-radius: 4px; background: color-mix(in srgb, currentColor 7%, transparent); }
.explain { margin: 4px 0 12px; max-width: 72ch; }
.nav { display: flex; justify-content: space-between; gap: 8px; margin-top: 10px; }
.nav button { min-width: 8em; }
.matrix { min-height: 60px; }
`;

/**
 * Fills the chrome of `el` for step i of the result r: `info` is the step's stepInfo, m its matrix,
 * `sizes` the stepInfo sizes of r.
 */
export function renderChrome(el, r, i, info, m, sizes) {
  const n = r.steps.length;
  el._title.textContent = `Step ${i + 1} of ${n} · ${info.title}`;
  // Tabs: rebuilt only when the list of steps changes.
  const sig = r.steps.map((s) => s.name).join();
  if (el._tabSig !== sig) {
    el._tabSig = sig;
    el._tabs.replaceChildren(
      ...r.steps.map((s, k) => {
        const b = h(
          'button',
          { type: 'button', role: 'tab', onclick: () => el.goTo(k) },
          h('span', { class: 'n', text: String(k + 1) }),
          stepInfo(s.name, sizes).short,
        );
        return b;
      }),
    );
  }
  [...el._tabs.children].forEach((b, k) => {
    b.setAttribute('aria-selected', String(k === i));
    b.tabIndex = k === i ? 0 : -1;
    b.title = stepInfo(r.steps[k].name, sizes).title;
  });
  // Head selector: enabled only where the step has a head axis.
  if (el._head.options.length !== r.heads) {
    el._head.replaceChildren(
      ...Array.from({ length: r.heads }, (_, k) => h('option', { value: String(k), text: `Head ${k}` })),
    );
  }
  el._head.value = String(m.head);
  el._head.disabled = !m.hasHead;
  el._head.title = m.hasHead ? '' : 'This step has no head axis';
  if (el._tex !== info.tex) {
    el._tex = info.tex;
    // Our own formula strings only (no user text), so KaTeX's HTML output is safe to insert.
    el._formula.innerHTML = el._katex.renderToString(info.tex, {
      displayMode: true,
      throwOnError: false,
      output: 'htmlAndMathml',
    });
  }
  el._shapeSym.textContent = shapeSymbols(r.steps[i].shape, r.steps[i].axes);
  el._shapeWords.textContent = shapeWords(r.steps[i].shape, r.steps[i].axes);
  el._explain.textContent = info.text.join(' ');
  const label = (k) => (k >= 0 && k < n ? stepInfo(r.steps[k].name, sizes).short : '');
  el._prev.textContent = i > 0 ? `← ${label(i - 1)}` : '← Previous';
  el._next.textContent = i < n - 1 ? `${label(i + 1)} →` : 'Next →';
  el._prev.disabled = i === 0;
  el._next.disabled = i === n - 1;
  // The accessible name starts with the visible text (WCAG 2.5.3, label in name).
  el._prev.setAttribute('aria-label', `${el._prev.textContent.replace('←', '').trim()}: previous step`);
  el._next.setAttribute('aria-label', `${el._next.textContent.replace('→', '').trim()}: next step`);
}
