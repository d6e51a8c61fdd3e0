// Positional encodings.
#pragma once
#include <cstdint>

#include "core/tensor.h"

namespace attn {

// Sinusoidal encoding (Vaswani et al.): PE (length, d_model)
//   PE[pos, 2i]   = sin(pos / base^(2i / d_model))
//   PE[pos, 2i+1] = cos(pos / base^(2i / d_model))
// For odd d_model the last column is the sine of pair i = (d_model-1)/2 (its cosine partner is
// dropped), so every column keeps its usual frequency. base defaults to 10000.
Status sinusoidal_encoding(int length, int d_model, double base, Tensor& out);

// A learned table (max_length, d_model), initialised ~N(0, 1) from a seed like nn.Embedding.
class LearnedPositionalEncoding {
 public:
  static Status create(int max_length, int d_model, std::uint64_t seed, LearnedPositionalEncoding& out);
  const Tensor& table() const { return table_; }
  Status set_table(const Tensor& table);  // (max_length, d_model), finite
  // The first `length` rows: (length, d_model).
  Status encode(int length, Tensor& out) const;

 private:
  Tensor table_;
};

}  // namespace attn
