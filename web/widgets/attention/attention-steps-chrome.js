// The chrome of <attention-steps> around its matrix: the step tabs, the head selector, the formula,
// the shape, the sentences and the previous / next buttons, and their styles. A StepsChrome makes
// those elements (the element lays them out), fills them for the step shown, and remembers what it
// last built them from (the list of steps, the formula) so it rebuilds only what changed.
import { keepScrollFocusable } from '../figures/a11y.js';
import { h } from '../base-element.js';
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

export class StepsChrome {
  #tabSig = null; // the step names the tabs were built for
  #tex = null; // the formula rendered into `formula`
  #katex = null;
  #goTo;

  /**
   * The parts, as public read-only elements the element places in its layout: title, head (the
   * head <select>), tabs, formula, shapeSym, shapeWords, explain, prev, next. Hooks: goTo(index)
   * for a tab's click, onHead(head) for the selector, onTabKey(event) for a key on the tab list,
   * onPrev() and onNext() for the buttons.
   */
  constructor({ goTo, onHead, onTabKey, onPrev, onNext }) {
    this.#goTo = goTo;
    this.title = h('span', { class: 'title', 'aria-live': 'polite' });
    this.head = h('select', { 'aria-label': 'Head', onchange: () => onHead(Number(this.head.value)) });
    this.tabs = h('div', { class: 'tabs', role: 'tablist', 'aria-label': 'Steps of the attention pass' });
    this.tabs.addEventListener('keydown', onTabKey);
    this.formula = h('div', { class: 'formula', 'aria-hidden': 'false' });
    // A formula wider than a narrow screen scrolls in its box: then it is a tab stop.
    keepScrollFocusable(this.formula);
    this.shapeSym = h('code');
    this.shapeWords = h('span', { class: 'muted' });
    this.explain = h('p', { class: 'explain' });
    this.prev = h('button', { type: 'button', onclick: () => onPrev() });
    this.next = h('button', { type: 'button', onclick: () => onNext() });
    Object.freeze(this);
  }

  /** KaTeX, once loaded (runtime.js loadKatex): the formula is rendered with it. */
  set katex(k) {
    this.#katex = k;
  }

  /** Moves the keyboard focus to tab i. */
  focusTab(i) {
    this.tabs.children[i]?.focus();
  }

  /**
   * Fills the chrome for step i of the result r: `info` is the step's stepInfo, m its matrix,
   * `sizes` the stepInfo sizes of r.
   */
  render(r, i, info, m, sizes) {
    const n = r.steps.length;
    this.title.textContent = `Step ${i + 1} of ${n} · ${info.title}`;
    this.#renderTabs(r, i, sizes);
    this.#renderHead(r.heads, m);
    if (this.#tex !== info.tex) {
      this.#tex = info.tex;
      // Our own formula strings only (no user text), so KaTeX's HTML output is safe to insert.
      this.formula.innerHTML = this.#katex.renderToString(info.tex, {
        displayMode: true,
        throwOnError: false,
        output: 'htmlAndMathml',
      });
    }
    this.shapeSym.textContent = shapeSymbols(r.steps[i].shape, r.steps[i].axes);
    this.shapeWords.textContent = shapeWords(r.steps[i].shape, r.steps[i].axes);
    this.explain.textContent = info.text.join(' ');
    this.#renderNav(r, i, sizes);
  }

  // Tabs: rebuilt only when the list of steps changes.
  #renderTabs(r, i, sizes) {
    const sig = r.steps.map((s) => s.name).join();
    if (this.#tabSig !== sig) {
      this.#tabSig = sig;
      this.tabs.replaceChildren(
        ...r.steps.map((s, k) => {
          const b = h(
            'button',
            { type: 'button', role: 'tab', onclick: () => this.#goTo(k) },
            h('span', { class: 'n', text: String(k + 1) }),
            stepInfo(s.name, sizes).short,
          );
          return b;
        }),
      );
    }
    [...this.tabs.children].forEach((b, k) => {
      b.setAttribute('aria-selected', String(k === i));
      b.tabIndex = k === i ? 0 : -1;
      b.title = stepInfo(r.steps[k].name, sizes).title;
    });
  }

  // Head selector: enabled only where the step has a head axis.
  #renderHead(heads, m) {
    if (this.head.options.length !== heads) {
      this.head.replaceChildren(
        ...Array.from({ length: heads }, (_, k) => h('option', { value: String(k), text: `Head ${k}` })),
      );
    }
    this.head.value = String(m.head);
    this.head.disabled = !m.hasHead;
    this.head.title = m.hasHead ? '' : 'This step has no head axis';
  }

  #renderNav(r, i, sizes) {
    const n = r.steps.length;
    const label = (k) => (k >= 0 && k < n ? stepInfo(r.steps[k].name, sizes).short : '');
    this.prev.textContent = i > 0 ? `← ${label(i - 1)}` : '← Previous';
    this.next.textContent = i < n - 1 ? `${label(i + 1)} →` : 'Next →';
    this.prev.disabled = i === 0;
    this.next.disabled = i === n - 1;
    // The accessible name starts with the visible text (WCAG 2.5.3, label in name).
    this.prev.setAttribute('aria-label', `${this.prev.textContent.replace('←', '').trim()}: previous step`);
    this.next.setAttribute('aria-label', `${this.next.textContent.replace('→', '').trim()}: next step`);
  }
}
