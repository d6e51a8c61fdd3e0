// Types for 'attention-wasm/widgets' (web/widgets.js): four custom elements and the helpers the
// demo and tutorial pages are built from. Importing the module defines the elements.
import type * as Attn from '../src/js/index.js';

export declare const attn: typeof Attn;
/** Resolves once the shared wasm instance is ready (init() runs once per page). */
export declare const ready: Promise<unknown>;

export type PositionalKind = 'none' | 'sinusoidal' | 'learned';
export type MaskMode = 'none' | 'causal' | 'padding' | 'custom';

/** The model configuration shared by <attention-steps>, <attention-heatmap> and <mask-editor>. */
export interface WidgetConfig {
  /** Query sentence (tokenized with `tokenize`). */
  text: string;
  /** Source sentence for cross-attention (keys and values). */
  source: string;
  /** Cross-attention: queries from `text`, keys/values from `source`. */
  cross: boolean;
  /** Tokens to use instead of tokenizing `text` (JS only). */
  tokens: string[] | null;
  /** Tokens to use instead of tokenizing `source` (JS only). */
  sourceTokens: string[] | null;
  dModel: number;
  heads: number;
  /** Weight initialisation and token-embedding seed. */
  seed: number;
  positional: PositionalKind;
  /** Base of the sinusoidal encoding (10000). */
  base: number;
  mask: MaskMode;
  /** <pad> tokens appended in 'padding' mode (0…8). */
  pad: number;
  /** Cells [query, key] flipped on top of the mask mode. Attribute form: "i.j,i.j". */
  toggles: [number, number][];
  /** Divide the scores by √d_k. */
  scaling: boolean;
  temperature: number;
  /** Dropout probability on the attention weights. */
  dropout: number;
  dropoutSeed: number;
  residual: boolean;
  layerNorm: boolean;
  /** PyTorch-layout weights to load instead of the seeded ones (JS only). */
  stateDict: Record<string, unknown> | null;
}

export interface TraceStep {
  name: string;
  shape: number[];
  axes: string[];
  data: Float32Array;
}

export type ModelResult =
  | {
      ok: true;
      config: WidgetConfig;
      queryTokens: string[];
      keyTokens: string[];
      realKeys: number;
      Tq: number;
      Tk: number;
      heads: number;
      dk: number;
      steps: TraceStep[];
      byName: Record<string, TraceStep>;
      meanWeights: Float32Array;
      /** (Tq, Tk), 1 = may attend. */ mask: Uint8Array;
    }
  | {
      ok: false;
      config: WidgetConfig;
      queryTokens: string[];
      keyTokens: string[];
      error: { code: string; message: string };
    };

export interface CellDetail {
  row: number;
  col: number;
  value: number;
  rowLabel: string;
  colLabel: string;
}

/**
 * el.state: what a widget's picture depends on, JSON-able (see docs/widgets.md, "State"). Setting it
 * on another instance with the same data redraws the same picture. Numbers JSON cannot hold are the
 * strings '-Infinity' | 'Infinity' | 'NaN'.
 */
export interface WidgetState {
  /** The tag name; a state of another widget is refused. */
  widget: string;
  version: 1;
  /** The observed attributes present, as text (setting the state removes the others). */
  attributes: Record<string, string>;
  /** el.context, when the page set one. */
  context?: Record<string, unknown>;
  [key: string]: unknown;
}
/** A number of a state's data: finite, or '-Infinity' | 'Infinity' | 'NaN'. */
export type StateNumber = number | '-Infinity' | 'Infinity' | 'NaN';
/** The state of the model-driven widgets: the whole effective config (a stateDict is not stored). */
export interface ModelWidgetState extends WidgetState {
  config: Omit<WidgetConfig, 'stateDict'> & { stateDict: null };
  /** Present when a stateDict set from JS was in use (setting the state keeps the target's own). */
  stateDict?: 'set from JS';
}
export interface HeatmapState extends ModelWidgetState {
  /** The tile whose query row is drawn as bars. */
  barsTile: number;
  data: null | {
    weights: StateNumber[];
    shape: [number, number, number];
    queryTokens: string[];
    keyTokens: string[];
  };
}
export interface StepsState extends ModelWidgetState {
  /** A trace set from JS; steps null over 200 000 numbers (setting the state then keeps the target's trace). */
  trace: null | {
    tokens: string[];
    heads: number;
    dModel: number;
    causal: boolean;
    steps: null | { name: string; shape: number[]; axes: string[]; data: StateNumber[] }[];
  };
}
export interface MaskEditorState extends ModelWidgetState {
  data: null | Record<string, unknown>;
}
export interface ModelViewState extends WidgetState {
  ids: number[] | null;
  tokens: string[] | null;
  openedLayer: number | null;
  /** { src } for a model loaded from `src`; a model the page set is referenced by its config (set it on the target too). */
  model: null | { src: string } | { config: Record<string, unknown>; source: 'set from JS' };
}
export interface AlibiState extends WidgetState {
  head: number;
}
export interface RopeState extends WidgetState {
  rotaryStyle: 'half' | 'interleaved';
  pair: number;
  position: number;
}
export interface KvCacheState extends WidgetState {
  stepped: number;
  kvHead: number;
}

/** What every widget shares: exports, its state and a synchronous refresh. Events: 'ready'. */
declare class AwElement extends HTMLElement {
  /** What the picture depends on (see WidgetState); set it to redraw the same picture. */
  state: WidgetState;
  /** What the page says the picture is of (JSON-able, or null): carried in the state as `context`; it does not change the picture. */
  context: Record<string, unknown> | null;
  /** Renders now if the wasm module is ready; true when it rendered. */
  refresh(): boolean;
  /** The picture as PNG. */
  getPNG(): Promise<Blob>;
  getPNGDataURL(): string;
  /** The matrix shown, as CSV text. */
  getCSV(): string;
  /** The matrix shown, as JSON text. */
  getJSON(): string;
  /** Saves 'png' | 'csv' | 'json' (and 'svg' on widgets with toSVG) through a download. */
  download(format: 'png' | 'csv' | 'json' | 'svg'): void;
}

/** The sequential colour maps of `palette`. */
export type Palette = 'viridis' | 'cividis' | 'gray';
/** The diverging colour maps of signed views' `diverging` attribute ('blue-orange' is the map 'diverging'). */
export type DivergingPalette = 'blue-orange' | 'red-blue';

/** Options of toSVG(). */
export interface SVGOptions {
  /** Figure width in CSS pixels (default: the widget's width). */
  width?: number;
  /** Label font size in pixels (default 12); other text scales with it. */
  fontSize?: number;
}

/** Options of <attention-model-view>'s toSVG(). */
export interface ModelViewSVGOptions extends SVGOptions {
  /** One layer instead of all. */
  layer?: number;
  /** The largest figure returned, in bytes (default 8 MB); over it toSVG throws an Error with code 'SVG_TOO_LARGE'. */
  maxBytes?: number;
}

declare class ModelElement extends AwElement implements Omit<WidgetConfig, never> {
  /** The effective config (defaults ← attributes ← properties). Setting it replaces the JS-set keys. */
  config: WidgetConfig;
  setConfig(partial: Partial<WidgetConfig>): void;
  text: string;
  source: string;
  cross: boolean;
  tokens: string[] | null;
  sourceTokens: string[] | null;
  dModel: number;
  heads: number;
  seed: number;
  positional: PositionalKind;
  base: number;
  mask: MaskMode;
  pad: number;
  toggles: [number, number][];
  scaling: boolean;
  temperature: number;
  dropout: number;
  dropoutSeed: number;
  residual: boolean;
  layerNorm: boolean;
  stateDict: Record<string, unknown> | null;
  readonly result: ModelResult | null;
}

/** <attention-steps step="scores" head="0">. Events: step-change { index, name, head }, cell-hover, cell-click. */
export declare class AttentionSteps extends ModelElement {
  state: StepsState;
  /** The probability steps' colour map (attribute `palette`). */
  palette: Palette;
  /** The signed steps' colour map (attribute `diverging`). */
  diverging: DivergingPalette;
  readonly steps: string[];
  step: number;
  head: number;
  readonly current: null | {
    index: number;
    name: string;
    title: string;
    head: number;
    hasHead: boolean;
    shape: number[];
    axes: string[];
    rows: number;
    cols: number;
    data: Float32Array;
    rowLabels: string[];
    colLabels: string[];
    rowAxis: string;
    colAxis: string;
  };
  goTo(step: number | string): void;
  next(): void;
  prev(): void;
  cellCenter(row: number, col: number): { x: number; y: number };
  explainCell(cell: CellDetail): { main: string; detail: string };
  /** The shown step's matrix as a standalone vector SVG document. */
  toSVG(options?: SVGOptions): string;
  /** A trace computed elsewhere (one TinyTransformer layer) instead of the widget's own model; null: back to it. */
  trace: null | { tokens: string[]; steps: TraceStep[]; heads: number; dModel: number; causal?: boolean };
}

/** What <attention-trainer> trains with (attributes, then its form). */
export interface TrainerSettings {
  task: 'copy' | 'reverse' | 'sort' | 'induction';
  length: number;
  layers: number;
  dModel: number;
  heads: number;
  mlp: boolean;
  positional: 'learned' | 'sinusoidal' | 'none';
  lr: number;
  batch: number;
  seed: number;
  numSymbols: number;
}

/** One snapshot of the training worker. */
export interface TrainerSnapshot {
  step: number;
  running: boolean;
  loss: number;
  tokenAccuracy: number;
  sequenceAccuracy: number;
  stepsPerSecond: number;
  /** Threads the worker's module trains on (more than one where the page is cross-origin isolated). */
  threads: number;
  ablation: null | {
    heads: [number, number][];
    loss: number;
    tokenAccuracy: number;
    sequenceAccuracy: number;
  };
  history: { step: number; loss: number; tokenAccuracy: number; sequenceAccuracy: number }[];
  probe: { tokens: string[]; T: number };
  heads: number;
  attention: Float32Array[];
}

/** <attention-trainer>: trains in a Web Worker. Events: snapshot { step, loss, tokenAccuracy, sequenceAccuracy, running, ablation }. */
export interface TrainerState extends WidgetState {
  settings: TrainerSettings;
  ablated: [number, number][];
  step: number;
}

export declare class AttentionTrainer extends AwElement {
  /** Setting it re-initialises the worker with the settings and trains `step` steps (seeded: the same heads). */
  state: TrainerState;
  readonly settings: TrainerSettings;
  readonly snapshot: TrainerSnapshot | null;
  train(): void;
  pause(): void;
  stepOnce(n?: number): void;
  reset(): void;
  ablate(heads: [number, number][]): void;
  exportWeights(): Promise<Uint8Array>;
  logits(ids: number[][]): Promise<{ data: Float32Array; shape: number[] }>;
  /** The loss and accuracy curves and every head's attention at the last snapshot, as a standalone vector SVG document. */
  toSVG(options?: SVGOptions): string;
}

/** <attention-model-view src ids tokens steps>: every layer × head. Events: head-select { layer, head }, model-load { src }. */
export declare class AttentionModelView extends AwElement {
  state: ModelViewState;
  model: Attn.TinyTransformer | null;
  ids: number[] | null;
  tokens: string[];
  readonly shown?: {
    ids: number[];
    tokens: string[];
    layers: Float32Array[];
    T: number;
    L: number;
    H: number;
  };
  open(layer: number, head: number): void;
  /** The colour map of the tiles (attribute `palette`). */
  palette: Palette;
  /** 'heads' (default) or 'rollout': one tile per layer, the attention rollout through it (attribute `mode`). */
  mode: 'heads' | 'rollout';
  /** Every layer × head (or one layer) as a standalone SVG document; throws (code 'SVG_TOO_LARGE') over maxBytes. */
  toSVG(options?: ModelViewSVGOptions): string;
}

/** <attention-heatmap head="all|mean|0…" query="-1">. Events: cell-hover, cell-click { head, row, col, value, query, key }, view-change. */
export declare class AttentionHeatmap extends ModelElement {
  state: HeatmapState;
  head: 'all' | 'mean' | number;
  query: number;
  /** Precomputed weights instead of the model: shape (H, Tq, Tk) or (Tq, Tk), flat or nested. */
  data: null | {
    weights: ArrayLike<number> | number[][] | number[][][];
    shape?: number[];
    queryTokens?: string[];
    keyTokens?: string[];
  };
  readonly shown: null | {
    view: string;
    queryTokens: string[];
    keyTokens: string[];
    matrices: { head: number | 'mean'; rows: number; cols: number; data: Float32Array }[];
  };
  cellCenter(tile: number, row: number, col: number): { x: number; y: number };
  /** The colour map of the cells (attribute `palette`). */
  palette: Palette;
  /** The heatmap(s) as a standalone vector SVG document; the view's state is in its <metadata>. bars: add the query row's bar chart. */
  toSVG(options?: SVGOptions & { bars?: boolean }): string;
}

/** <positional-encoding-heatmap length="50" d-model="64" base="10000" dims="0,2,8,24">. Events: cell-hover, cell-click. */
export declare class PositionalEncodingHeatmap extends AwElement {
  length: number;
  dModel: number;
  base: number;
  dims: number[];
  /** The cells' colour map (attribute `diverging`). */
  diverging: DivergingPalette;
  readonly shown: null | { length: number; dModel: number; base: number; data: Float32Array; dims: number[] };
  cellCenter(row: number, col: number): { x: number; y: number };
  /** The heatmap and its curves as a standalone vector SVG document. */
  toSVG(options?: SVGOptions): string;
}

/** <mask-editor mask="causal" toggles="2.0" head="mean">. Events: mask-change { mask, toggles, allowed }, cell-hover, cell-click. */
export declare class MaskEditor extends ModelElement {
  state: MaskEditorState;
  head: 'mean' | number;
  /** The colour map of both panels (attribute `palette`). */
  palette: Palette;
  readonly allowed: null | { rows: number; cols: number; data: Uint8Array };
  readonly weights: null | { head: 'mean' | number; rows: number; cols: number; data: Float32Array };
  setMode(mode: MaskMode): void;
  toggle(row: number, col: number): void;
  cellCenter(which: 'mask' | 'weights', row: number, col: number): { x: number; y: number };
  /** The mask (with its key) and the weights as an SVG document, laid out as on screen. */
  toSVG(options?: SVGOptions): string;
}

/**
 * <rope-explorer d="8" base="10000" rotary-style="half" offset="0" seed="1">: rotary embeddings through applyRotary.
 * q, k = rows 0 and 1 of seededNormal([2, d], seed). For a relative offset δ the query sits at
 * offset + max(δ, 0) and the key at offset + max(−δ, 0). Events: ready.
 */
export declare class RopeExplorer extends AwElement {
  state: RopeState;
  /** Head size (even). */
  d: number;
  base: number;
  /** Attribute rotary-style (style="half|interleaved" is read too). */
  rotaryStyle: 'half' | 'interleaved';
  offset: number;
  seed: number;
  /** The frequency pair drawn in the plane. */
  pair: number;
  /** q's position in the plane (0…256). */
  position: number;
  readonly q: Float32Array | null;
  readonly k: Float32Array | null;
  /** −32 … 32. */
  readonly deltas: number[];
  readonly shown: null | {
    d: number;
    base: number;
    style: 'half' | 'interleaved';
    seed: number;
    offset: number;
    q: Float32Array;
    k: Float32Array;
    scores: { total: Float32Array; pairs: Float64Array[] };
    compare: Float32Array[];
    maxDiff: number;
  };
  /** Total q·k over `deltas` with the earlier position at `offset` (default: the attribute). */
  scores(offset?: number): Float32Array | null;
  /** Angle (radians, atan2) of q's pair `pair` after rotation to `position`. */
  pairAngle(pair: number, position: number): number | null;
  /** The plane and both charts as an SVG document, laid out as on screen. */
  toSVG(options?: SVGOptions): string;
}

/** <alibi-bias heads="8" length="12" causal seed="1">: ALiBi through SDPA's alibi: true. Events: cell-hover { head, row, col, bias, weight }. */
export declare class AlibiBias extends AwElement {
  state: AlibiState;
  heads: number;
  length: number;
  causal: boolean;
  seed: number;
  /** The head shown. */
  head: number;
  /** alibiSlopes(heads). */
  readonly slopes: Float32Array | null;
  readonly shown: null | {
    H: number;
    T: number;
    causal: boolean;
    seed: number;
    slopes: Float32Array;
    bias: Float32Array;
    weights: Float32Array;
  };
  /** −m_h·(i − j) (causal) or −m_h·|i − j|, (T, T) row-major; the causal mask is separate. */
  bias(head: number): Float32Array | null;
  /** Softmax weights of a head, (T, T) row-major. */
  weights(head: number): Float32Array | null;
  /** The shown head's bias and weights as a standalone vector SVG document, laid out as on screen. */
  toSVG(options?: SVGOptions): string;
}

/** <gqa-heads heads="8" kv-heads="2" length="10" seed="1">: grouped-query attention (SDPA enableGQA, causal). Events: cell-hover { head, kvHead, row, col, value }. */
export declare class GqaHeads extends AwElement {
  heads: number;
  kvHeads: number;
  length: number;
  seed: number;
  /** Query heads per key/value head ([[0, 1, 2, 3], [4, 5, 6, 7]] for 8 / 2); null while an error is shown. */
  readonly groups: number[][] | null;
  readonly shown: null | {
    H: number;
    Hkv: number;
    T: number;
    seed: number;
    groups: number[][];
    weights: Float32Array;
  };
  /** A query head's weights, (T, T) row-major. */
  weights(head: number): Float32Array | null;
  /** Every query head's weights as a standalone vector SVG document, laid out as on screen. */
  toSVG(options?: SVGOptions): string;
}

/**
 * <kv-cache-stepper embed-dim="16" heads="4" kv-heads="2" rope length="10" seed="1">: decoding with a real KV cache
 * (MultiHeadAttention numKVHeads + rope, createCache, forward with { cache, causal: true }). x = seededNormal([1, length, E], seed + 1).
 * Events: kv-step { length, position, maxDifference } (position −1 after reset()).
 */
export declare class KvCacheStepper extends AwElement {
  /** Setting it empties the cache and feeds `stepped` tokens again. */
  state: KvCacheState;
  /** The new query's weights' colour map (attribute `palette`). */
  palette: Palette;
  /** The colour map of x and the cached keys (attribute `diverging`). */
  diverging: DivergingPalette;
  embedDim: number;
  heads: number;
  kvHeads: number;
  rope: boolean;
  /** The attribute `length`: tokens in x (1…64). */
  sequenceLength: number;
  seed: number;
  /** Tokens in the cache now (not the attribute `length`: see sequenceLength). */
  readonly length: number;
  /** Every stepped output row so far, (length, E) row-major. */
  readonly outputs: Float32Array;
  /** The input sequence x, (sequenceLength, E) row-major. */
  readonly x: Float32Array | null;
  /** The last step's weights, (H, length) row-major. */
  readonly weights: Float32Array | null;
  /** The cached keys of the key/value head shown, (length, d_k) row-major (after RoPE when on). */
  readonly keys: Float32Array | null;
  /** The key/value head whose keys are shown. */
  kvHead: number;
  /** Max |stepped − full forward| over every row so far. */
  readonly maxDifference: number;
  readonly shown: null | {
    embedDim: number;
    heads: number;
    kvHeads: number;
    headDim: number;
    rope: boolean;
    sequenceLength: number;
    seed: number;
    length: number;
    kvHead: number;
    maxDifference: number;
  };
  /** Feeds the next token; null when x is used up (or the config is invalid). */
  step(): { position: number; output: Float32Array; weights: Float32Array } | null;
  /** Steps until x is used up (one step every ~140 ms; at once with prefers-reduced-motion). */
  runAll(): Promise<void>;
  /** Empties the cache (cache.reset()). */
  reset(): void;
  /** One full causal forward over the first `length` tokens: its output, (length, E) row-major. */
  fullOutput(): Float32Array;
  /** x, the cached keys and the weights as an SVG document, laid out as on screen. */
  toSVG(options?: SVGOptions): string;
}

export declare const MAX_TOKENS: 512;
export declare const PAD_TOKEN: '<pad>';
export declare const DEFAULT_CONFIG: Readonly<WidgetConfig>;
export declare function tokenize(text: string, max?: number): string[];
export declare function tokenizeWithInfo(
  text: string,
  max?: number,
): { tokens: string[]; truncated: boolean };
/** FNV-1a (32-bit) over the token's UTF-8 bytes, then the seed's 4 little-endian bytes. */
export declare function tokenSeed(token: string, seed: number): number;
export declare function tokenVector(token: string, dModel: number, seed: number): Float32Array;
export declare function embedTokens(tokens: string[], dModel: number, seed: number): Float32Array;
export declare function normalizeConfig(partial?: Partial<WidgetConfig>): WidgetConfig;
/** Runs (or reuses) the forward pass with trace; never throws (errors come back as ok: false). */
export declare function runModel(config: Partial<WidgetConfig>, options?: { fresh?: boolean }): ModelResult;
export declare function clearModelCache(): void;
export declare function modelStateDict(
  config: Partial<WidgetConfig>,
): Record<string, { shape: number[]; data: number[] }>;
export declare function validHeadCounts(dModel: number, max?: number): number[];
export declare function tokensOf(config: WidgetConfig): {
  queryTokens: string[];
  keyTokens: string[];
  realKeys: number;
};
export declare function maskMatrix(
  config: WidgetConfig,
  Tq: number,
  Tk: number,
  realKeys: number,
): Uint8Array;
export declare function parseBool(value: unknown, fallback: boolean): boolean;
export declare function parseToggles(value: string | [number, number][]): [number, number][];
export declare function formatToggles(toggles: [number, number][]): string;
export declare function resultFromTrace(trace: {
  tokens: string[];
  steps: TraceStep[];
  heads: number;
  dModel: number;
  causal?: boolean;
}): ModelResult;
export declare function loadKatex(): Promise<{ renderToString(tex: string, options?: object): string }>;
export declare function formatNumber(value: number, decimals?: number): string;
export declare function exactNumber(value: number): string;
export declare function colormap(name: Palette | DivergingPalette | 'diverging'): Uint8Array;
export declare function colorOf(
  name: Palette | DivergingPalette | 'diverging',
  value: number,
  lo: number,
  hi: number,
): string;
export declare function autoDomain(
  data: ArrayLike<number>,
  kind?: 'auto' | 'probability' | 'signed' | 'positive',
): { lo: number; hi: number; map: 'viridis' | 'diverging' };
export declare function matrixToCSV(m: {
  data: ArrayLike<number>;
  rows: number;
  cols: number;
  rowLabels?: string[];
  colLabels?: string[];
  corner?: string;
}): string;
export declare function download(filename: string, content: string | Blob, mime?: string): void;
export declare const SERIES_COLORS: string[];

/** Options of snapshotHTML(). */
export interface SnapshotOptions {
  /** The page's <title> and heading (default 'Attention views'). */
  title?: string;
  /** A paragraph under the heading. */
  description?: string;
  /** Add each view's data table (its CSV; default true). */
  tables?: boolean;
  /** Rows per table (default 500). */
  maxRows?: number;
}
/**
 * One standalone HTML document of views: each as inline SVG (toSVG()) and its data table. No script,
 * no URL; a <meta> policy default-src 'none' plus its one <style>'s hash.
 */
export declare function snapshotHTML(elements: Iterable<Element>, options?: SnapshotOptions): string;
/** Saves snapshotHTML(elements, options) as options.filename (default: the title's slug + .html); returns the HTML. */
export declare function downloadSnapshot(
  elements: Iterable<Element>,
  options?: SnapshotOptions & { filename?: string },
): string;
/** The SVG a snapshot or print uses for a widget; null without toSVG() or before it draws. note: why it is partial. */
export declare function figureSVG(el: Element): { svg: string; note: string } | null;
/** SHA-256 of a string's UTF-8 bytes, base64 (a CSP hash source). */
export declare function sha256Base64(text: string): string;
/** The stylesheet of every snapshot (its hash is in the snapshot's policy). */
export declare const SNAPSHOT_CSS: string;
/** What beforeprint does: every connected widget with toSVG() shows its SVG instead of its canvases. Returns how many. */
export declare function preparePrint(): number;
/** What afterprint does: undoes preparePrint(). */
export declare function restorePrint(): void;
export declare function drawBars(
  canvas: HTMLCanvasElement,
  options: {
    host: Element;
    width: number;
    values: ArrayLike<number>;
    labels: string[];
    title?: string;
    color?: string;
    maxValue?: number;
  },
): { barAt(clientX: number): number };
export declare function drawLines(
  canvas: HTMLCanvasElement,
  options: {
    host: Element;
    width: number;
    height?: number;
    series: { label: string; values: ArrayLike<number> }[];
    xLabel?: string;
    yRange?: [number, number];
  },
): void;
/** The canvas matrix renderer every widget uses (labels, legend, keyboard, hit testing). */
export declare class HeatmapView {
  constructor(
    canvas: HTMLCanvasElement,
    hooks: {
      host: Element;
      onHover?: (cell: CellDetail | null, via: 'pointer' | 'keyboard') => void;
      onClick?: (cell: CellDetail, via: 'pointer' | 'keyboard') => void;
    },
  );
  width: number;
  set(options: {
    data: ArrayLike<number>;
    rows: number;
    cols: number;
    rowLabels?: string[];
    colLabels?: string[];
    domain: { lo: number; hi: number; map: 'viridis' | 'diverging' };
    decimals?: number;
    values?: 'auto' | 'always' | 'never';
    rowSums?: boolean;
    maxCell?: number;
    minRowHeight?: number;
    maxRowHeight?: number;
    selectedRow?: number;
    title?: string;
    legend?: boolean;
  }): void;
  resize(width: number): void;
  draw(): void;
  cell(row: number, col: number): CellDetail;
  cellAt(clientX: number, clientY: number): CellDetail | null;
  cellCenter(row: number, col: number): { x: number; y: number };
}

/** The model input of the interpretability widgets (issue #27): `src` (attribute) or a model set from JS. */
export interface InterpModelInput {
  /** A TinyTransformer or PretrainedModel the page holds (never disposed by the widget); or use `src`. */
  model: Attn.TinyTransformer | Attn.PretrainedModel | null;
  /** The names of the vocabulary's ids (a preset's own when loaded by `src`). */
  vocab: string[] | null;
}

export type HeadScoreKind = 'previous-token' | 'duplicate-token' | 'induction';

/** <head-scores>: model.headScores(ids) as one layer × head grid per kind. Events: head-select, cell-hover, model-load. */
export declare class HeadScores extends AwElement implements InterpModelInput {
  model: Attn.TinyTransformer | Attn.PretrainedModel | null;
  vocab: string[] | null;
  ids: number[] | null;
  tokens: string[];
  kinds: HeadScoreKind[];
  readonly shown: {
    ids: number[];
    tokens: string[];
    L: number;
    H: number;
    kinds: HeadScoreKind[];
    scores: Partial<Record<HeadScoreKind, Float32Array>>;
  } | null;
  /** Emits head-select { layer, head, kind, score }. */
  select(layer: number, head: number, kind?: HeadScoreKind): void;
  toSVG(options?: SVGOptions): string;
}

export interface AttributionComponent {
  name: string;
  kind: 'embed' | 'head' | 'mlp' | 'bias';
  layer?: number;
  head?: number;
  value: number;
}

/** <logit-attribution>: model.logitAttribution as sorted bars and a table. Events: head-select, model-load. */
export declare class LogitAttribution extends AwElement implements InterpModelInput {
  model: Attn.TinyTransformer | Attn.PretrainedModel | null;
  vocab: string[] | null;
  ids: number[] | null;
  tokens: string[];
  /** undefined: the default (the last position; the top prediction; the runner-up). against null: none. */
  position: number | undefined;
  token: number | undefined;
  against: number | null | undefined;
  limit: number;
  readonly shown: {
    ids: number[];
    position: number;
    token: number;
    against: number | null;
    L: number;
    H: number;
    components: AttributionComponent[];
    total: number;
    logitDiff: number;
    heads: Float32Array;
    mlp: Float32Array;
    embed: number;
    bias: number;
  } | null;
  /** Emits head-select { layer, head, value }. */
  select(layer: number, head: number): void;
  toSVG(): string;
}

export interface PatchingPlan {
  clean: number[];
  corrupted: number[];
  position: number;
  token: number;
  against: number;
  component: 'head' | 'residual';
}

/**
 * <patching-view>: activation patching with Run, a progress bar and Cancel. A `src` model is patched
 * in a Web Worker; a `model` set from JS in the page (yielding between layers).
 * Events: head-select, cell-select, patch-progress, patch-done, patch-cancel, model-load.
 */
export declare class PatchingView extends AwElement implements InterpModelInput {
  model: Attn.TinyTransformer | Attn.PretrainedModel | null;
  vocab: string[] | null;
  clean: number[] | null;
  corrupted: number[] | null;
  position: number | undefined;
  token: number | undefined;
  against: number | undefined;
  component: 'head' | 'residual';
  autorun: boolean;
  readonly running: boolean;
  readonly shown:
    | (PatchingPlan & {
        L: number;
        cols: number;
        result: Float32Array;
        cleanDiff: number;
        corruptedDiff: number;
        where: 'worker' | 'page';
      })
    | null;
  /** The inputs a run would use (defaults filled in); throws with a readable message when incomplete. */
  plan(): PatchingPlan;
  /** Resolves to the result, or null when cancelled or refused. */
  run(): Promise<{ result: Float32Array; cleanDiff: number; corruptedDiff: number } | null>;
  cancel(): void;
  toSVG(options?: SVGOptions): string;
}

declare global {
  interface HTMLElementTagNameMap {
    'attention-steps': AttentionSteps;
    'attention-heatmap': AttentionHeatmap;
    'positional-encoding-heatmap': PositionalEncodingHeatmap;
    'mask-editor': MaskEditor;
    'attention-trainer': AttentionTrainer;
    'attention-model-view': AttentionModelView;
    'rope-explorer': RopeExplorer;
    'alibi-bias': AlibiBias;
    'gqa-heads': GqaHeads;
    'kv-cache-stepper': KvCacheStepper;
    'head-scores': HeadScores;
    'logit-attribution': LogitAttribution;
    'patching-view': PatchingView;
  }
}
