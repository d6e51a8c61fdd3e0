// Training a TinyTransformer: the AdamW trainer, the toy tasks and their evaluation.
import type { Tensor, TensorLike } from './tensor.js';
import type { IdsLike, TinyTransformer } from './model.js';

/** Options of {@link Trainer}: torch.optim.AdamW's, after torch.nn.utils.clip_grad_norm_. */
export interface TrainerOptions {
  /** Learning rate, finite ≥ 0 (default 1e-3). */
  lr?: number;
  /** [beta1, beta2], each in [0, 1) (default [0.9, 0.999]). */
  betas?: [number, number];
  /** > 0 (default 1e-8). */
  eps?: number;
  /** Decoupled weight decay on every parameter (default 0.01). */
  weightDecay?: number;
  /** Clip the total gradient norm to this (> 0); null (default) = no clipping. */
  clipGradNorm?: number | null;
}

/** Optimiser state, PyTorch's names: moments by parameter name. */
export interface TrainerState {
  step: number;
  exp_avg: Record<string, TensorLike>;
  exp_avg_sq: Record<string, TensorLike>;
}

/**
 * AdamW over every parameter of a {@link TinyTransformer}; a step is one wasm call. The trainer
 * keeps the model's C++ object alive, but after `model.dispose()` {@link step} throws `DISPOSED`.
 * Owns wasm memory: call {@link dispose}.
 */
export class Trainer {
  constructor(model: TinyTransformer, options?: TrainerOptions);
  readonly model: TinyTransformer;
  /** Steps taken (failed steps do not count). */
  readonly steps: number;
  /**
   * Forward, backward, clipping and update. `loss` is at the weights before the update, `gradNorm`
   * the total gradient norm before clipping. A step whose loss, gradients or update are not finite
   * throws `NON_FINITE` naming the step, with weights, moments and `steps` unchanged.
   */
  step(ids: IdsLike, targets: IdsLike): { loss: number; gradNorm: number };
  setLearningRate(lr: number): void;
  /** Copies of the step count and both moments. */
  stateDict(): { step: number; exp_avg: Record<string, Tensor>; exp_avg_sq: Record<string, Tensor> };
  /** Restores a state (strict, as {@link TinyTransformer.loadStateDict}); nothing changes on an error. */
  loadStateDict(state: TrainerState): this;
  dispose(): void;
}

/** The toy tasks of {@link createTask}. */
export type TaskName = 'copy' | 'reverse' | 'sort' | 'induction';

/** Options of {@link createTask}. */
export interface TaskOptions {
  /** Input symbols (copy, reverse, sort: T = 2·length), or the segment (induction: T = 4·length + 1). */
  length: number;
  /** Symbols 0 … numSymbols − 1 (default 10); the separator is token numSymbols. Induction needs numSymbols > length. */
  numSymbols?: number;
  /** Seed of the task's batch stream (default 0). */
  seed?: number;
}

/**
 * A seeded toy sequence task (format: src/train/tasks.h). ids = sequence[:-1], targets =
 * sequence[1:] with −100 everywhere but the answer. Owns wasm memory: call {@link dispose}.
 */
export interface Task {
  readonly name: TaskName;
  /** numSymbols + 1 (the separator). */
  readonly vocabSize: number;
  /** T of ids and targets. */
  readonly sequenceLength: number;
  /** '0', '1', …, then '|' for the separator. */
  readonly tokenNames: readonly string[];
  /** The next n sequences of the task's stream: (n, T) int32 Tensors. */
  batch(n: number): { ids: Tensor; targets: Tensor };
  dispose(): void;
}

export function createTask(name: TaskName, options: TaskOptions): Task;

/** Options of {@link evaluate}. */
export interface EvaluateOptions {
  /** Batches to score (default 8). */
  batches?: number;
  /** Seed of the evaluation stream, independent of the task's training stream (default 0). */
  seed?: number;
  /** Sequences per batch (default 32). */
  batchSize?: number;
}

/**
 * Teacher-forced scores of `model` on `task`: the mean cross-entropy over every scored position,
 * the fraction of scored positions whose argmax logit is the target, and the fraction of sequences
 * with every scored position right.
 */
export function evaluate(
  model: TinyTransformer,
  task: Task,
  options?: EvaluateOptions,
): { loss: number; tokenAccuracy: number; sequenceAccuracy: number };
