// Test matrices of ggml's block formats, shared by the quantized-weight tests (test_quant_weights.cpp,
// test_kernels_int8.cpp): rows of realistic and of random blocks, and their double reference.
#pragma once

#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <vector>

#include "quant_quantizer.h"
#include "quant_reference.h"
#include "test_helpers.h"

namespace quant_test {

// rows × cols elements of t as blocks: even rows from the test's quantizer (realistic blocks), odd
// rows random bytes with sane float16 scales (every bit pattern of the quants).
inline std::vector<std::uint8_t> make_blocks(const Layout& t, int rows, int cols, std::uint64_t seed) {
  const std::size_t row_bytes = static_cast<std::size_t>(cols / t.elements) * t.bytes;
  std::vector<std::uint8_t> out;
  std::mt19937 rng(static_cast<std::uint32_t>(seed));
  for (int r = 0; r < rows; ++r) {
    std::vector<std::uint8_t> row;
    if (r % 2 == 0) {
      row = quant_test::quantize_row(t, testutil::random_tensor({cols}, seed + r, 0.5f).data);
    } else {
      row.resize(row_bytes);
      for (auto& b : row) b = static_cast<std::uint8_t>(rng() >> 24);
      for (std::size_t blk = 0; blk < row_bytes / t.bytes; ++blk)
        for (int h : t.halves)
          quant_test::put_half(&row[blk * t.bytes], h, 0.001 + 0.01 * (rng() % 100) / 100.0);
    }
    REQUIRE(row.size() == row_bytes);
    out.insert(out.end(), row.begin(), row.end());
  }
  return out;
}

// The (rows, cols) matrix in double, row by row from quant_reference.h (independent of the kernels).
inline std::vector<double> reference_matrix(const Layout& t, int rows, int cols,
                                            const std::vector<std::uint8_t>& blocks) {
  const std::size_t row_bytes = static_cast<std::size_t>(cols / t.elements) * t.bytes;
  std::vector<double> out;
  for (int r = 0; r < rows; ++r) {
    const std::vector<std::uint8_t> row(blocks.begin() + r * row_bytes, blocks.begin() + (r + 1) * row_bytes);
    const std::vector<double> v = quant_test::reference_row(t, row);
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

}  // namespace quant_test
