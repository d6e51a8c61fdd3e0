// The widgets' shared types: the model config, states, palettes, SVG options and the element
// base classes (AwElement, ModelElement: 'attention-wasm/widgets' exports them as types only).

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
export declare class AwElement extends HTMLElement {
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

export declare class ModelElement extends AwElement implements Omit<WidgetConfig, never> {
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
