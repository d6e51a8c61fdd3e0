// <attention-trainer>: trains a TinyTransformer on a toy task in a Web Worker (its own wasm
// instance: the page never waits on a step) and shows it learning: loss and accuracy curves, steps/s,
// and every layer × head's attention on a fixed probe sequence, refreshed as it learns. Click a head
// (or its Ablate button) to zero its output and see the accuracy without it. Export saves the
// weights as safetensors (TinyTransformer.toSafetensors(), the presets' format).
//
// Attributes (the initial settings; the form changes them): task (copy | reverse | sort | induction,
// default reverse), length (6), layers (2), d-model (32), heads (4), mlp (on), positional
// (learned | sinusoidal | rope | alibi | none), lr (0.01), batch (32), seed (1), autostart (train on load).
import { AwElement, h, withState } from '../base-element.js';
import { HeatmapView } from '../figures/heatmap-view.js';
import { drawXY } from '../figures/xy-chart.js';
import { jsonText } from '../export.js';
import { themeOf } from '../figures/draw-util.js';
import { TILE_GAP, tileWidth, trainerSVG } from './attention-trainer-svg.js';
import { WorkerClient } from '../../workers/rpc.js';

const DEFAULTS = {
  task: 'reverse',
  length: 6,
  layers: 2,
  dModel: 32,
  heads: 4,
  mlp: true,
  positional: 'learned',
  lr: 0.01,
  batch: 32,
  seed: 1,
  numSymbols: 10,
};
const CSS = `
  form.settings { display: flex; flex-wrap: wrap; gap: 8px 14px; align-items: end; margin-bottom: 8px; }
  form.settings label { display: flex; flex-direction: column; font-size: 12px; gap: 2px; }
  form.settings label.check { flex-direction: row; align-items: center; gap: 6px; }
  form.settings input[type=number] { width: 5.5em; }
  .buttons { display: flex; flex-wrap: wrap; gap: 6px; margin: 6px 0; }
  .charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(240px, 1fr)); gap: ${TILE_GAP}px; }
  .heads { display: grid; gap: ${TILE_GAP}px; margin-top: 8px; }
  .layer { display: flex; flex-wrap: wrap; gap: ${TILE_GAP}px; align-items: start; }
  .tile { display: flex; flex-direction: column; gap: 4px; }
  .tile.ablated canvas { opacity: 0.35; }
  .status { font-variant-numeric: tabular-nums; }`;

export class AttentionTrainer extends AwElement {
  // The initial settings, read by `settings` below (the form's changes win); no JS properties (the
  // settings are changed through the form, or el.state). autostart is read once, when connected.
  static attributes = {
    task: { property: false },
    length: { property: false },
    layers: { property: false },
    'd-model': { property: false },
    heads: { property: false },
    mlp: { property: false },
    positional: { property: false },
    lr: { property: false },
    batch: { property: false },
    seed: { property: false },
  };

  build() {
    const field = (label, input) => h('label', {}, label, input);
    const num = (name, min, max, step) =>
      h('input', { type: 'number', name, min: String(min), max: String(max), step: String(step) });
    const select = (name, options) =>
      h('select', { name }, ...options.map((o) => h('option', { value: String(o), text: String(o) })));
    this._form = h(
      'form',
      { class: 'settings', 'aria-label': 'Task and model' },
      field('Task', select('task', ['copy', 'reverse', 'sort', 'induction'])),
      field('Length', num('taskLength', 1, 16, 1)),
      field('Layers', num('layers', 1, 4, 1)),
      field('dModel', select('dModel', [8, 16, 32, 64])),
      field('Heads', select('heads', [1, 2, 4, 8])),
      field('Positions', select('positional', ['learned', 'sinusoidal', 'rope', 'alibi', 'none'])),
      field('Learning rate', num('lr', 0.0001, 0.1, 0.0001)),
      h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'mlp' }), 'MLP'),
    );
    this._form.addEventListener('submit', (e) => e.preventDefault());
    this._form.addEventListener('change', () => this.#applySettings());
    const button = (text, onclick) => h('button', { type: 'button', text, onclick });
    this._buttons = {
      train: button('Train', () => this.train()),
      pause: button('Pause', () => this.pause()),
      step: button('Step', () => this.stepOnce()),
      reset: button('Reset', () => this.reset()),
      export: button('Export weights', () => this.#download()),
    };
    this._status = h('div', { class: 'status', role: 'status', 'aria-live': 'polite', text: 'Loading…' });
    this._ablation = h('div', { class: 'muted small', 'aria-live': 'polite' });
    this._lossCanvas = h('canvas', { role: 'img', 'aria-label': 'Loss against training steps' });
    this._accCanvas = h('canvas', { role: 'img', 'aria-label': 'Accuracy against training steps' });
    this._heads = h('div', { class: 'heads' });
    this.shadowRoot.append(
      h('style', { text: CSS }),
      h('div', { class: 'bar' }, h('span', { class: 'title', text: 'Watch a transformer learn' })),
      ...this.baseParts(),
      this._form,
      h('div', { class: 'buttons' }, ...Object.values(this._buttons)),
      this._status,
      h('div', { class: 'charts' }, this._lossCanvas, this._accCanvas),
      this._ablation,
      this._heads,
    );
    this._tiles = [];
    this.snapshot = null;
  }

  /** Renders (and first fires `ready`) once the worker has sent a snapshot. */
  refresh() {
    return this.snapshot ? super.refresh() : false;
  }

  /** The settings the worker trains with: attributes, then the form's changes. */
  get settings() {
    const a = (name) => this.getAttribute(name);
    const num = (name, fallback) =>
      a(name) == null || Number.isNaN(Number(a(name))) ? fallback : Number(a(name));
    return {
      ...DEFAULTS,
      task: a('task') ?? DEFAULTS.task,
      length: num('length', DEFAULTS.length),
      layers: num('layers', DEFAULTS.layers),
      dModel: num('d-model', DEFAULTS.dModel),
      heads: num('heads', DEFAULTS.heads),
      mlp: a('mlp') == null ? true : !['0', 'false', 'off'].includes(a('mlp')),
      positional: a('positional') ?? DEFAULTS.positional,
      lr: num('lr', DEFAULTS.lr),
      batch: num('batch', DEFAULTS.batch),
      seed: num('seed', DEFAULTS.seed),
      ...this._overrides,
    };
  }

  connectedCallback() {
    super.connectedCallback();
    if (this._worker) return;
    const create = () =>
      new Worker(new URL('../../workers/train-worker.js', import.meta.url), { type: 'module' });
    this._worker = new WorkerClient(create, {
      onEvent: (m) => this.#message(m),
      onFail: (e) => {
        const message = `The training worker failed: ${e.message ?? 'see the console'}`;
        this.showError(message);
        return message;
      },
    });
    this.#syncForm();
    this.#post({ type: 'init', config: this.settings });
    if (this.hasAttribute('autostart')) this.train();
  }

  disconnectedCallback() {
    super.disconnectedCallback();
    this._worker?.terminate();
    this._worker = null;
  }

  /**
   * The state: attributes, the effective settings, the ablated heads and the step of the last
   * snapshot. Setting it re-initialises the worker with those settings (seeded) and trains that many
   * steps, then ablates: the same weights, so the same heads; the curves hold the points of this run.
   */
  extraState() {
    return { settings: this.settings, ablated: this._ablated ?? [], step: this.snapshot?.step ?? 0 };
  }

  applyExtraState(s) {
    if (s.settings && typeof s.settings === 'object') {
      const { task, length, layers, dModel, heads, positional, lr, mlp, batch, seed } = s.settings;
      this._overrides = Object.fromEntries(
        Object.entries({ task, length, layers, dModel, heads, positional, lr, mlp, batch, seed }).filter(
          ([, v]) => v !== undefined,
        ),
      );
    }
    this._ablated = Array.isArray(s.ablated) ? s.ablated : [];
    if (!this._worker) return;
    this.#syncForm();
    this.#post('pause');
    this.#post({ type: 'init', config: this.settings });
    if (s.step > 0) this.#post({ type: 'step', n: Math.floor(s.step) });
    if (this._ablated.length) this.#post({ type: 'ablate', heads: this._ablated });
  }

  train() {
    this.#post('train');
  }
  pause() {
    this.#post('pause');
  }
  stepOnce(n = 1) {
    this.#post({ type: 'step', n });
  }
  reset() {
    this._ablated = [];
    this.#post('reset');
  }
  /** Zeroes these heads' outputs ([[layer, head], …]) for the accuracy shown beside the model's. */
  ablate(heads) {
    this._ablated = heads;
    this.#post({ type: 'ablate', heads });
  }

  /** @returns {Promise<Uint8Array>} the weights now, as safetensors */
  exportWeights() {
    return this.#call('export').then((m) => m.bytes);
  }
  /** @returns {Promise<{ data: Float32Array, shape: number[] }>} the model's logits on `ids` as it is now in the worker (B, T, V) */
  logits(ids) {
    return this.#call('logits', { ids });
  }

  #call(type, args) {
    if (!this._worker) return Promise.reject(new Error('the trainer is not connected'));
    return this._worker.call(type, args);
  }

  /** A job whose answer is its next snapshot: a failure is shown (`code: message`), and stops training. */
  #post(msg) {
    if (!this._worker) return;
    const { type, ...args } = typeof msg === 'string' ? { type: msg } : msg;
    this._worker.call(type, args).catch((error) => {
      // a stopped worker (disconnected) says nothing; a dead one has said so (onFail)
      if (error.name === 'AbortError' || error === this._worker?.failure) return;
      this.#message({ type: 'error', code: error.code ?? 'ERROR', message: error.message });
    });
  }

  #syncForm() {
    const s = this.settings,
      f = this._form.elements;
    // (form.elements.length is the element count: the length field is named taskLength)
    for (const k of ['task', 'layers', 'dModel', 'heads', 'positional', 'lr']) f[k].value = String(s[k]);
    f.taskLength.value = String(s.length);
    f.mlp.checked = s.mlp;
  }

  #applySettings() {
    const f = this._form.elements;
    this._overrides = {
      task: f.task.value,
      length: Number(f.taskLength.value),
      layers: Number(f.layers.value),
      dModel: Number(f.dModel.value),
      heads: Number(f.heads.value),
      positional: f.positional.value,
      lr: Number(f.lr.value),
      mlp: f.mlp.checked,
    };
    this._ablated = [];
    this.#post({ type: 'init', config: this.settings });
  }

  async #download() {
    const bytes = await this.exportWeights();
    const url = URL.createObjectURL(new Blob([bytes], { type: 'application/octet-stream' }));
    const a = h('a', {
      href: url,
      download: `${this.settings.task}-step${this.snapshot?.step ?? 0}.safetensors`,
    });
    a.click();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  }

  #message(m) {
    if (m.type === 'error') {
      this.showError(`${m.code}: ${m.message}`);
      return;
    }
    if (m.type !== 'snapshot') return;
    this.showError('');
    this.snapshot = m;
    this.schedule();
    this.emit('snapshot', {
      step: m.step,
      loss: m.loss,
      tokenAccuracy: m.tokenAccuracy,
      sequenceAccuracy: m.sequenceAccuracy,
      running: m.running,
      ablation: m.ablation,
    });
  }

  render() {
    const m = this.snapshot;
    if (!m) return;
    const pct = (x) => `${(100 * x).toFixed(1)}%`;
    this._status.textContent =
      `step ${m.step} · loss ${m.loss.toFixed(3)} · accuracy ${pct(m.tokenAccuracy)} of tokens, ` +
      `${pct(m.sequenceAccuracy)} of whole sequences · ${m.running ? `${Math.round(m.stepsPerSecond)} steps/s` : 'paused'}` +
      ` · ${m.threads} thread${m.threads === 1 ? '' : 's'}`;
    this._buttons.train.disabled = m.running;
    this._buttons.pause.disabled = !m.running;
    this._ablation.textContent = m.ablation
      ? `Without ${m.ablation.heads.map(([l, hd]) => `layer ${l} head ${hd}`).join(', ')}: accuracy ${pct(m.ablation.tokenAccuracy)} of tokens, ${pct(m.ablation.sequenceAccuracy)} of sequences.`
      : 'Click a head to ablate it (zero its output) and see what the model loses.';
    this.#drawCharts(m);
    this.#drawHeads(m);
  }

  #drawCharts(m) {
    const w = Math.max(240, Math.floor((this.contentWidth - 10) / 2));
    const steps = m.history.map((p) => p.step);
    const xMax = Math.max(1, ...steps);
    const x = { min: 0, max: xMax, label: 'step' };
    this._chartOpts = [
      {
        width: w,
        height: 180,
        x,
        y: { min: 0, max: Math.max(0.1, ...m.history.map((p) => p.loss)), label: 'loss' },
        series: [{ label: 'loss', points: m.history.map((p) => [p.step, p.loss]) }],
        title: 'Loss',
      },
      {
        width: w,
        height: 180,
        x,
        y: { min: 0, max: 1, label: 'accuracy' },
        series: [
          { label: 'tokens', points: m.history.map((p) => [p.step, p.tokenAccuracy]) },
          { label: 'sequences', points: m.history.map((p) => [p.step, p.sequenceAccuracy]), dashed: true },
        ],
        title: 'Accuracy',
      },
    ];
    drawXY(this._lossCanvas, { host: this, ...this._chartOpts[0] });
    drawXY(this._accCanvas, { host: this, ...this._chartOpts[1] });
  }

  #drawHeads(m) {
    const { T, tokens } = m.probe,
      H = m.heads,
      L = m.attention.length;
    if (this._tiles.length !== L * H) this.#buildTiles(L, H);
    const ablated = new Set((this._ablated ?? []).map(([l, hd]) => `${l}.${hd}`));
    const tileW = tileWidth(this.contentWidth, H);
    this._tiles.forEach(({ layer, head, view, box, button }) => {
      const data = m.attention[layer].subarray(head * T * T, (head + 1) * T * T);
      const off = ablated.has(`${layer}.${head}`);
      box.classList.toggle('ablated', off);
      button.setAttribute('aria-pressed', String(off));
      button.textContent = off ? `Restore L${layer} H${head}` : `Ablate L${layer} H${head}`;
      view.width = tileW;
      view.set({
        data,
        rows: T,
        cols: T,
        rowLabels: tokens,
        colLabels: tokens,
        rowAxis: 'query',
        colAxis: 'key',
        domain: { lo: 0, hi: 1, map: 'viridis' },
        values: 'never',
        maxCell: 16,
        minRowHeight: 0,
        legend: false,
        title: `Layer ${layer} · head ${head}${off ? ' (ablated)' : ''}`,
      });
    });
  }

  #buildTiles(L, H) {
    this._tiles = [];
    const rows = [];
    for (let layer = 0; layer < L; layer++) {
      const row = h('div', { class: 'layer', role: 'group', 'aria-label': `Layer ${layer}` });
      for (let head = 0; head < H; head++) {
        const canvas = h('canvas', {
          'aria-label': `Layer ${layer}, head ${head}: attention on the probe sequence`,
        });
        const toggle = () => this.#toggle(layer, head);
        const view = new HeatmapView(canvas, { host: this, onClick: toggle });
        const button = h('button', { type: 'button', class: 'small', onclick: toggle });
        const box = h('div', { class: 'tile' }, canvas, button);
        row.append(box);
        this._tiles.push({ layer, head, view, box, button });
      }
      rows.push(row);
    }
    this._heads.replaceChildren(...rows);
  }

  #toggle(layer, head) {
    const list = (this._ablated ?? []).filter(([l, hd]) => !(l === layer && hd === head));
    this.ablate(list.length === (this._ablated ?? []).length ? [...list, [layer, head]] : list);
  }

  getCSV() {
    return [
      'step,loss,token_accuracy,sequence_accuracy',
      ...(this.snapshot?.history ?? []).map(
        (p) => `${p.step},${p.loss},${p.tokenAccuracy},${p.sequenceAccuracy}`,
      ),
    ].join('\n');
  }
  getJSON() {
    return jsonText(withState(this, { settings: this.settings, history: this.snapshot?.history ?? [] }));
  }
  pngCanvas() {
    return this._lossCanvas;
  }

  /**
   * The loss and accuracy curves and every head's attention on the probe sequence as an SVG
   * document (vector curves and cells; one colour bar for all heads; settings and step in the
   * <metadata>). Options: width (CSS px, default the widget's), fontSize (px, default 12).
   */
  toSVG(options = {}) {
    const m = this.snapshot;
    if (!m || !this._chartOpts) throw new Error('toSVG: nothing is drawn yet (wait for the first snapshot)');
    const views = this._tiles.map((t) => t.view);
    return trainerSVG(m, this._chartOpts, views, options, {
      width: this.contentWidth,
      theme: themeOf(this),
      settings: this.settings,
      ablated: this._ablated ?? [],
      state: this.state,
    });
  }
}
