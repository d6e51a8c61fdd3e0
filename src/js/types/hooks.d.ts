// Hook points (docs/interpretability.md "Hook points"): run() with captures and edits, steering.
import type { Tensor } from './tensor.js';

/** A hook point and its shape: "B" and "T" for the batch and sequence axes (e.g. ['B', 'T', 768]). */
export interface HookInfo {
  name: string;
  shape: Array<number | 'B' | 'T'>;
}

/**
 * One edit of a hook in a forward: `set` or `add` `value` — a Tensor of the hook's whole shape, or
 * a vector over its last axes at one position (Float32Array, number[] or Tensor: the stream's (E),
 * a head's (d) or (H, d), a pattern row's (T)) applied at `positions` (absolute; default all) and,
 * for the attention hooks, `heads` (query heads for q, rot_q, scores, pattern, z; KV heads for k,
 * rot_k, v; default all).
 */
export interface HookEdit {
  hook: string;
  op: 'set' | 'add';
  value: Tensor | Float32Array | number[];
  positions?: number[];
  heads?: number[];
}

/** run()'s options. An unknown hook, a wrong shape, positions or heads out of range: INVALID_ARGUMENT / SHAPE_MISMATCH naming it, before anything runs. */
export interface RunOptions {
  /** Hook names to capture; `blocks.*.…` means every layer. */
  capture?: string | string[];
  edits?: HookEdit[];
  /** 'blocks.{l}.hook_resid_pre', with a whole `set` of that hook among the edits: run from block l. */
  startAt?: string;
}

export interface RunResult {
  /** (B, T, V). */
  logits: Tensor;
  /** The captured hooks by name, each with the batch first ((1, T, E), (1, H, T, T), (1, T, H, d)). */
  activations: Record<string, Tensor>;
}

/** steeringVector's options: prompts are strings (with a tokenizer) or ids, one or a list each. */
export interface SteeringVectorOptions {
  positive: string | ArrayLike<number> | Array<string | ArrayLike<number>>;
  negative: string | ArrayLike<number> | Array<string | ArrayLike<number>>;
  hook: string;
  /** The position read in each prompt; negative counts from the end (default -1: the last token). */
  position?: number;
}

/** A layer as the model computes it. */
export interface LayerInfo {
  /**
   * The token mixer: 'attention' (softmax attention); 'conv' (LFM2's short convolution: `heads` 0 —
   * the (L, H) results of the interpretability tools hold NaN for it —, `kernel` its width, `window`
   * = `kernel`); 'delta' (a gated DeltaNet, Qwen3.5's linear attention: `heads` its value heads,
   * `kvHeads` its key heads, `headDim` the key head size). A conv or delta layer's attention map is
   * its exact effective token mixing (signed; rows need not sum to 1).
   */
  kind: 'attention' | 'conv' | 'delta';
  /** A conv layer's kernel (conv_L_cache). */
  kernel?: number;
  heads: number;
  kvHeads: number;
  /** Its own head size (Gemma 4: the sliding and the full layers' differ). */
  headDim: number;
  /** A 'delta' layer's value head size and conv kernel. */
  valueDim?: number;
  convKernel?: number;
  /**
   * A 'delta' layer's value-head numbering: 'grouped' (a folder's: value head h reads key head
   * ⌊h / (heads / kvHeads)⌋) or 'tiled' (a llama.cpp qwen35 file's: h reads h mod kvHeads; the
   * folder's head g·(heads / kvHeads) + j is the file's j·kvHeads + g).
   */
  valueHeadOrder?: 'grouped' | 'tiled';
  /**
   * The layer whose keys and values it reads: itself, or an earlier layer whose K/V it shares
   * (Gemma 4); null for a conv layer.
   */
  kvFrom: number | null;
  /** The keys a query sees, itself included; 0 = all earlier ones. */
  window: number;
}

/** run()'s activations as the bytes of a safetensors file (F32, the hook names as keys), for other tools. */
export function captureToSafetensors(activations: Record<string, Tensor>): Uint8Array;
