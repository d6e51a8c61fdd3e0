// The interaction of <kv-cache-stepper>: its controls (Step, Run all, Reset, the K/V head picker),
// which say what they apply to, the pacing of Run all, and the words of a hovered cell. The controls
// call back into the element (onStep, onRun, onReset, onHead); they hold no model state.
import { h } from '../base-element.js';
import { exactNumber } from '../figures/draw-util.js';

export class KvStepperControls {
  #step;
  #run;
  #reset;
  #head;
  #status;

  /** @param {{ onStep: Function, onRun: Function, onReset: Function, onHead: (g: number) => void }} hooks */
  constructor({ onStep, onRun, onReset, onHead }) {
    this.#step = h('button', {
      type: 'button',
      text: 'Step',
      'aria-label': 'Step: feed the next token',
      onclick: () => onStep(),
    });
    this.#run = h('button', {
      type: 'button',
      text: 'Run all',
      'aria-label': 'Run all: feed every remaining token',
      onclick: () => onRun(),
    });
    this.#reset = h('button', {
      type: 'button',
      text: 'Reset',
      'aria-label': 'Reset: empty the cache',
      onclick: () => onReset(),
    });
    this.#head = h('select', {
      onchange: () => onHead(Number(this.#head.value)),
    });
    this.#status = h('span', { class: 'status', role: 'status' });
  }

  /** The controls row: the buttons, the labelled K/V head picker and the status line. */
  element() {
    return h(
      'div',
      { class: 'controls' },
      this.#step,
      this.#run,
      this.#reset,
      h('label', {}, h('span', { text: 'K/V head shown' }), this.#head),
      this.#status,
    );
  }

  /**
   * Enables the buttons that apply: Step and Run all while x has tokens left (not `full`), Run all
   * unless one is `running`, Reset unless the cache is `empty`.
   */
  sync({ full, running, empty }) {
    this.#step.disabled = full;
    this.#run.disabled = full || running;
    this.#reset.disabled = empty;
  }

  /** The K/V head picker's options ([{ value, text }], replaced when their count changes) and choice g. */
  showHeads(choices, g) {
    if (this.#head.options.length !== choices.length)
      this.#head.replaceChildren(...choices.map((c) => h('option', c)));
    this.#head.value = String(g);
  }

  /** The status line's text. */
  set status(text) {
    this.#status.textContent = text;
  }
}

/** The pause between the steps of Run all, in ms (0 with prefers-reduced-motion). */
export function runDelay() {
  return matchMedia('(prefers-reduced-motion: reduce)').matches ? 0 : 140;
}

/**
 * What a hovered or focused cell of panel `which` ('x' | 'keys' | 'weights') is, in words; `s` is the
 * session's config, `length` the cache's length, `kvHead` the K/V head shown.
 */
export function cellText(which, cell, { s, length, kvHead }) {
  const size = s.H / s.Hkv;
  if (which === 'x')
    return `x, token ${cell.row}, feature ${cell.col}: ${exactNumber(cell.value)}${cell.row < length ? ' (cached)' : ''}`;
  if (which === 'keys')
    return `cached key of K/V head ${kvHead}, position ${cell.row}, feature ${cell.col}: ${exactNumber(cell.value)}`;
  return `query head ${cell.row} (K/V head ${Math.floor(cell.row / size)}), new query ${length - 1}, key ${cell.col}: weight ${exactNumber(cell.value)}`;
}
