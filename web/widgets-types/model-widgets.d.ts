// The model-driven widgets: <attention-steps>, <attention-heatmap>, <mask-editor>, and
// <positional-encoding-heatmap>.
import type {
  AwElement,
  CellDetail,
  DivergingPalette,
  HeatmapState,
  MaskEditorState,
  MaskMode,
  ModelElement,
  Palette,
  StepsState,
  SVGOptions,
  TraceStep,
} from './base.js';

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

/** <attention-heatmap head="all|mean|0…" query="-1" signed diverging>. Events: cell-hover, cell-click { head, row, col, value, query, key }, view-change. */
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
  /**
   * Signed weights — weights of the values, not probabilities (a conv or DeltaNet layer's map):
   * drawn on the diverging map over ±max|a| (attribute `signed`; data with a negative weight is
   * drawn signed without it).
   */
  signed: boolean;
  /** The map of signed weights (attribute `diverging`). */
  diverging: DivergingPalette;
  /**
   * Key columns hidden (attribute `hide-columns`, "0,3"; e.g. [0], an attention sink): drawn masked,
   * each softmax row renormalised without them. Event selection-change { hideColumns, queries, combine }.
   */
  hideColumns: number[];
  /** Several query rows (attribute `queries`, "2,4,5"): with two or more, the bars show them combined. */
  queries: number[];
  /** How the bars combine the selected rows (attribute `combine`). */
  combine: 'mean' | 'sum';
  /** The heatmap(s) as a standalone vector SVG document; the view's state is in its <metadata>. bars: add the query row's bar chart. */
  toSVG(options?: SVGOptions & { bars?: boolean }): string;
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
