// The numbers MhaHandle's lean forward path (forwardFast) shares with the JS wrapper
// (src/js/index.js _forwardLean). scripts/gen-constants.mjs turns these enums into
// src/js/constants.js (FAST_FLAG, FAST_IO); tests/js/constants.test.mjs checks the binding agrees.
#pragma once

namespace attn_js {

// forwardFast(flags, scale): which inputs and options the call has, as bits.
enum class FastFlag : int {
  kKey = 1,              // input slot 1 holds a key (else self-attention)
  kValue = 2,            // input slot 2 holds a value (else the key serves as value)
  kCausal = 4,           // top-left causal mask
  kNeedWeights = 8,      // return the attention weights
  kAverageWeights = 16,  // average them over the heads
  kScale = 32,           // the scale argument is given (else 1/sqrt(head dim))
};

// The handle's int32 io block (ioPtr), by slot.
// In [0, 12): for input t (0 query, 1 key, 2 value) at kInputStride · t: rank, d0, d1, d2.
// Out [12, 22): code, output ptr, output length, weights ptr, weights length, weights rank, 4 dims.
enum class FastIo : int {
  kInputStride = 4,  // slots per input: rank + up to 3 dims
  kOut = 12,         // first output slot: the status code
  kOutOutputPtr = 13,
  kOutOutputLength = 14,
  kOutWeightsPtr = 15,
  kOutWeightsLength = 16,
  kOutWeightsRank = 17,
  kOutWeightsDims = 18,  // up to 4 dims: slots [18, 22)
  kOutEnd = 22,          // one past the last output slot
  kSize = 24,            // int32 slots in the block
};

constexpr int fast_io(FastIo slot) {
  return static_cast<int>(slot);
}
constexpr bool fast_flag(int flags, FastFlag f) {
  return (flags & static_cast<int>(f)) != 0;
}
static_assert(fast_io(FastIo::kOut) == 3 * fast_io(FastIo::kInputStride), "inputs end where outputs start");
static_assert(fast_io(FastIo::kOutEnd) <= fast_io(FastIo::kSize), "outputs fit the io block");

}  // namespace attn_js
