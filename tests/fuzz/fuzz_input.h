// The fuzzers' view of their input bytes: bounded integers, booleans and floats drawn from them, with
// the values nobody means to send (NaN, ±∞, huge, denormal, −0) reachable from a single byte. When
// the bytes run out every read returns its smallest value, so any prefix is a valid input and
// libFuzzer's mutations stay meaningful.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"

namespace fuzz {

class Input {
 public:
  Input(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  std::uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  bool flag() { return byte() & 1; }
  // An integer in [lo, hi].
  int in(int lo, int hi) { return lo + static_cast<int>(byte() % static_cast<unsigned>(hi - lo + 1)); }
  std::uint64_t u64() {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = v << 8 | byte();
    return v;
  }

  // Mostly ordinary values in [-4, 4); one byte in eight picks a special one.
  float value() {
    const std::uint8_t b = byte();
    if ((b & 7) != 0)
      return (static_cast<float>(b >> 3) - 16.0f) / 4.0f + static_cast<float>(byte()) / 1024.0f;
    static const float kSpecial[] = {std::numeric_limits<float>::quiet_NaN(),
                                     std::numeric_limits<float>::infinity(),
                                     -std::numeric_limits<float>::infinity(),
                                     3e38f,
                                     -3e38f,
                                     1e-40f /* denormal */,
                                     -0.0f,
                                     0.0f,
                                     1e30f,
                                     -1e30f,
                                     65504.0f,
                                     1e-30f,
                                     std::numeric_limits<float>::max(),
                                     std::numeric_limits<float>::min(),
                                     1e4f,
                                     -1e4f,
                                     0.5f,
                                     2.0f,
                                     -1.0f,
                                     1.0f,
                                     88.0f,
                                     -88.0f,
                                     1e20f,
                                     7.0f,
                                     1e-7f,
                                     100.0f,
                                     1e10f,
                                     -1e10f,
                                     -3.0f,
                                     3.0f,
                                     0.25f,
                                     42.0f};
    return kSpecial[(b >> 3) % (sizeof(kSpecial) / sizeof(float))];
  }

  std::vector<float> values(std::int64_t n) {
    std::vector<float> v(static_cast<std::size_t>(n));
    for (auto& x : v) x = value();
    return v;
  }

  attn::Tensor tensor(const attn::Shape& shape) {
    return attn::Tensor(shape, values(attn::shape_numel(shape)));
  }

  attn::BoolTensor mask(const attn::Shape& shape) {
    attn::BoolTensor m{shape, std::vector<std::uint8_t>(static_cast<std::size_t>(attn::shape_numel(shape)))};
    for (auto& x : m.data) x = byte() % 4 != 0;  // mostly allowed
    return m;
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

inline bool all_finite(const std::vector<float>& v) {
  for (float x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

// What the target was doing, printed when an invariant breaks (shapes, options, values' range).
inline std::string& context() {
  static std::string text;
  return text;
}
inline void note(const std::string& what) {
  context() += what + "\n";
}
inline std::string range(const std::vector<float>& v) {
  float lo = INFINITY, hi = -INFINITY;
  int bad = 0;
  for (float x : v) {
    if (!std::isfinite(x))
      ++bad;
    else {
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
  }
  return "[" + attn::format_number(lo) + ", " + attn::format_number(hi) + "] non-finite " +
         std::to_string(bad) + " of " + std::to_string(v.size());
}

// A broken promise: print it and abort, so libFuzzer saves the input as a crash.
[[noreturn]] inline void fail(const char* what, const attn::Status& s = attn::Status::Ok()) {
  std::fprintf(stderr, "%sfuzz invariant broken: %s (status %s: %s)\n", context().c_str(), what,
               attn::status_code_name(s.code), s.message.c_str());
  std::abort();
}

// Every error must be one of the documented codes, with a message naming the problem.
inline void check_error(const attn::Status& s) {
  if (s.ok()) return;
  const int code = static_cast<int>(s.code);
  if (code < 1 || code > static_cast<int>(attn::StatusCode::kUnknownParameter))
    fail("undocumented status code", s);
  if (s.message.empty()) fail("an error without a message", s);
}

}  // namespace fuzz
