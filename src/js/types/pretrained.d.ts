// Hugging Face checkpoints: loadPretrained, PretrainedModel and generation.
import type { Tensor } from './tensor.js';
import type { HookInfo, LayerInfo, RunOptions, RunResult, SteeringVectorOptions, HookEdit } from './hooks.js';
import type { TraceStep } from './ops.js';
import type { memoryLimit, setMemoryLimit } from './runtime.js';
import type { IdsLike, TinyTransformer } from './model.js';
import type {
  HeadScores,
  HeadScoresOptions,
  LogitAttribution,
  LogitAttributionOptions,
  QkAttribution,
  QkAttributionOptions,
  PatchOptions,
  PatchResult,
} from './interp.js';
import type {
  AttributionPatchOptions,
  MetricGradients,
  MetricGradientsOptions,
  Saliency,
  SaliencyOptions,
} from './gradients.js';
import type { LoadHubOptions } from './hub.js';

/**
 * {@link loadPretrained}'s options. Weights are kept in the file's format in the wasm heap (F16 and
 * BF16 stay 16-bit and are widened inside the GEMM; norms and biases become float32), so a model
 * takes about its file's size plus the activations of a call.
 */
export interface LoadPretrainedOptions {
  /**
   * The parsed config.json: `architectures` a list of one key of {@link PRETRAINED_CONFIG_KEYS} (the
   * supported architectures; `model_type`, when present, the one its entry names), in the transformers 4 layout (`rope_theta`, `rope_scaling`) or the transformers 5 one
   * (`rope_parameters`; both present must agree). Every key must be one docs/checkpoints.md lists as
   * implemented, inert, or inert at its default (and hold that default); anything else, an
   * unimplemented `rope_type`, `quantization_config` and `auto_map` are INVALID_ARGUMENT naming it.
   */
  config: Record<string, unknown>;
  /** model.safetensors (any view, at any byteOffset; Blob and File are read tensor by tensor), or with `weightsIndex` the shards: `{ fileName: bytes }` or File objects matched by `.name`. */
  weights:
    ArrayBuffer | ArrayBufferView | Blob | Record<string, ArrayBuffer | ArrayBufferView | Blob> | File[];
  /** The parsed model.safetensors.index.json of a sharded checkpoint. */
  weightsIndex?: { weight_map: Record<string, string> } | null;
  /**
   * The parsed tokenizer.json (optional: without it the model takes token ids only), read by the
   * vendored @huggingface/tokenizers 0.2.0 (loaded only then).
   */
  tokenizer?: Record<string, unknown> | null;
  /** The parsed tokenizer_config.json, when the checkpoint has one (special tokens, clean-up). */
  tokenizerConfig?: Record<string, unknown> | null;
  /** The parsed generation_config.json, when the checkpoint has one: its `eos_token_id` is generate's default `stop`. */
  generationConfig?: Record<string, unknown> | null;
  /**
   * The text of chat_template.jinja, when the checkpoint has one (transformers 5 saves the template
   * there): it is the "default" template, over tokenizer_config.json's `chat_template`.
   */
  chatTemplate?: string | null;
  /** Called as the weights are copied (each tensor, in chunks of at most 16 MiB) with the bytes read so far and the total. */
  onProgress?: (bytesDone: number, bytesTotal: number) => void;
  /**
   * Bytes this model may use: its weights in the heap (checked from the file headers before the first
   * tensor is allocated) and each of its calls' buffers (forward, generate). Default: the library's
   * {@link memoryLimit} at load time (1 GiB unless {@link setMemoryLimit} changed it), which holds
   * SmolLM2-360M in BF16 (724 MB). A model over it is TOO_LARGE naming this option. The library's
   * own limit is not changed. The 32-bit heap holds at most 4 GiB.
   */
  memoryLimit?: number;
  /** Stops the load between chunks: ABORTED. */
  signal?: AbortSignal;
  /**
   * Keeps the tables the model only looks up by token id — the token embedding when the output head
   * is its own tensor (untied), Gemma 4's per-layer table — outside the wasm heap, in JS memory
   * (ArrayBuffers of whole rows in the file's format); each call copies in the rows its ids need. The
   * memory check before loading counts the heap's tensors only. A tied embedding stays in the heap.
   * Default true; false puts every tensor in the heap. The results are the same bits either way.
   */
  offHeap?: boolean;
}

/**
 * {@link loadPretrained}'s options for a GGUF file (llama.cpp's format; docs/gguf.md): the file
 * holds the config, the weights and the tokenizer, so `config`, `weights`, `weightsIndex`,
 * `tokenizer`, `tokenizerConfig` and `generationConfig` may not be given with it.
 */
export interface LoadGGUFOptions {
  /**
   * The GGUF file (version 2 or 3, little-endian): a File or Blob (read tensor by tensor, never
   * whole), an ArrayBuffer or a view, or the parts of a split file as a list in any order. Its
   * `general.architecture` is one of llama, qwen2, qwen3, gemma2, gemma3, phi3, gpt2, olmo2,
   * smollm3; the model computes what llama.cpp computes for the file. Weights stay as stored
   * (F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K … Q6_K, IQ4_NL); any other type, a key that
   * changes the computation and is not implemented, or a tensor the model would not read is
   * INVALID_ARGUMENT naming it.
   */
  gguf: ArrayBuffer | ArrayBufferView | Blob | Array<ArrayBuffer | ArrayBufferView | Blob>;
  /** As {@link LoadPretrainedOptions.chatTemplate}: over the file's `tokenizer.chat_template`. */
  chatTemplate?: string | null;
  /** As {@link LoadPretrainedOptions.onProgress}; the total is the file's stored (quantized) tensor bytes. */
  onProgress?: (bytesDone: number, bytesTotal: number) => void;
  /** As {@link LoadPretrainedOptions.memoryLimit}, checked against the stored bytes before the first tensor. */
  memoryLimit?: number;
  /** As {@link LoadPretrainedOptions.signal}. */
  signal?: AbortSignal;
  /** As {@link LoadPretrainedOptions.offHeap}. */
  offHeap?: boolean;
  /**
   * How the quantized matrices multiply the activations (docs/gguf.md, "Activations: exact or
   * int8"). 'exact' (the default): each block dequantized exactly, float32 products. 'int8': as
   * llama.cpp's CPU backend computes — each activation row quantized per block to Q8_0, Q8_1 or
   * Q8_K (the type ggml pairs with the weight's), integer dot products, the block scales applied
   * after; faster, and closer to llama.cpp's numbers. F32/F16/BF16 matrices, the attention and the
   * backward (gradients) stay exact. INVALID_ARGUMENT for a file without quantized matrices.
   */
  activations?: 'exact' | 'int8';
  config?: undefined;
  weights?: undefined;
}

/** A Hugging Face checkpoint (or a GGUF file) on this library's kernels. Call {@link dispose}. */
export class PretrainedModel {
  private constructor();
  /** The parsed config.json; for a GGUF file, the config.json it maps to (what llama.cpp computes). */
  readonly config: Record<string, unknown>;
  /**
   * A GGUF file's own key/values (numbers, strings, bools, arrays of up to 16 values as arrays;
   * longer arrays summarised as their type and length, e.g. "array<string>[151936]"); null for a
   * safetensors checkpoint.
   */
  readonly metadata: Readonly<Record<string, unknown>> | null;
  /** `config.architectures[0]`; for a multimodal checkpoint, its text model's (e.g. `Ministral3ForCausalLM`). */
  readonly architecture: string;
  /**
   * What the checkpoint holds that is not run: a multimodal checkpoint's towers (e.g. "the vision
   * tower (Pixtral) and its projector (vision_config)"; its text model alone is loaded); else empty.
   */
  readonly ignored: readonly string[];
  readonly numLayers: number;
  /** Query heads. */
  readonly numHeads: number;
  readonly numKVHeads: number;
  /** Width of one attention head. */
  readonly headDim: number;
  /** Width of the residual stream. */
  readonly hiddenSize: number;
  readonly vocabSize: number;
  /** The longest input, prompt plus generated tokens (for rope_type "dynamic": its original_max_position_embeddings). */
  readonly maxPositions: number;
  /**
   * Each layer: {@link LayerInfo} (`kind`, `heads`, `kvHeads`, `headDim`, `kvFrom`) and what differs
   * between layers: `window` (the keys a query sees, itself
   * included; 0 = all earlier ones), `rope` (whether q and k are rotated: SmolLM3 has layers without),
   * `ropeTheta` (its base: Gemma 3's sliding layers have their own; null without RoPE), `ropeScaled`
   * (scaled frequencies: llama3, linear), `qkNorm` (q and k RMS-normalised), `softcap` (scores
   * soft-capped at c·tanh(s/c); 0 = none).
   */
  readonly layers: ReadonlyArray<
    LayerInfo & {
      rope: boolean;
      ropeTheta: number | null;
      ropeScaled: boolean;
      qkNorm: boolean;
      softcap: number;
    }
  >;
  /** Every hook point with its shape (docs/interpretability.md). */
  hookNames(): HookInfo[];
  /** One forward with hook captures and edits. */
  run(ids: IdsLike, options?: RunOptions): RunResult;
  /** Mean of a hook at a position over positive prompts minus over negative ones: Tensor shaped like the hook at one position. */
  steeringVector(options: SteeringVectorOptions): Tensor;
  /** generate's default `stop`: the checkpoint's EOS ids (generation_config.json's, else config.json's); may be empty. */
  readonly stopIds: number[];
  /** Bytes the weights take in the wasm heap (matrices in the file's format, norms and biases as float32). */
  readonly weightBytes: number;
  /**
   * Bytes of the tables kept outside the wasm heap, in JS memory ({@link LoadPretrainedOptions.offHeap}):
   * 0 when every tensor is in the heap. weightBytes + offHeapBytes is what the weights take in all.
   */
  readonly offHeapBytes: number;
  /** How the quantized matrices multiply the activations: 'int8' when loaded with {@link LoadGGUFOptions.activations} 'int8', else 'exact'. */
  readonly activations: 'exact' | 'int8';
  /** The byte limit of this model's weights and calls (loadPretrained's `memoryLimit`). */
  readonly memoryLimit: number;
  /**
   * Logits (B, T, V) and, as {@link TinyTransformer.forward}, `attention` (per layer, (B, H, T, T) or
   * null) and `trace`; `hiddenStates`: numLayers + 1 tensors (B, T, hidden) in Hugging Face's
   * output_hidden_states order. ids: (T) or (B, T), in [0, vocab), T ≤ the model's positions.
   */
  forward(
    ids: IdsLike,
    options?: {
      attention?: boolean | number[];
      trace?: boolean | { layers: number[] };
      hiddenStates?: boolean;
      logitLens?: boolean;
    },
  ): {
    logits: Tensor;
    /**
     * Per layer asked for: an attention layer's softmax weights (B, H, T, T); a conv layer's (LFM2)
     * exact token mixing, (B, 1, T, T): A[t, s] = mean over channels c of C[t, c]·w[c][K − 1 − (t − s)]·B[s, c],
     * banded (0 unless t − K < s ≤ t), signed, rows not summing to 1.
     */
    attention: (Tensor | null)[];
    /** What each `attention` entry is: `'attention'`, `'conv'`, or null where none was returned. */
    attentionKinds: ('attention' | 'conv' | 'delta' | null)[];
    /**
     * Per layer traced: an attention layer's steps (and `z`, the gated rows `o_proj` reads, after an
     * output gate); a DeltaNet layer's one step `z` (B, H_v, T, d_v), its value heads' gated-norm
     * output; null for layers not traced.
     */
    trace?: (TraceStep[] | null)[];
    hiddenStates?: Tensor[];
    /**
     * With `logitLens`: each residual stream (the embeddings, then every block's output) through the
     * final norm and the head: `ids` (int32) and `probs`, (numLayers + 1, B, T), the top token and its
     * probability; the last row is the model's own prediction.
     */
    logitLens?: { ids: Tensor; probs: Tensor };
  };
  /**
   * Head-type scores from this model's own attention on `ids` (a batch of one), as
   * {@link TinyTransformer.headScores}: Tensor (numLayers, numHeads) per kind, query heads (grouped-query models too).
   */
  headScores(ids: IdsLike, options?: HeadScoresOptions): HeadScores;
  /**
   * Direct logit attribution (a batch of one), as {@link TinyTransformer.logitAttribution}, for every
   * supported architecture: LayerNorm (GPT-2) or RMSNorm frozen at its actual input, the
   * post-norms (OLMo 2, Gemma) frozen at their branch's output. See {@link LogitAttribution}.
   */
  logitAttribution(ids: IdsLike, options: LogitAttributionOptions): LogitAttribution;
  /**
   * QK attribution (a batch of one), as {@link TinyTransformer.qkAttribution}, for every supported
   * architecture: q/k norms and post-norms frozen at their actual input, partial and scaled RoPE per
   * layer, grouped-query heads through their key head. See {@link QkAttribution}.
   */
  qkAttribution(ids: IdsLike, options: QkAttributionOptions): QkAttribution;
  /** Activation patching, as {@link TinyTransformer.patch}. */
  patch(options: PatchOptions): Promise<PatchResult>;
  /**
   * M's value and ∂M/∂ each hidden state, each head's z and (with `attention`) each layer's attention
   * weights (a batch of one). See {@link MetricGradients}; bad options are `INVALID_ARGUMENT` naming them.
   */
  metricGradients(ids: IdsLike, options: MetricGradientsOptions): MetricGradients;
  /** Input saliency: one score per position. See {@link SaliencyOptions} and {@link Saliency}. */
  saliency(ids: IdsLike, options: SaliencyOptions): Promise<Saliency>;
  /**
   * Attribution patching: patch's result approximated from one backward per pair. See
   * {@link AttributionPatchOptions}; the result as {@link PatchResult}.
   */
  attributionPatch(options: AttributionPatchOptions): Promise<PatchResult>;
  /**
   * Only the `maxNewTokens` new ids (B, maxNewTokens), int32, greedy at temperature 0 (default), else
   * sampled: temperature, then the topK likeliest (0 = all), then the smallest set whose probability
   * reaches topP, from a generator seeded by `seed` (same seed, same ids); ties go to the lower id. A
   * row that produces one of the `stop` ids keeps it and is padded with {@link GENERATE_PAD} (-1)
   * after it; generation ends when every row has stopped. Decoded with a KV cache per layer
   * (`kvCache`), the prompt in chunks (`prefillChunk`, `onProgress`); `signal` stops it between
   * chunks and steps: ABORTED.
   */
  generate(ids: IdsLike, options: GenerateOptions): Tensor;
  /**
   * The same tokens one at a time, for a batch of one: `{ id, text }` (text: the token decoded, or
   * null without a tokenizer), yielding to the page between tokens and between the prompt's prefill
   * chunks; ends after a stop id, after maxNewTokens, or when `signal` aborts (no error: the stream
   * just ends). The model's other generation calls wait for it to end.
   */
  generateStream(
    ids: IdsLike,
    options: GenerateOptions,
  ): AsyncGenerator<{ id: number; text: string | null }, void, undefined>;
  /**
   * A long prompt (ids (T) or (1, T)) read in chunks over the model's caches, keeping what the
   * attention maps of `maps.layers` need (their queries and keys in float16: O(L·T·d)) and the last
   * row's logits; never a (T, T) or (T, vocab) tensor. See {@link PrefillOptions} and {@link MapSession}.
   * Rejects with ABORTED when `signal` fires (checked between chunks).
   */
  prefill(ids: IdsLike, options?: PrefillOptions): Promise<MapSession>;
  /**
   * The bytes {@link PretrainedModel.prefill}'s map state takes for `length` tokens and `maps`, stated
   * before the run: 2·length·Σ(H·d of each layer + H_kv·d of each layer whose keys they read).
   */
  mapStateBytes(length: number, maps: { layers: number[] | true }): number;
  /** Token ids of text, with what the tokenizer's post-processor adds (e.g. a BOS token) unless `addSpecialTokens` is false. Needs a tokenizer. */
  encode(text: string, options?: { addSpecialTokens?: boolean }): Int32Array;
  /**
   * A chat as the model's chat template writes it, as transformers' apply_chat_template does
   * (rendered by the vendored @huggingface/jinja): the ids of the text, tokenized without adding
   * special tokens again (the template writes BOS itself), or the text with `tokenize: false`.
   * `template` picks one of a list of named templates (default "default"); `date` is what
   * `strftime_now` formats (default now); `variables` are further template variables, as
   * apply_chat_template's keyword arguments (`{ enable_thinking: false }` for Qwen3 and Qwen3.5's
   * templates), the context's own names refused. A template that loops, recurses or writes more than
   * 2^20 characters is TOO_LARGE; one that fails or calls raise_exception is INVALID_ARGUMENT.
   */
  applyChatTemplate(
    messages: ReadonlyArray<{ role: string; content: string }>,
    options?: {
      addGenerationPrompt?: boolean;
      tokenize?: true;
      template?: string;
      date?: Date;
      variables?: Record<string, unknown>;
    },
  ): Int32Array;
  applyChatTemplate(
    messages: ReadonlyArray<{ role: string; content: string }>,
    options: {
      addGenerationPrompt?: boolean;
      tokenize: false;
      template?: string;
      date?: Date;
      variables?: Record<string, unknown>;
    },
  ): string;
  /** The names of this model's chat templates (empty when it has none). */
  readonly chatTemplateNames: string[];
  /** The text of ids. Needs a tokenizer. */
  decode(ids: IdsLike): string;
  /** Each token's own decoded text (GPT-2's "Ġ" as a space). Needs a tokenizer. */
  tokenStrings(ids: IdsLike): string[];
  dispose(): void;
}

/** generate's options; INVALID_ARGUMENT for anything outside the ranges given. */
export interface GenerateOptions {
  /** New tokens per row, >= 1. */
  maxNewTokens: number;
  /** 0 (default) = greedy; > 0 divides the logits before the softmax. */
  temperature?: number;
  /** Keep only the k likeliest ids (0, the default, = all); an integer >= 0. */
  topK?: number;
  /** Keep the smallest set of likeliest ids whose probability reaches topP; in (0, 1], default 1. */
  topP?: number;
  /** The sampler's seed, an integer in [0, 2^32); default 0. */
  seed?: number;
  /** Ids that end a row (kept, then padded with GENERATE_PAD); default the model's `stopIds`; [] = never stop early. */
  stop?: number | number[];
  /** Steering: edits applied to the prompt's rows and every decoding step (vectors over one position; not the scores or the pattern). */
  edits?: HookEdit[];
  /**
   * How the KV caches store keys and values: 'f32' (the default) or 'f16', IEEE float16 as
   * llama.cpp's default cache (half the bytes; rounded to nearest even, widened back tile by tile
   * inside the attention). A step whose keys or values pass float16's range (±65504) is NON_FINITE.
   */
  kvCache?: 'f32' | 'f16';
  /** Prompt tokens per sequence in each chunk of the prefill; an integer >= 1, default 256. */
  prefillChunk?: number;
  /** Called after each chunk of the prompt's prefill with the tokens done and the prompt's length. */
  onProgress?: (done: number, total: number) => void;
  /** Stops the generation between prefill chunks and decoding steps: generate throws ABORTED, generateStream ends. */
  signal?: AbortSignal;
}

/** The id generate() writes after a row's stop token: -1, never a token id. */
export const GENERATE_PAD: -1;

/** Loads a Hugging Face checkpoint of a supported architecture ({@link PRETRAINED_CONFIG_KEYS}) from its files, offline. */
export function loadPretrained(
  options: LoadPretrainedOptions | LoadGGUFOptions | LoadHubOptions,
): Promise<PretrainedModel>;

/**
 * [name, shape] of every tensor a checkpoint of `config` (a parsed config.json of a supported
 * architecture) holds, in the file's layout, sorted by name as safetensors writers do: the core's
 * list of the tensors it needs, named by the family registry (after {@link init}). For writing or
 * checking a checkpoint; unsupported configs are refused as loadPretrained refuses them.
 */
export function checkpointTensors(config: Record<string, unknown>): Array<[string, number[]]>;

/** One supported architecture's config.json keys (docs/checkpoints.md, "The rule: no silent wrong answers"). */
export interface PretrainedConfigKeys {
  /** The `model_type` config.json must name with this architecture. */
  readonly modelType: string;
  /** The keys that change what is computed, each with transformers' class default (used when config.json omits it). */
  readonly implemented: Readonly<Record<string, unknown>>;
  /** The keys that cannot change the forward pass (beside the ones every architecture shares). */
  readonly inert: readonly string[];
  /** The keys accepted only at the value given. */
  readonly defaultOnly: Readonly<Record<string, unknown>>;
}

/**
 * The supported architectures (the `config.architectures[0]` values {@link loadPretrained} accepts)
 * and, for each, its config.json key table. A key neither in its architecture's table nor among the
 * bookkeeping keys every architecture shares (docs/checkpoints.md lists both), or a default-only key at
 * another value, is INVALID_ARGUMENT.
 */
export const PRETRAINED_CONFIG_KEYS: Readonly<Record<string, PretrainedConfigKeys>>;
/**
 * The supported architectures (config.json's `architectures[0]`), one per family of the registry
 * (`src/js/architectures/`), in the docs' order; the keys of {@link PRETRAINED_CONFIG_KEYS}.
 */
export const PRETRAINED_ARCHITECTURES: readonly string[];

/** {@link PretrainedModel.prefill}'s options. */
export interface PrefillOptions {
  /**
   * The layers whose maps the session computes on demand: an array of layer indices, or `true` for
   * every softmax-attention layer. A short-convolution (LFM2) or DeltaNet (Qwen3.5) layer named here is
   * an INVALID_ARGUMENT naming its kind. Omitted: no maps (the logits only).
   */
  maps?: { layers: number[] | true };
  /** Rows per chunk (default 256). */
  prefillChunk?: number;
  /** After each chunk: rows done and the prompt's length. */
  onProgress?: (done: number, total: number) => void;
  /** Stops the prefill between chunks: ABORTED (the session is freed). */
  signal?: AbortSignal;
}

/**
 * A prefill's result (dispose it): the last row's logits and the attention maps of its layers,
 * computed on demand from the kept queries and keys, in tiles, with the forward's masks (causal, the
 * layer's sliding window, soft-cap, scale, grouped-query heads, per-layer head sizes and shared keys).
 * Weights match forward's to float16 rounding of q and k. Every call after dispose() is DISPOSED.
 */
export interface MapSession {
  /** The prompt's length T. */
  readonly length: number;
  /** The last row's logits (vocabulary), a copy. */
  readonly logits: Float32Array;
  /** The layers with maps. */
  readonly layers: readonly number[];
  /** Bytes of the map state held in the wasm heap. */
  readonly mapBytes: number;
  /**
   * A pooled map of n = min(T, 512) cells a side: cell (a, b) is the max (default) or mean of the
   * exact weights of query rows [⌊a·T/n⌋, ⌊(a+1)·T/n⌋) and key columns [⌊b·T/n⌋, ⌊(b+1)·T/n⌋) (masked
   * weights count as 0). `head`: a Tensor (n, n); `heads`: (heads.length, n, n).
   */
  overview(options: { layer: number; head?: number; heads?: number[]; pool?: 'max' | 'mean' }): Tensor;
  /** The exact weights of query rows [start, end) × key columns [start, end): (rows, cols); at most 2^22 (TOO_LARGE). */
  tile(options: { layer: number; head: number; rows: [number, number]; cols: [number, number] }): Tensor;
  /** Row `query`'s k largest weights, largest first (ties: the earlier key). */
  topK(options: { layer: number; head: number; query: number; k: number }): {
    indices: Int32Array;
    weights: Float32Array;
  };
  /** Frees the map state; later calls throw DISPOSED. */
  dispose(): void;
}
