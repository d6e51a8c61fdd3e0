// Base classes of the custom elements.
//   AwElement     Shadow DOM with the shared stylesheet, the export toolbar (PNG/CSV/JSON), an error
//                 line, a tooltip, an aria-live readout, resize handling, one `ready` event, and the
//                 attributes a subclass declares once (`static attributes`: observed, and JS properties).
//   ModelElement  adds the model config: attributes (text, d-model, heads, mask, …) and the same as
//                 JS properties (el.dModel = 32) or all at once (el.config = {...}).
// Subclasses implement render() (synchronous) and getCSV() / getJSON() / pngCanvas().
import { whenReady, isReady } from './runtime.js';
import { canvasToBlob, download, slug } from './export.js';
import { CONFIG_ATTRIBUTES, DEFAULT_CONFIG, configFromAttributes, normalizeConfig } from './model.js';
import { declaredAttributes } from './attributes.js';
import { BASE_CSS } from './styles.js';
import { liveWidgets, track, untrack } from './print.js';

let sheet = null;
function sharedSheet() {
  if (!sheet) (sheet = new CSSStyleSheet()).replaceSync(BASE_CSS);
  return sheet;
}

// Canvases take their colours when they draw (the page's background and --aw-* variables): when the
// system's colour scheme changes, every connected widget draws again. (A page's own theme switch,
// like the tutorial's, calls refresh() itself.)
// The connected widgets are print.js's registry (track / untrack below).
globalThis.matchMedia?.('(prefers-color-scheme: dark)').addEventListener?.('change', () => {
  for (const el of liveWidgets()) el.refresh();
});

/** Creates an element with attributes; text goes through textContent (never parsed as HTML). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === false || v === null || v === undefined) continue;
    if (k === 'text') el.textContent = v;
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : v);
  }
  el.append(...children.filter((c) => c !== null && c !== undefined && c !== false));
  return el;
}

export class AwElement extends HTMLElement {
  /** A subclass's own attributes (besides ModelElement's config ones), declared once (attributes.js). */
  static attributes = {};
  /** Their names, in order (their JS properties installed on first use). */
  static get ownAttributes() {
    return declaredAttributes(this);
  }
  static get observedAttributes() {
    return this.ownAttributes;
  }

  constructor() {
    super();
    this.attachShadow({ mode: 'open' });
    this.shadowRoot.adoptedStyleSheets = [sharedSheet()];
    this._scheduled = false;
    this._readyFired = false;
    // Re-render when the available width changes (height changes are our own doing).
    this._lastWidth = 0;
    this._resize = new ResizeObserver(() => {
      if (Math.abs(this.clientWidth - this._lastWidth) >= 1) {
        this._lastWidth = this.clientWidth;
        this.schedule();
      }
    });
  }

  /** A short name used in export file names ("attention-heatmap"). */
  get exportName() {
    return this.localName;
  }

  connectedCallback() {
    if (!this._built) {
      this._built = true;
      this.build();
    }
    this._resize.observe(this);
    track(this);
    if (!this._preparing) {
      this._preparing = this.prepare().then(
        () => {
          this._prepared = true;
          this.schedule();
        },
        (e) => this.showError(`Could not load the widget: ${e.message}`),
      );
    } else if (this._prepared) this.schedule();
  }

  /** What must load before the first render: the wasm module (subclasses may add to it). */
  prepare() {
    return whenReady();
  }

  disconnectedCallback() {
    this._resize.disconnect();
    untrack(this);
  }

  attributeChangedCallback() {
    this.schedule();
  }

  /** Renders on the next microtask (coalesces several attribute/property changes). */
  schedule() {
    this._dirty = true;
    if (this._scheduled) return;
    this._scheduled = true;
    queueMicrotask(() => {
      this._scheduled = false;
      if (this._dirty) this.refresh();
    });
  }

  /** Renders now (synchronously) if the wasm module is ready. Returns true when it rendered. */
  refresh() {
    if (!this._prepared || !isReady() || !this.isConnected) return false;
    this._dirty = false;
    this.render();
    if (!this._readyFired) {
      this._readyFired = true;
      this.dataset.ready = '';
      this.emit('ready', {});
    }
    return true;
  }

  /** Dispatches a bubbling, composed CustomEvent. */
  emit(name, detail) {
    this.dispatchEvent(new CustomEvent(name, { detail, bubbles: true, composed: true }));
  }

  /** Width available for drawing inside the host. */
  get contentWidth() {
    const cs = getComputedStyle(this);
    const w = this.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
    return Math.max(160, Math.floor(w || 600));
  }

  // ---- shared UI pieces ----------------------------------------------------------------------

  /** The PNG / CSV / JSON buttons (and SVG, for widgets that have toSVG()). */
  exportBar() {
    const b = (fmt, label) =>
      h('button', {
        type: 'button',
        class: 'export',
        'aria-label': `Download ${label}`,
        title: `Download ${label}`,
        text: fmt.toUpperCase(),
        onclick: () => this.download(fmt),
      });
    return h(
      'div',
      { class: 'exports', role: 'group', 'aria-label': 'Export' },
      b('png', 'the picture as PNG'),
      typeof this.toSVG === 'function' ? b('svg', 'the picture as SVG (vector)') : null,
      b('csv', 'the matrix as CSV'),
      b('json', 'the matrix as JSON'),
    );
  }

  /** Shows (or with '' hides) an error line. */
  showError(message) {
    if (!this._errorEl) return;
    this._errorEl.textContent = message || '';
    this._errorEl.hidden = !message;
  }

  /** Shows a tooltip near client point (x, y); lines are plain strings. */
  showTooltip(x, y, lines) {
    const tip = this._tooltip;
    if (!tip) return;
    if (!lines) {
      tip.hidden = true;
      return;
    }
    tip.replaceChildren(...lines.map((l, i) => h('div', { class: i === 0 ? 'tip-head' : '', text: l })));
    tip.hidden = false;
    const host = this.getBoundingClientRect();
    const [tw, th] = [tip.offsetWidth, tip.offsetHeight];
    let [left, top] = [x - host.left + 14, y - host.top + 14];
    if (left + tw > host.width - 4) left = Math.max(4, x - host.left - tw - 14);
    if (top + th > host.height - 4) top = Math.max(4, y - host.top - th - 14);
    tip.style.left = `${left}px`;
    tip.style.top = `${top}px`;
  }

  /** Common structure: error line, tooltip. Subclasses call this from build(). */
  baseParts() {
    this._errorEl = h('div', { class: 'error', role: 'alert', hidden: true });
    this._tooltip = h('div', { class: 'tooltip', hidden: true, 'aria-hidden': 'true' });
    return [this._errorEl, this._tooltip];
  }

  // ---- state ---------------------------------------------------------------------

  /**
   * What the picture depends on, as a plain JSON-able object: { widget, version, attributes, ... }.
   * `attributes`: the observed attributes present (as text); subclasses add what lives in
   * properties (extraState()). Setting a state taken from another instance (same data) redraws the
   * same picture: observed attributes not in it are removed, the others set, then applyExtraState().
   */
  get state() {
    const attributes = {};
    for (const name of this.constructor.observedAttributes)
      if (name !== 'style' && this.hasAttribute(name)) attributes[name] = this.getAttribute(name);
    return stateJSON({
      widget: this.localName,
      version: STATE_VERSION,
      attributes,
      ...this.extraState(),
      ...(this._context ? { context: this._context } : {}),
    });
  }

  set state(s) {
    if (!s || typeof s !== 'object') throw new TypeError('state must be an object (from el.state)');
    if (s.widget && s.widget !== this.localName)
      throw new Error(`state is of <${s.widget}>, not <${this.localName}>`);
    const attrs = s.attributes && typeof s.attributes === 'object' ? s.attributes : {};
    for (const name of this.constructor.observedAttributes) {
      if (name === 'style') continue;
      if (Object.prototype.hasOwnProperty.call(attrs, name) && attrs[name] !== null) {
        if (this.getAttribute(name) !== String(attrs[name])) this.setAttribute(name, String(attrs[name]));
      } else if (this.hasAttribute(name)) this.removeAttribute(name);
    }
    this.applyExtraState(s);
    this._context = s.context && typeof s.context === 'object' ? s.context : null;
    this.schedule();
  }

  /**
   * What the page says the picture is of, in its own words (a model reference, the page's own state):
   * a JSON-able object or null. It does not change the picture; el.state carries it as `context`, so
   * the JSON export and the SVG's <metadata> tell a page where the figure came from (the demo opens
   * its figures by it).
   */
  get context() {
    return this._context ?? null;
  }
  set context(c) {
    this._context = c && typeof c === 'object' ? JSON.parse(JSON.stringify(c)) : null;
  }

  /** The part of the state kept in properties rather than attributes (subclasses). */
  extraState() {
    return {};
  }

  /** Applies extraState()'s part of a state (subclasses). */
  applyExtraState() {}

  // ---- exports -------------------------------------------------------------------------------

  /** @returns {Promise<Blob>} what the widget draws, as a PNG */
  getPNG() {
    return canvasToBlob(this.pngCanvas());
  }

  /** @returns {string} a data: URL of the PNG */
  getPNGDataURL() {
    return this.pngCanvas().toDataURL('image/png');
  }

  /**
   * Downloads 'png' | 'svg' | 'csv' | 'json' ('svg' where the widget has toSVG(); svgForDownload()
   * may pick a smaller figure). Synchronous on purpose: the file is saved within the click
   * that asked for it, so browsers never treat it as an unrequested (blockable) download.
   */
  download(format) {
    const name = `${slug(this.exportName)}${this.exportSuffix ? `-${slug(this.exportSuffix)}` : ''}`;
    if (format === 'png') download(`${name}.png`, dataUrlToBlob(this.pngCanvas().toDataURL('image/png')));
    else if (format === 'svg' && typeof this.toSVG === 'function') {
      let out;
      try {
        out = this.svgForDownload ? this.svgForDownload() : { svg: this.toSVG() };
      } catch (e) {
        this.showError(e.message);
        return;
      }
      const { svg, suffix = '' } = out;
      if (svg) download(`${name}${suffix}.svg`, svg, 'image/svg+xml');
    } else if (format === 'csv') download(`${name}.csv`, this.getCSV(), 'text/csv');
    else if (format === 'json') download(`${name}.json`, this.getJSON(), 'application/json');
    else throw new Error(`unknown export format ${format}`);
  }
}

/** The version of the state objects' shape. */
export const STATE_VERSION = 1;

/**
 * A state made JSON-able: typed arrays → arrays, and non-finite numbers (−∞ of masked cells) as
 * the strings '-Infinity' / 'Infinity' / 'NaN' so a round trip keeps every bit (numbersFromState).
 */
export function stateJSON(value) {
  const num = (x) => (Number.isFinite(x) ? x : String(x));
  return JSON.parse(
    JSON.stringify(value, (k, v) => {
      if (ArrayBuffer.isView(v)) return Array.from(v, num);
      if (Array.isArray(v)) return v.map((x) => (typeof x === 'number' ? num(x) : x));
      return typeof v === 'number' ? num(v) : v;
    }),
  );
}

/** Numbers written by stateJSON back to a Float32Array. */
export function numbersFromState(list) {
  return Float32Array.from(list ?? [], (x) => Number(x));
}

/** A getJSON() object with the widget's state added (the JSON export carries what reproduces it). */
export function withState(el, obj) {
  if (!obj || typeof obj !== 'object' || Array.isArray(obj)) return obj;
  let state;
  try {
    state = el.state;
  } catch (e) {
    state = { error: e.message };
  }
  return { ...obj, state };
}

/** data: URL → Blob, synchronously. */
function dataUrlToBlob(url) {
  const [head, body] = url.split(',');
  const bytes = Uint8Array.from(atob(body), (c) => c.charCodeAt(0));
  return new Blob([bytes], { type: /data:([^;]+)/.exec(head)[1] });
}

/** A widget driven by the model config (attributes + properties). */
export class ModelElement extends AwElement {
  static get observedAttributes() {
    return [...CONFIG_ATTRIBUTES, 'tokens', ...this.ownAttributes];
  }

  constructor() {
    super();
    this._props = {}; // config keys set from JS; they win over attributes
  }

  /** The effective, normalized config (defaults ← attributes ← properties). */
  get config() {
    return normalizeConfig({ ...configFromAttributes(this), ...this._props });
  }

  /** Sets the whole config from JS (keys not given fall back to attributes, then defaults). */
  set config(c) {
    this._props = { ...(c || {}) };
    this.schedule();
  }

  /** Changes some config keys, keeping the others. */
  setConfig(partial) {
    this._props = { ...this._props, ...partial };
    this.schedule();
  }

  /**
   * The state adds the whole effective config (`config`: every key of WidgetConfig; a stateDict set
   * from JS is not stored: `stateDict: 'set from JS'` says one was in use, and setting the state
   * keeps the target's own).
   */
  extraState() {
    const c = this.config;
    return { config: { ...c, stateDict: null }, ...(c.stateDict ? { stateDict: 'set from JS' } : {}) };
  }

  applyExtraState(s) {
    if (!s.config || typeof s.config !== 'object') return;
    // Only what the (just set) attributes do not already say becomes a JS-set key (tokens, a config
    // given as properties), so the element stays driven by its attributes where it can be.
    const fromAttributes = normalizeConfig(configFromAttributes(this));
    const props = s.stateDict && this._props.stateDict ? { stateDict: this._props.stateDict } : {};
    for (const [k, v] of Object.entries(s.config)) {
      if (k !== 'stateDict' && k in DEFAULT_CONFIG && JSON.stringify(fromAttributes[k]) !== JSON.stringify(v))
        props[k] = v;
    }
    this._props = props;
  }
}

// One JS property per config key: el.text, el.dModel, el.heads, el.mask, el.toggles, el.stateDict …
for (const key of Object.keys(DEFAULT_CONFIG))
  Object.defineProperty(ModelElement.prototype, key, {
    get() {
      return this.config[key];
    },
    set(v) {
      this.setConfig({ [key]: v });
    },
    configurable: true,
  });
