// The helpers the demo and tutorial pages are built from: the widgets' model, colours, charts,
// exports, figures (snapshots, printing) and the canvas matrix renderer.
import type { CellDetail, DivergingPalette, ModelResult, Palette, TraceStep, WidgetConfig } from './base.js';

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
  /** Takes the canvas and its keyboard grid off the page (removing the canvas alone leaves the grid). */
  remove(): void;
  resize(width: number): void;
  draw(): void;
  cell(row: number, col: number): CellDetail;
  cellAt(clientX: number, clientY: number): CellDetail | null;
  cellCenter(row: number, col: number): { x: number; y: number };
}
