// Feature detection for the relaxed-SIMD build (see init() in index.js).

// A module whose one function is f32x4.relaxed_madd of three zero vectors: it validates exactly
// where the engine has relaxed SIMD on (Chrome ≥ 114, Firefox ≥ 145, Node ≥ 22; Node 20 only with
// --experimental-wasm-relaxed-simd).
const V128_ZERO = [0xfd, 0x0c, ...new Array(16).fill(0)];
const RELAXED_SIMD_PROBE = new Uint8Array([
  0x00,
  0x61,
  0x73,
  0x6d,
  0x01,
  0x00,
  0x00,
  0x00, // magic, version
  0x01,
  0x05,
  0x01,
  0x60,
  0x00,
  0x01,
  0x7b, //       type section: () -> v128
  0x03,
  0x02,
  0x01,
  0x00, //                         function section: one function of type 0
  0x0a,
  0x3d,
  0x01,
  0x3b,
  0x00, //                   code section: one body of 59 bytes, no locals
  ...V128_ZERO,
  ...V128_ZERO,
  ...V128_ZERO,
  0xfd,
  0x85,
  0x02, //                               f32x4.relaxed_madd
  0x0b, //                                           end
]);

/** Whether this engine runs WebAssembly relaxed SIMD (then `init()` loads the relaxed-SIMD build). */
export function relaxedSimdSupported() {
  try {
    return WebAssembly.validate(RELAXED_SIMD_PROBE);
  } catch {
    return false;
  }
}
