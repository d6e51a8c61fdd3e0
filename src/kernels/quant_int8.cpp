// The int8 activation mode (quant_int8.h): the activations' quantization as ggml's reference
// quantizers do it (one code for every build: the twins differ only after it), the scalar
// unpacking of every weight type in ggml's element order, and the scalar product.
#include "kernels/quant_int8.h"

#include <cmath>
#include <cstring>

#include "kernels/kernels.h"
#include "kernels/quant.h"

namespace attn::kernels {

namespace {

// The float16 nearest to v (ties to even; overflow to inf), as ggml's GGML_FP32_TO_FP16 rounds.
std::uint16_t f16_bits(float v) {
  std::uint32_t x;
  std::memcpy(&x, &v, sizeof x);
  const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000);
  const std::uint32_t a = x & 0x7fffffff;
  if (a > 0x7f800000) return sign | 0x7e00;           // NaN
  if (a >= 0x477ff000) return sign | 0x7c00;          // ≥ 65520: inf
  if (a < 0x38800000) {                               // below 2^-14: a float16 subnormal (or zero)
    const float scaled = std::fabs(v) * 16777216.0f;  // units of 2^-24, exact
    return sign | static_cast<std::uint16_t>(std::nearbyint(scaled));
  }
  const std::uint32_t mant = a & 0x1fff, base = (a - 0x38000000) >> 13;  // rebias 127 → 15
  const std::uint32_t up = mant > 0x1000 || (mant == 0x1000 && (base & 1));
  return sign | static_cast<std::uint16_t>(base + up);
}

// A block holding inf or NaN has no 8-bit form: its quants are 0 and its scale NaN, so its terms
// (and the product) are NaN, as the exact mode's would be.
bool poison_if_not_finite(const float* x, int n, std::int16_t* q, float* d_out) {
  for (int j = 0; j < n; ++j)
    if (!std::isfinite(x[j])) {
      std::memset(q, 0, static_cast<std::size_t>(n) * sizeof(std::int16_t));
      *d_out = NAN;
      return true;
    }
  return false;
}

// One Q8_0 / Q8_1 block of 32 (quantize_row_q8_0_ref, q8_1_ref): d = max|x| / 127 stored as float16,
// q = round(x / d) (half away from zero); Q8_1 also s = float16(d · Σq).
void quantize_q8_0_block(const float* x, bool with_sum, std::int16_t* q, float* d_out, float* s_out) {
  if (poison_if_not_finite(x, kQK, q, d_out)) {
    if (with_sum) *s_out = NAN;
    return;
  }
  float amax = 0.0f;
  for (int j = 0; j < kQK; ++j) amax = std::fmax(amax, std::fabs(x[j]));
  const float d = amax / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  int sum = 0;
  for (int j = 0; j < kQK; ++j) {
    q[j] = static_cast<std::int16_t>(std::round(x[j] * id));
    sum += q[j];
  }
  *d_out = half_to_float(f16_bits(d));
  if (with_sum) *s_out = half_to_float(f16_bits(static_cast<float>(sum) * d));
}

// One Q8_K block of 256 (quantize_row_q8_K_ref): the element of largest |x| becomes −127, the
// scale is 1 / (−127 / that element), q = nearest (ties to even), Σq over each 16.
void quantize_q8_k_block(const float* x, std::int16_t* q, float* d_out, std::int32_t* sums) {
  if (poison_if_not_finite(x, kQK_K, q, d_out)) {
    std::memset(sums, 0, 16 * sizeof(std::int32_t));
    return;
  }
  float max = 0.0f, amax = 0.0f;
  for (int j = 0; j < kQK_K; ++j)
    if (std::fabs(x[j]) > amax) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  const float iscale = amax != 0.0f ? -127.0f / max : 0.0f;
  for (int j = 0; j < kQK_K; ++j) {
    const int v = amax != 0.0f ? static_cast<int>(std::nearbyint(iscale * x[j])) : 0;
    q[j] = static_cast<std::int16_t>(v < 127 ? v : 127);
  }
  for (int g = 0; g < kQK_K / 16; ++g) {
    std::int32_t s = 0;
    for (int j = 0; j < 16; ++j) s += q[g * 16 + j];
    sums[g] = s;
  }
  *d_out = amax != 0.0f ? 1.0f / iscale : 0.0f;
}

}  // namespace

ActivationBlocks activation_blocks_for(int type) {
  const GgmlTypeInfo* info = ggml_type_info(type);
  return info != nullptr ? info->activations : ActivationBlocks::kNone;
}

int activation_block_elements(ActivationBlocks kind) {
  return kind == ActivationBlocks::kQ8_K ? kQK_K : kind == ActivationBlocks::kNone ? 0 : kQK;
}

bool quantize_activations(int type, int M, int K, const float* A, int lda, QuantizedActivations& out) {
  const ActivationBlocks kind = activation_blocks_for(type);
  const int block = activation_block_elements(kind);
  if (block == 0 || M < 0 || K <= 0 || K % block != 0) return false;
  const std::size_t blocks = static_cast<std::size_t>(M) * (K / block);
  out.kind = kind;
  out.rows = M;
  out.cols = K;
  out.block = block;
  out.q.resize(static_cast<std::size_t>(M) * K);  // resize keeps the capacity: no allocation once grown
  out.q8.resize(static_cast<std::size_t>(M) * K);
  out.d.resize(blocks);
  out.s.resize(kind == ActivationBlocks::kQ8_1 ? blocks : 0);
  out.group_sum.resize(kind == ActivationBlocks::kQ8_K ? blocks * 16 : 0);
  out.pair_sum.resize(kind == ActivationBlocks::kQ8_K ? blocks * 8 : 0);
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::size_t i = b / (K / block), kb = b % (K / block);
    const float* x = A + static_cast<std::ptrdiff_t>(i) * lda + kb * block;
    std::int16_t* q = out.q.data() + i * K + kb * block;
    if (kind == ActivationBlocks::kQ8_K)
      quantize_q8_k_block(x, q, &out.d[b], out.group_sum.data() + b * 16);
    else
      quantize_q8_0_block(x, kind == ActivationBlocks::kQ8_1, q, &out.d[b],
                          kind == ActivationBlocks::kQ8_1 ? &out.s[b] : nullptr);
  }
  for (std::size_t e = 0; e < out.q.size(); ++e) out.q8[e] = static_cast<std::int8_t>(out.q[e]);
  for (std::size_t g = 0; g < out.pair_sum.size(); ++g)
    out.pair_sum[g] = out.group_sum[2 * g] + out.group_sum[2 * g + 1];
  return true;
}

void UnpackedRow::reserve(int K) {
  const std::size_t blocks = static_cast<std::size_t>(K) / kQK + 1;
  q.resize(static_cast<std::size_t>(K));
  d.resize(blocks);
  m.resize(blocks);
  mins.resize(blocks * 16);
}

}  // namespace attn::kernels
