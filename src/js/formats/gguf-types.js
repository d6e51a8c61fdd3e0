// The types of a GGUF file: ggml's tensor types — the rows of the core's own type table
// (src/kernels/weight_types.h), which scripts/gen-constants.mjs writes into constants.js as GGML_TYPE
// (id, name, elements and bytes per block, whether the core computes with it, whether it has an int8
// product) — and GGUF's metadata value types.
import { GGML_TYPE } from '../constants.js';

/** Every ggml tensor type a GGUF file may hold, in id order (gaps: ids ggml removed). */
export const GGML_TYPES = Object.freeze(Object.values(GGML_TYPE));

/** The GGML_TYPES entry of a type id, or undefined. */
export const ggmlType = (() => {
  const byId = new Map(GGML_TYPES.map((t) => [t.id, t]));
  return (id) => byId.get(id);
})();

/**
 * GGUF's metadata value types by id: name, bytes of one value (0: variable), the DataView getter
 * and the typed array of an array of them (numbers); 'bool', 'string' and 'array' are read apart.
 */
export const GGUF_VALUE_TYPES = Object.freeze([
  { name: 'uint8', size: 1, get: 'getUint8', Array: Uint8Array },
  { name: 'int8', size: 1, get: 'getInt8', Array: Int8Array },
  { name: 'uint16', size: 2, get: 'getUint16', Array: Uint16Array },
  { name: 'int16', size: 2, get: 'getInt16', Array: Int16Array },
  { name: 'uint32', size: 4, get: 'getUint32', Array: Uint32Array },
  { name: 'int32', size: 4, get: 'getInt32', Array: Int32Array },
  { name: 'float32', size: 4, get: 'getFloat32', Array: Float32Array },
  { name: 'bool', size: 1 },
  { name: 'string', size: 0 },
  { name: 'array', size: 0 },
  { name: 'uint64', size: 8, get: 'getBigUint64', Array: BigUint64Array },
  { name: 'int64', size: 8, get: 'getBigInt64', Array: BigInt64Array },
  { name: 'float64', size: 8, get: 'getFloat64', Array: Float64Array },
]);
