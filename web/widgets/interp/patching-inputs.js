// <patching-view>'s inputs: the controls that edit them (the clean and corrupted ids as text, the
// token pair, the component and the method: each writes its attribute of the element), the ids
// typed as text, the plan of a run (defaults filled from the model's predictions) and the sentence
// that describes it under the controls.
import { h } from '../base-element.js';
import { logitsAt, modelShape, tokenPicker, topIds } from './interp-base.js';

/** Text of ids → ids: vocabulary names (of `vocab`) or numbers; null for empty text. */
export function parseIds(text, vocab) {
  if (!text || !text.trim()) return null;
  const names = new Map((vocab ?? []).map((t, i) => [t, i]));
  return text
    .trim()
    .split(/[\s,]+/)
    .map((p) => (names.has(p) ? names.get(p) : Number(p)));
}

/**
 * What a run of `el` (its public inputs: model, clean, corrupted, position, token, against,
 * component) would use: ids, position and the token pair (defaults filled from the two runs' top
 * predictions). Throws with a readable message when the inputs are incomplete.
 */
export function planPatch(el) {
  const m = el.model;
  if (!m) throw new Error('No model yet.');
  const clean = el.clean,
    corrupted = el.corrupted;
  if (!clean || !corrupted)
    throw new Error('Type a clean and a corrupted input (token ids, space-separated).');
  if (clean.length !== corrupted.length)
    throw new Error(
      `The clean input has ${clean.length} tokens and the corrupted one ${corrupted.length}: they must have one length.`,
    );
  const { V } = modelShape(m);
  for (const id of [...clean, ...corrupted])
    if (!Number.isInteger(id) || id < 0 || id >= V)
      throw new Error(`“${id}” is not a token of this model (ids 0 … ${V - 1}).`);
  const T = clean.length;
  const position = el.position ?? T - 1;
  if (!Number.isInteger(position) || position < 0 || position >= T)
    throw new Error(`position must be in 0 … ${T - 1}.`);
  let token = el.token,
    against = el.against;
  if (token === undefined) token = topIds(logitsAt(m, clean, position), 1)[0];
  if (against === undefined) against = topIds(logitsAt(m, corrupted, position), 2).find((t) => t !== token);
  return { clean, corrupted, position, token, against, component: el.component };
}

/** The sentence above the grid: what the plan p of `el` compares, and where the inputs differ. */
export function planSummary(el, p) {
  const nameOf = (i) => el.tokenName(i);
  const changed = p.clean.map((id, i) => (id !== p.corrupted[i] ? i : -1)).filter((i) => i >= 0);
  return (
    `At position ${p.position} (after “${nameOf(p.clean[p.position])}”): the logit of “${nameOf(p.token)}”` +
    `${el.token === undefined ? ' (the clean run’s top prediction)' : ''} minus that of “${nameOf(p.against)}”` +
    `${el.against === undefined ? ' (the corrupted run’s top prediction)' : ''}. ` +
    `${changed.length ? `The inputs differ at position${changed.length > 1 ? 's' : ''} ${changed.join(', ')}.` : 'The inputs are the same: nothing to explain.'}`
  );
}

const select = (onchange, options) =>
  h('select', { onchange }, ...options.map(([value, text]) => h('option', { value, text })));

/** A labelled text input whose change sets the attribute `name` of `host`: [label, input]. */
function field(host, name, label) {
  const input = h('input', {
    type: 'text',
    id: `pv-${name}`,
    autocomplete: 'off',
    spellcheck: 'false',
    onchange: () => host.setAttribute(name, input.value.trim()),
  });
  return [h('label', { for: `pv-${name}`, text: label }), input];
}

/**
 * The controls of a <patching-view> (`host`): they show its attributes (show()) and write them back
 * when changed; the summary line says what a run compares, or why there is none.
 */
export class PatchingInputs {
  #host;
  #clean;
  #corrupted;
  #token;
  #against;
  #component;
  #method;
  #summary = h('p', { class: 'muted small' });

  /** `setAttr(name, v)` sets the attribute `name` of the host, or removes it for none (the default). */
  constructor(host, setAttr) {
    this.#host = host;
    this.#token = tokenPicker('Token', { onchange: (v) => setAttr('token', v) });
    this.#against = tokenPicker('against', { onchange: (v) => setAttr('against', v) });
    this.#component = select(
      () => host.setAttribute('component', this.#component.value),
      [
        ['head', 'each head (layer × head)'],
        ['residual', 'residual stream (layer × position)'],
        ['mlp', 'each MLP output (layer × position)'],
      ],
    );
    this.#method = select(
      () => host.setAttribute('method', this.#method.value),
      [
        ['exact', 'exact (one run per entry)'],
        ['attribution', 'attribution (one backward)'],
        ['both', 'both, compared'],
      ],
    );
  }

  /** The parts to lay out: the two text inputs, the row of the other controls, the summary line. */
  parts() {
    const [cleanLabel, clean] = field(this.#host, 'clean', 'Clean');
    const [corruptedLabel, corrupted] = field(this.#host, 'corrupted', 'Corrupted');
    this.#clean = clean;
    this.#corrupted = corrupted;
    const label = (text, control) => h('label', { class: 'inline' }, h('span', { text }), control);
    return {
      inputs: h('div', { class: 'inputs' }, cleanLabel, clean, corruptedLabel, corrupted),
      controls: h(
        'div',
        { class: 'controls' },
        this.#token.label,
        this.#against.label,
        label('Patch', this.#component),
        label('Method', this.#method),
      ),
      summary: this.#summary,
    };
  }

  /** Shows the host's attributes in the controls (a text input being edited is left alone). */
  show() {
    const host = this.#host;
    const { V } = modelShape(host.model);
    const nameOf = (i) => host.tokenName(i);
    this.#token.fill(V, nameOf);
    this.#against.fill(V, nameOf);
    this.#token.set(host.token);
    this.#against.set(host.against);
    if (host.shadowRoot.activeElement !== this.#clean) this.#clean.value = host.getAttribute('clean') ?? '';
    if (host.shadowRoot.activeElement !== this.#corrupted)
      this.#corrupted.value = host.getAttribute('corrupted') ?? '';
    this.#component.value = host.component;
    this.#method.value = host.method;
  }

  /** Writes the summary line. */
  say(text) {
    this.#summary.textContent = text;
  }
}
