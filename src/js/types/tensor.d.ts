// The tensor type and the error every function throws.

/** Stable error codes of {@link AttentionError}. */
export type AttentionErrorCode =
  | 'INVALID_ARGUMENT'
  | 'SHAPE_MISMATCH'
  | 'HEADS_DO_NOT_DIVIDE'
  | 'EMPTY_INPUT'
  | 'NON_FINITE'
  | 'TOO_LARGE'
  | 'INVALID_MASK'
  | 'UNKNOWN_PARAMETER'
  | 'NOT_INITIALIZED'
  | 'DISPOSED'
  | 'ABORTED'
  | 'NETWORK'
  | 'NOT_FOUND'
  | 'NEEDS_TOKEN'
  | 'NO_ACCESS'
  | 'QUOTA';

/** Every error thrown by the library; `message` names the problem. */
export class AttentionError extends Error {
  readonly name: 'AttentionError';
  readonly code: AttentionErrorCode;
  constructor(code: AttentionErrorCode, message: string);
}

/** Nested plain arrays of numbers (or booleans for masks). */
export type NestedArray<T> = T[] | NestedArray<T>[];

/** Anything the API accepts where a tensor is expected. */
export type TensorLike =
  Tensor | { data: ArrayLike<number>; shape: number[] } | NestedArray<number> | NestedArray<boolean>;

/** The element types of a {@link Tensor}. */
export type DType = 'float32' | 'int32' | 'bool';

/** Options of the {@link Tensor} constructor. */
export interface TensorOptions {
  /**
   * Converts the data to this dtype (default: the dtype the data implies). `'int32'` accepts only
   * integers in [−2^31, 2^31); anything else (2.5, NaN, 2^31, `true`) is an `INVALID_ARGUMENT`.
   */
  dtype?: DType;
}

/** A row-major tensor. */
export class Tensor {
  /**
   * @param data flat row-major values, or nested arrays (shape inferred). A `Float32Array`,
   *   `Int32Array` or `Uint8Array` of the tensor's dtype is wrapped without copying; other data is
   *   converted. Without `options.dtype`: `Int32Array` makes an int32 tensor, `Uint8Array` /
   *   `boolean[]` a boolean mask tensor (1/true = may attend), anything else float32.
   * @param shape defaults to the nested arrays' shape, or `[data.length]`.
   * @param options `{ dtype: 'int32' }` for integer tensors from nested arrays or other typed arrays.
   * @throws AttentionError `SHAPE_MISMATCH` when the sizes disagree; `INVALID_ARGUMENT` for values
   *   the dtype cannot hold exactly.
   */
  constructor(
    data:
      | Float32Array
      | Int32Array
      | Uint8Array
      | ArrayLike<number>
      | boolean[]
      | NestedArray<number>
      | NestedArray<boolean>,
    shape?: number[] | null,
    options?: TensorOptions,
  );
  readonly dtype: DType;
  readonly data: Float32Array | Int32Array | Uint8Array;
  readonly shape: number[];
  /** Number of elements. */
  readonly size: number;
  /** Number of axes. */
  readonly rank: number;
  /** The value at a multi-index (a boolean for masks, an integer for int32 tensors). */
  get(...index: number[]): number | boolean;
  /** The values as nested plain arrays. */
  toArray(): NestedArray<number> | NestedArray<boolean>;
}
