// TensorRole::kQGate (pretrained.h): Qwen3.5's q_proj as its files store it, per head [q_h; gate_h]
// (transformers views the projection as (…, H, 2·d) and splits each head's 2·d features in two;
// llama.cpp's qwen35 reads the same rows), reordered once at load into [W_q; W_gate] so that the
// attention reads two row blocks (MhaConfig::output_gate).
#include <cstdint>
#include <cstring>
#include <vector>

#include "model/pretrained.h"

namespace attn {

void split_q_gate_rows(StoredWeight& w, int heads) {
  const std::int64_t rows = w.shape()[0];
  const std::size_t row_bytes = w.byte_size() / static_cast<std::size_t>(rows);
  const std::int64_t d = rows / (2 * heads);
  auto* bytes = static_cast<unsigned char*>(w.bytes());
  const std::vector<unsigned char> file(bytes, bytes + w.byte_size());
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t h = r / (2 * d), j = r % (2 * d);
    const std::int64_t to = j < d ? h * d + j : heads * d + h * d + (j - d);
    std::memcpy(bytes + to * row_bytes, file.data() + r * row_bytes, row_bytes);
  }
}

}  // namespace attn
