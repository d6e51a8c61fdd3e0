// Tensor: a row-major buffer with a shape. float32 values, or a boolean mask (dtype 'bool').
import { AttentionError } from './errors.js';

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
    throw new AttentionError('SHAPE_MISMATCH', `nested array is ragged at depth ${depth}: expected ${shape[depth]} items`);
  }
  for (const item of nested) flattenNested(item, shape, depth + 1, out);
}

function checkShape(shape) {
  if (!Array.isArray(shape) || !shape.every((d) => Number.isInteger(d) && d >= 0)) {
    throw new AttentionError('SHAPE_MISMATCH', `shape must be an array of non-negative integers, got ${JSON.stringify(shape)}`);
  }
}

/** The number of elements of a shape, after checking it. */
export function shapeSize(shape) {
  checkShape(shape);
  return shape.reduce((a, b) => a * b, 1);
}

export class Tensor {
  /**
   * @param {Float32Array|Uint8Array|number[]|boolean[]|any[]} data flat values (row-major) or nested arrays
   * @param {number[]} [shape] defaults to the nested arrays' shape, or [data.length]
   */
  constructor(data, shape) {
    let flat = data;
    if (Array.isArray(data) && Array.isArray(data[0])) {
      const inferred = inferShape(data);
      flat = [];
      flattenNested(data, inferred, 0, flat);
      shape ??= inferred;
    }
    shape ??= [flat.length];
    checkShape(shape);
    const isBool = flat instanceof Uint8Array || (Array.isArray(flat) && flat.length > 0 && typeof flat[0] === 'boolean');
    if (isBool) {
      this.dtype = 'bool';
      this.data = flat instanceof Uint8Array ? flat : Uint8Array.from(flat, (b) => (b ? 1 : 0));
    } else if (flat instanceof Float32Array) {
      this.dtype = 'float32';
      this.data = flat;
    } else if (Array.isArray(flat) || ArrayBuffer.isView(flat)) {
      this.dtype = 'float32';
      this.data = Float32Array.from(flat, Number);
    } else {
      throw new AttentionError('INVALID_ARGUMENT', 'Tensor data must be a Float32Array, Uint8Array or an array');
    }
    this.shape = [...shape];
    const size = this.shape.reduce((a, b) => a * b, 1);
    if (size !== this.data.length) {
      throw new AttentionError('SHAPE_MISMATCH', `Tensor has ${this.data.length} values but shape [${this.shape}] needs ${size}`);
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

  /** The value at a multi-index; booleans come back as true/false. */
  get(...index) {
    if (index.length !== this.shape.length) {
      throw new AttentionError('SHAPE_MISMATCH', `get() needs ${this.shape.length} indices, got ${index.length}`);
    }
    let flat = 0;
    for (let a = 0; a < index.length; a++) {
      const i = index[a];
      if (!Number.isInteger(i) || i < 0 || i >= this.shape[a]) {
        throw new AttentionError('INVALID_ARGUMENT', `index ${i} is out of range for axis ${a} of size ${this.shape[a]}`);
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

/** Accepts a Tensor, a { data, shape } object or nested arrays; returns a Tensor. */
export function asTensor(value, what) {
  if (value instanceof Tensor) return value;
  if (value && typeof value === 'object' && 'data' in value && 'shape' in value) {
    return new Tensor(value.data, value.shape);
  }
  if (Array.isArray(value)) return new Tensor(value);
  throw new AttentionError('INVALID_ARGUMENT', `${what} must be a Tensor, { data, shape } or a nested array`);
}

/** A float32 tensor for `what`; a boolean tensor there is an error. */
export function asFloatTensor(value, what) {
  const t = asTensor(value, what);
  if (t.dtype !== 'float32') {
    throw new AttentionError('INVALID_ARGUMENT', `${what} must be a float32 tensor, got a boolean tensor`);
  }
  return t;
}

/** A boolean mask for `what`; a float tensor is an error, not a guess. */
export function asBoolTensor(value, what, meaning = 'true = may attend') {
  const t = asTensor(value, what);
  if (t.dtype !== 'bool') {
    throw new AttentionError('INVALID_MASK', `${what} must be a boolean tensor (Uint8Array or boolean[]; ${meaning}), got float32`);
  }
  return t;
}

/** Wraps a binding result { data, shape } as a Tensor without copying again. */
export function fromCore(result) {
  return new Tensor(result.data, result.shape);
}
