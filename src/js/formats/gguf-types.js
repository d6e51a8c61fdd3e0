// The types of a GGUF file: ggml's tensor types (id, name, elements and bytes per block, whether the
// kernels dequantize it) — the same table as src/kernels/quant_scalar.cpp's kTypes, which
// tests/js/gguf.test.mjs compares with this one — and GGUF's metadata value types.

const row = (id, name, blockElements, blockBytes, dequantized) =>
  Object.freeze({ id, name, blockElements, blockBytes, dequantized });

/** Every ggml tensor type a GGUF file may hold, in id order (gaps: ids ggml removed). */
export const GGML_TYPES = Object.freeze([
  row(0, 'F32', 1, 4, true),
  row(1, 'F16', 1, 2, true),
  row(2, 'Q4_0', 32, 18, true),
  row(3, 'Q4_1', 32, 20, true),
  row(6, 'Q5_0', 32, 22, true),
  row(7, 'Q5_1', 32, 24, true),
  row(8, 'Q8_0', 32, 34, true),
  row(9, 'Q8_1', 32, 36, false),
  row(10, 'Q2_K', 256, 84, true),
  row(11, 'Q3_K', 256, 110, true),
  row(12, 'Q4_K', 256, 144, true),
  row(13, 'Q5_K', 256, 176, true),
  row(14, 'Q6_K', 256, 210, true),
  row(15, 'Q8_K', 256, 292, false),
  row(16, 'IQ2_XXS', 256, 66, false),
  row(17, 'IQ2_XS', 256, 74, false),
  row(18, 'IQ3_XXS', 256, 98, false),
  row(19, 'IQ1_S', 256, 50, false),
  row(20, 'IQ4_NL', 32, 18, true),
  row(21, 'IQ3_S', 256, 110, false),
  row(22, 'IQ2_S', 256, 82, false),
  row(23, 'IQ4_XS', 256, 136, false),
  row(24, 'I8', 1, 1, false),
  row(25, 'I16', 1, 2, false),
  row(26, 'I32', 1, 4, false),
  row(27, 'I64', 1, 8, false),
  row(28, 'F64', 1, 8, false),
  row(29, 'IQ1_M', 256, 56, false),
  row(30, 'BF16', 1, 2, true),
  row(34, 'TQ1_0', 256, 54, false),
  row(35, 'TQ2_0', 256, 66, false),
  row(39, 'MXFP4', 32, 17, false),
  row(40, 'NVFP4', 64, 36, false),
  row(41, 'Q1_0', 128, 18, false),
]);

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
