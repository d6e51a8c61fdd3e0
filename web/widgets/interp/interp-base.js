// What the interpretability widgets (<head-scores>, <logit-attribution>, <patching-view>)
// share: the model, taken the ways <attention-model-view> takes it —
//   `src`    a safetensors file of a TinyTransformer (a preset in web/presets/, or a trainer export);
//            the widget loads it and disposes it when replaced. A preset's metadata names its tokens.
//   `model`  (property) any model the page holds with the library's interpretability API: a
//            TinyTransformer or a PretrainedModel (the widget never disposes it).
// — the sequence (`ids`: attribute "3 1 4 1 5" or property array), the token texts (`tokens`:
// space-separated, or the property; default: the vocabulary's names, else the ids) and the
// vocabulary's names (`vocab` property: string[] by id; from a preset's metadata when loaded by src).
import { AwElement } from '../base-element.js';
import { attn } from '../runtime.js';

/** "3 1 4, 1" → [3, 1, 4, 1]; null when empty. */
export function parseIds(text) {
  if (text === null || text === undefined) return null;
  const parts = String(text)
    .trim()
    .split(/[\s,]+/)
    .filter(Boolean);
  return parts.length ? parts.map(Number) : null;
}

/** The model's layers, heads and vocabulary size (TinyTransformer and PretrainedModel share these names). */
export function modelShape(m) {
  const c = m.config ?? {};
  return { L: m.numLayers ?? c.numLayers, H: m.numHeads ?? c.numHeads, V: m.vocabSize ?? c.vocabSize };
}

/** The logits row of `position` of a forward on `ids` (Float32Array, V). */
export function logitsAt(m, ids, position) {
  const out = m.forward([ids], { attention: false });
  const logits = out.logits ?? out;
  const V = logits.shape.at(-1),
    T = logits.shape.at(-2);
  const p = Math.min(position, T - 1);
  return Float32Array.from(logits.data.subarray(p * V, (p + 1) * V));
}

/** Ids of a logits row, best first (the first `k`). */
export function topIds(row, k = 2) {
  const order = Array.from(row.keys()).sort((a, b) => row[b] - row[a]);
  return order.slice(0, k);
}

/**
 * An optional integer attribute (a `type` of `static attributes`, attributes.js): absent, blank, not
 * an integer or under `min`, it reads as the default (undefined unless declared). With `none`, 'none'
 * reads as null (as the default where one is declared) and null writes 'none'; without it, null
 * removes the attribute, as undefined always does.
 */
export const OPTIONAL_INT = {
  read(text, { default: fallback, min, none }) {
    if (text === null || text.trim() === '') return fallback;
    if (none && text.trim() === 'none') return fallback ?? null;
    const n = Number(text);
    return Number.isInteger(n) && !(n < min) ? n : fallback;
  },
  write(el, name, v, { none }) {
    if (v === undefined || (v === null && !none)) el.removeAttribute(name);
    else el.setAttribute(name, v === null ? 'none' : String(v));
  },
};

/**
 * The prediction a widget explains, as optional integer attributes: `position` (the row), `token`
 * (the explained token) and `against` (the token it is compared with). `none`: null is kept as the
 * attribute 'none' (no comparison), or (false) removes the attribute, so that the widget's own
 * default applies (<patching-view>).
 */
export const targetAttributes = (none = true) => ({
  position: { type: OPTIONAL_INT, none },
  token: { type: OPTIONAL_INT, none },
  against: { type: OPTIONAL_INT, none },
});

export class InterpElement extends AwElement {
  constructor() {
    super();
    this._model = null;
    this._ownModel = null; // loaded from src: ours to dispose
    this._bytes = null; // the file src loaded (a worker opens its own copy)
    this._vocab = null;
  }

  /** The model shown: a TinyTransformer or PretrainedModel the page holds (or use `src`). */
  get model() {
    return this._model;
  }
  set model(m) {
    this._bytes = null;
    this._presetVocab = null;
    this.setModel(m, false);
  }

  /** The ids (T) analysed. */
  get ids() {
    return this._ids ?? parseIds(this.getAttribute('ids'));
  }
  set ids(v) {
    this._ids = v ? Array.from(v, Number) : null;
    this.schedule();
  }

  /** Names of the vocabulary's ids (string[]; a preset's `tokens` when loaded by src). */
  get vocab() {
    return this._vocab ?? this._presetVocab ?? null;
  }
  set vocab(v) {
    this._vocab = v ? Array.from(v, String) : null;
    this.schedule();
  }

  /** The texts of `ids` (attribute or property; default: their vocabulary names, else the ids). */
  get tokens() {
    if (this._tokens) return this._tokens;
    const text = this.getAttribute('tokens');
    if (text) return text.trim().split(/\s+/);
    return (this.ids ?? []).map((id) => this.tokenName(id));
  }
  set tokens(v) {
    this._tokens = v ? Array.from(v, String) : null;
    this.schedule();
  }

  /** An id's name in the vocabulary (the id itself when there is none). */
  tokenName(id) {
    const v = this.vocab;
    return v && v[id] !== undefined ? v[id] : String(id);
  }

  /** The state's own part: the ids and tokens set as properties, and the model reference. */
  extraState() {
    return { ids: this._ids ?? null, tokens: this._tokens ?? null, model: this.modelState() };
  }

  applyExtraState(s) {
    this._ids = Array.isArray(s.ids) ? s.ids.map(Number) : null;
    this._tokens = Array.isArray(s.tokens) ? s.tokens.map(String) : null;
  }

  /** The model's reference for the state: { src } or { config, source: 'set from JS' }. */
  modelState() {
    const m = this._model;
    if (this.getAttribute('src')) return { src: this.getAttribute('src') };
    if (!m) return null;
    let config = null; // plain JSON, or null when the config holds what JSON cannot (a BigInt, a cycle)
    try {
      config = JSON.parse(
        JSON.stringify(m.config ?? null, (k, v) => (ArrayBuffer.isView(v) ? Array.from(v) : v)),
      );
    } catch {
      /* null */
    }
    return { config, source: 'set from JS' };
  }

  attributeChangedCallback(name, old, value) {
    if (name === 'src' && value && value !== old) this.#load(value);
    super.attributeChangedCallback();
  }

  disconnectedCallback() {
    super.disconnectedCallback();
    this.onDisconnect?.();
  }

  async #load(src) {
    const url = new URL(src, document.baseURI).href;
    this._loading = url;
    try {
      await this.prepare();
      const response = await fetch(url);
      if (!response.ok) throw new Error(`${response.status} ${response.statusText}`);
      const bytes = new Uint8Array(await response.arrayBuffer());
      if (this._loading !== url) return; // another src since
      let vocab = null;
      try {
        const preset = JSON.parse(attn.readSafetensorsMetadata(bytes).preset ?? 'null');
        if (Array.isArray(preset?.tokens)) vocab = preset.tokens.map(String);
      } catch {
        /* no preset description: names are the ids */
      }
      const m = attn.TinyTransformer.fromSafetensors(bytes);
      this._bytes = bytes;
      this._presetVocab = vocab;
      this.setModel(m, true);
      this.emit('model-load', { src });
    } catch (error) {
      this.showError(`Could not load the model “${src}”: ${error.message}`);
    }
  }

  /**
   * Opens (layer, head) of the model on `ids` in the <attention-steps> whose id the `steps` attribute
   * names (a TinyTransformer: its layer's trace, step "weights", that head), as <attention-model-view>
   * does. Returns whether it did.
   */
  openInSteps(layer, head, ids) {
    const m = this._model,
      id = this.getAttribute('steps');
    const target = id && document.getElementById(id);
    const c = m?.config;
    if (!target || !ids?.length || !c?.dModel || typeof m.forward !== 'function') return false;
    try {
      const { trace } = m.forward([ids], { attention: false, trace: { layers: [layer] } });
      const tokens = ids.map((t) => this.tokenName(t));
      target.trace = { tokens, steps: trace[layer], heads: c.numHeads, dModel: c.dModel, causal: c.causal };
      target.setAttribute('head', String(head));
      target.setAttribute('step', 'weights');
      return true;
    } catch (error) {
      this.showError(`${error.code ?? 'ERROR'}: ${error.message}`);
      return false;
    }
  }

  /** Sets the model (own: loaded here, disposed when replaced) and redraws. */
  setModel(m, own) {
    if (this._ownModel && this._ownModel !== m) this._ownModel.dispose();
    this._ownModel = own ? m : null;
    this._model = m;
    this.modelChanged?.();
    this.schedule();
  }
}

/**
 * A labelled token chooser: a <select> of the vocabulary (V ≤ 512; option `none` adds "none"), or
 * a number input for larger vocabularies. `get()` → id | null (none) | undefined (empty: default);
 * `set(v)` shows a value; `fill(V, nameOf)` (re)builds the options.
 */
export function tokenPicker(labelText, { none = false, onchange } = {}) {
  const wrap = document.createElement('label');
  wrap.className = 'inline';
  const span = document.createElement('span');
  span.textContent = labelText;
  let control = null,
    V = -1;
  const picker = {
    label: wrap,
    fill(vocabSize, nameOf) {
      const small = vocabSize <= 512;
      const key = `${vocabSize}|${small ? Array.from({ length: vocabSize }, (_, i) => nameOf(i)).join('\u0000') : ''}`;
      if (control && V === key) return;
      V = key;
      const old = control ? picker.get() : undefined;
      if (small) {
        control = document.createElement('select');
        const opts = [];
        const auto = document.createElement('option');
        auto.value = '';
        auto.textContent = 'default';
        opts.push(auto);
        if (none) {
          const o = document.createElement('option');
          o.value = 'none';
          o.textContent = 'none';
          opts.push(o);
        }
        for (let i = 0; i < vocabSize; i++) {
          const o = document.createElement('option');
          o.value = String(i);
          o.textContent = nameOf(i) === String(i) ? String(i) : `${nameOf(i)} (${i})`;
          opts.push(o);
        }
        control.append(...opts);
      } else {
        control = document.createElement('input');
        control.type = 'number';
        control.min = '0';
        control.max = String(vocabSize - 1);
        control.placeholder = none ? 'default / none' : 'default';
        control.size = 7;
      }
      control.addEventListener('change', () => onchange?.(picker.get()));
      wrap.replaceChildren(span, control);
      picker.set(old);
    },
    get() {
      if (!control) return undefined;
      const v = control.value.trim();
      if (v === '') return undefined;
      if (v === 'none') return null;
      const n = Number(v);
      return Number.isInteger(n) ? n : undefined;
    },
    set(v) {
      if (!control) return;
      control.value = v === null ? (none ? 'none' : '') : v === undefined ? '' : String(v);
    },
  };
  wrap.append(span);
  return picker;
}
