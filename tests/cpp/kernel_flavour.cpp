// The kernel variant this test binary links, as k::active_variant() must report it. Compiled into
// each test binary with the flags of the kernels it links (tests/cpp/CMakeLists.txt): the SIMD128
// and relaxed-SIMD wasm binaries share every other test object, so the tests learn it here.
#include "kernel_variants.h"

namespace kernel_test {

const char* expected_variant() {
#if defined(__wasm_simd128__) && defined(ATTN_RELAXED_SIMD)
  return "relaxed-simd";  // *_simd128 built with relaxed madd
#elif defined(__wasm_simd128__)
  return "simd128";
#else
  return "scalar";
#endif
}

}  // namespace kernel_test
