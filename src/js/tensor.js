// Tensor: a row-major buffer with a shape. float32 values, int32 values (token ids, indices: dtype
// 'int32'), or a boolean mask (dtype 'bool').
import { AttentionError } from './errors.js';
import { checkOptions, describe } from './options.js';

const DTYPES = ['float32', 'int32', 'bool'];
const kInt32Min = -(2 ** 31);
const kInt32Max = 2 ** 31 - 1;

function inferShape(nested) {
  const shape = [];
  let level = nested;
  while (Array.isArray(level)) {
    shape.push(level.length);
    level = level[0];
  }
  return shape;
}

function flattenNested(nested, shape, depth, out) {
  if (depth === shape.length) {
    out.push(nested);
    return;
  }
  if (!Array.isArray(nested) || nested.length !== shape[depth]) {
    throw new AttentionError(
      'SHAPE_MISMATCH',
      `nested array is ragged at depth ${depth}: expected ${shape[depth]} items`,
    );
  }
  for (const item of nested) flattenNested(item, shape, depth + 1, out);
}

function checkShape(shape) {
  if (!Array.isArray(shape) || !shape.every((d) => Number.isInteger(d) && d >= 0)) {
    throw new AttentionError(
      'SHAPE_MISMATCH',
      `shape must be an array of non-negative integers, got ${JSON.stringify(shape)}`,
    );
  }
}

/** The number of elements of a shape, after checking it. */
export function shapeSize(shape) {
  checkShape(shape);
  return shape.reduce((a, b) => a * b, 1);
}

// The dtype data implies: Uint8Array or boolean[] → bool, Int32Array → int32, other numbers → float32.
function inferDtype(flat) {
  if (flat instanceof Uint8Array || (Array.isArray(flat) && flat.length > 0 && typeof flat[0] === 'boolean'))
    return 'bool';
  return flat instanceof Int32Array ? 'int32' : 'float32';
}

// Values as an Int32Array; anything but integers in [-2^31, 2^31) is refused, not rounded or wrapped.
function toInt32(flat) {
  if (flat instanceof Int32Array) return flat;
  const out = new Int32Array(flat.length);
  for (let i = 0; i < flat.length; i++) {
    const v = typeof flat[i] === 'bigint' ? Number(flat[i]) : flat[i];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < kInt32Min || v > kInt32Max) {
      throw new AttentionError(
        'INVALID_ARGUMENT',
        `int32 tensor value ${i} must be an integer in [-2^31, 2^31), got ${describe(v)}`,
      );
    }
    out[i] = v;
  }
  return out;
}

function toTypedData(flat, dtype) {
  if (dtype === 'int32') return toInt32(flat);
  if (dtype === 'bool') return flat instanceof Uint8Array ? flat : Uint8Array.from(flat, (b) => (b ? 1 : 0));
  return flat instanceof Float32Array ? flat : Float32Array.from(flat, Number);
}

export class Tensor {
  /**
   * @param {Float32Array|Int32Array|Uint8Array|number[]|boolean[]|any[]} data flat values (row-major) or nested arrays
   * @param {number[]} [shape] defaults to the nested arrays' shape, or [data.length]
   * @param {{ dtype?: 'float32'|'int32'|'bool' }} [options] dtype: converts the data (default: as the data implies)
   */
  constructor(data, shape, options) {
    const { dtype } = checkOptions(options, ['dtype'], 'Tensor option');
    if (dtype !== undefined && !DTYPES.includes(dtype)) {
      throw new AttentionError(
        'INVALID_ARGUMENT',
        `Tensor dtype must be one of ${DTYPES.join(', ')}; got ${describe(dtype)}`,
      );
    }
    let flat = data;
    if (Array.isArray(data) && Array.isArray(data[0])) {
      const inferred = inferShape(data);
      flat = [];
      flattenNested(data, inferred, 0, flat);
      shape ??= inferred;
    }
    if (!Array.isArray(flat) && !(ArrayBuffer.isView(flat) && !(flat instanceof DataView))) {
      throw new AttentionError(
        'INVALID_ARGUMENT',
        'Tensor data must be a Float32Array, Int32Array, Uint8Array or an array',
      );
    }
    shape ??= [flat.length];
    checkShape(shape);
    this.dtype = dtype ?? inferDtype(flat);
    this.data = toTypedData(flat, this.dtype);
    this.shape = [...shape];
    const size = this.shape.reduce((a, b) => a * b, 1);
    if (size !== this.data.length) {
      throw new AttentionError(
        'SHAPE_MISMATCH',
        `Tensor has ${this.data.length} values but shape [${this.shape}] needs ${size}`,
      );
    }
  }

  /** Number of elements. */
  get size() {
    return this.data.length;
  }

  /** Number of axes. */
  get rank() {
    return this.shape.length;
  }

  /** The value at a multi-index; booleans come back as true/false, int32 values as integers. */
  get(...index) {
    if (index.length !== this.shape.length) {
      throw new AttentionError(
        'SHAPE_MISMATCH',
        `get() needs ${this.shape.length} indices, got ${index.length}`,
      );
    }
    let flat = 0;
    for (let a = 0; a < index.length; a++) {
      const i = index[a];
      if (!Number.isInteger(i) || i < 0 || i >= this.shape[a]) {
        throw new AttentionError(
          'INVALID_ARGUMENT',
          `index ${i} is out of range for axis ${a} of size ${this.shape[a]}`,
        );
      }
      flat = flat * this.shape[a] + i;
    }
    return this.dtype === 'bool' ? this.data[flat] !== 0 : this.data[flat];
  }

  /** Nested plain arrays (numbers, or booleans for a mask). */
  toArray() {
    const values = this.dtype === 'bool' ? Array.from(this.data, (v) => v !== 0) : Array.from(this.data);
    const build = (axis, offset) => {
      if (axis === this.shape.length) return values[offset];
      const stride = this.shape.slice(axis + 1).reduce((a, b) => a * b, 1);
      return Array.from({ length: this.shape[axis] }, (_, i) => build(axis + 1, offset + i * stride));
    };
    return build(0, 0);
  }
}

const isTensorObject = (value) => value && typeof value === 'object' && 'data' in value && 'shape' in value;

/**
 * Accepts a Tensor, a { data, shape } object or nested arrays; returns a Tensor. Plain data takes
 * `dtype` when given (nested arrays of integers → int32), else the dtype its data implies.
 */
export function asTensor(value, what, dtype) {
  if (value instanceof Tensor) return value;
  const options = dtype ? { dtype } : undefined;
  if (isTensorObject(value)) return new Tensor(value.data, value.shape, options);
  if (Array.isArray(value)) return new Tensor(value, undefined, options);
  throw new AttentionError('INVALID_ARGUMENT', `${what} must be a Tensor, { data, shape } or a nested array`);
}

const dtypeName = { float32: 'a float32', int32: 'an int32', bool: 'a boolean' };

/** A float32 tensor for `what`; a boolean or int32 tensor there is an error, not a cast. */
export function asFloatTensor(value, what) {
  const t = asTensor(value, what);
  if (t.dtype !== 'float32') {
    throw new AttentionError(
      'INVALID_ARGUMENT',
      `${what} must be a float32 tensor, got ${dtypeName[t.dtype]} tensor`,
    );
  }
  return t;
}

/**
 * An int32 tensor for `what` (token ids, indices): an int32 Tensor, nested arrays of integers or
 * { data: Int32Array | number[], shape }. Float or boolean data is an error, not a cast.
 */
export function asIntTensor(value, what) {
  const typed = value instanceof Tensor || (isTensorObject(value) && ArrayBuffer.isView(value.data));
  const t = typed ? asTensor(value, what) : asTensor(value, what, 'int32');
  if (t.dtype !== 'int32') {
    throw new AttentionError(
      'INVALID_ARGUMENT',
      `${what} must be an int32 tensor (Int32Array or integers), got ${dtypeName[t.dtype]} tensor`,
    );
  }
  return t;
}

/** A boolean mask for `what`; a float tensor is an error, not a guess. */
export function asBoolTensor(value, what, meaning = 'true = may attend') {
  const t = asTensor(value, what);
  if (t.dtype !== 'bool') {
    throw new AttentionError(
      'INVALID_MASK',
      `${what} must be a boolean tensor (Uint8Array or boolean[]; ${meaning}), got ${t.dtype}`,
    );
  }
  return t;
}

/** Wraps a binding result { data, shape } as a Tensor without copying again. */
export function fromCore(result) {
  return new Tensor(result.data, result.shape);
}
