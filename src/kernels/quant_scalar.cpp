// Scalar dequantizers of ggml's block formats (quant.h): plain loops in ggml's element order, the
// readable specification a SIMD path is checked against. Each element is computed as ggml's
// dequantize_row_* computes it (the same float operations in the same order).
#include <cstring>

#include "kernels/kernels.h"
#include "kernels/quant.h"

namespace attn::kernels {
// Q3_K: the 16 signed 6-bit scales from the 12 packed bytes, as ggml unpacks them (low nibbles in
// bytes 0-7, top 2 bits in bytes 8-11), each minus 32.
void q3_k_scales(const std::uint8_t* packed, int* out) {
  for (int j = 0; j < 16; ++j) {
    const int low = j < 8 ? packed[j] & 0xF : packed[j - 8] >> 4;
    const int high = (packed[8 + j % 4] >> (2 * (j / 4))) & 3;
    out[j] = (low | (high << 4)) - 32;
  }
}

const std::int8_t kIQ4NLValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                      1,    13,   25,  38,  53,  69,  89,  113};

void dequantize_row_q4_0(const BlockQ4_0* x, float* y, std::int64_t k) {
  for (std::int64_t i = 0; i < k / kQK; ++i, y += kQK) {
    const float d = half_to_float(x[i].d);
    for (int j = 0; j < kQK / 2; ++j) {
      y[j] = ((x[i].qs[j] & 0x0F) - 8) * d;
      y[j + kQK / 2] = ((x[i].qs[j] >> 4) - 8) * d;
    }
  }
}

void dequantize_row_q4_1(const BlockQ4_1* x, float* y, std::int64_t k) {
  for (std::int64_t i = 0; i < k / kQK; ++i, y += kQK) {
    const float d = half_to_float(x[i].d), m = half_to_float(x[i].m);
    for (int j = 0; j < kQK / 2; ++j) {
      y[j] = (x[i].qs[j] & 0x0F) * d + m;
      y[j + kQK / 2] = (x[i].qs[j] >> 4) * d + m;
    }
  }
}

void dequantize_row_q5_0(const BlockQ5_0* x, float* y, std::int64_t k) {
  for (std::int64_t i = 0; i < k / kQK; ++i, y += kQK) {
    const float d = half_to_float(x[i].d);
    std::uint32_t qh;
    std::memcpy(&qh, x[i].qh, sizeof qh);  // little-endian, as the file stores it
    for (int j = 0; j < kQK / 2; ++j) {
      const int xh0 = ((qh >> j) << 4) & 0x10;
      const int xh1 = (qh >> (j + 12)) & 0x10;
      y[j] = (((x[i].qs[j] & 0x0F) | xh0) - 16) * d;
      y[j + kQK / 2] = (((x[i].qs[j] >> 4) | xh1) - 16) * d;
    }
  }
}

void dequantize_row_q5_1(const BlockQ5_1* x, float* y, std::int64_t k) {
  for (std::int64_t i = 0; i < k / kQK; ++i, y += kQK) {
    const float d = half_to_float(x[i].d), m = half_to_float(x[i].m);
    std::uint32_t qh;
    std::memcpy(&qh, x[i].qh, sizeof qh);
    for (int j = 0; j < kQK / 2; ++j) {
      const int xh0 = ((qh >> j) << 4) & 0x10;
      const int xh1 = (qh >> (j + 12)) & 0x10;
      y[j] = ((x[i].qs[j] & 0x0F) | xh0) * d + m;
      y[j + kQK / 2] = ((x[i].qs[j] >> 4) | xh1) * d + m;
    }
  }
}

void dequantize_row_q8_0(const BlockQ8_0* x, float* y, std::int64_t k) {
  for (std::int64_t i = 0; i < k / kQK; ++i, y += kQK) {
    const float d = half_to_float(x[i].d);
    for (int j = 0; j < kQK; ++j) y[j] = x[i].qs[j] * d;
  }
}

void dequantize_row_iq4_nl(const BlockIQ4NL* x, float* y, std::int64_t k) {
  for (std::int64_t i = 0; i < k / kQK; ++i, y += kQK) {
    const float d = half_to_float(x[i].d);
    for (int j = 0; j < kQK / 2; ++j) {
      y[j] = d * kIQ4NLValues[x[i].qs[j] & 0xF];
      y[j + kQK / 2] = d * kIQ4NLValues[x[i].qs[j] >> 4];
    }
  }
}

void dequantize_row_q2_K(const BlockQ2_K* x, float* y, std::int64_t k) {
  for (std::int64_t i = 0; i < k / kQK_K; ++i) {
    const float d = half_to_float(x[i].d), min = half_to_float(x[i].dmin);
    const std::uint8_t* q = x[i].qs;
    int is = 0;
    for (int n = 0; n < kQK_K; n += 128, q += 32) {
      for (int shift = 0; shift < 8; shift += 2) {
        for (int half = 0; half < 2; ++half) {  // 16 elements from q[0..15], then from q[16..31]
          const std::uint8_t sc = x[i].scales[is++];
          const float dl = d * (sc & 0xF), ml = min * (sc >> 4);
          for (int l = 0; l < 16; ++l) *y++ = dl * ((q[l + 16 * half] >> shift) & 3) - ml;
        }
      }
    }
  }
}

void dequantize_row_q3_K(const BlockQ3_K* x, float* y, std::int64_t k) {
  int scales[16];
  for (std::int64_t i = 0; i < k / kQK_K; ++i) {
    const float d_all = half_to_float(x[i].d);
    q3_k_scales(x[i].scales, scales);
    const std::uint8_t* q = x[i].qs;
    std::uint8_t m = 1;
    int is = 0;
    for (int n = 0; n < kQK_K; n += 128, q += 32) {
      for (int shift = 0; shift < 8; shift += 2, m <<= 1) {
        for (int half = 0; half < 2; ++half) {
          const float dl = d_all * scales[is++];
          for (int l = 16 * half; l < 16 * half + 16; ++l)
            *y++ = dl * (((q[l] >> shift) & 3) - ((x[i].hmask[l] & m) ? 0 : 4));
        }
      }
    }
  }
}

void dequantize_row_q4_K(const BlockQ4_K* x, float* y, std::int64_t k) {
  for (std::int64_t i = 0; i < k / kQK_K; ++i) {
    const float d = half_to_float(x[i].d), min = half_to_float(x[i].dmin);
    const std::uint8_t* q = x[i].qs;
    std::uint8_t sc, m;
    for (int is = 0; is < 8; is += 2, q += 32) {
      q4_k_scale_min(is, x[i].scales, &sc, &m);
      const float d1 = d * sc, m1 = min * m;
      q4_k_scale_min(is + 1, x[i].scales, &sc, &m);
      const float d2 = d * sc, m2 = min * m;
      for (int l = 0; l < 32; ++l) *y++ = d1 * (q[l] & 0xF) - m1;
      for (int l = 0; l < 32; ++l) *y++ = d2 * (q[l] >> 4) - m2;
    }
  }
}

void dequantize_row_q5_K(const BlockQ5_K* x, float* y, std::int64_t k) {
  for (std::int64_t i = 0; i < k / kQK_K; ++i) {
    const float d = half_to_float(x[i].d), min = half_to_float(x[i].dmin);
    const std::uint8_t* ql = x[i].qs;
    const std::uint8_t* qh = x[i].qh;
    std::uint8_t sc, m, u1 = 1, u2 = 2;
    for (int is = 0; is < 8; is += 2, ql += 32, u1 <<= 2, u2 <<= 2) {
      q4_k_scale_min(is, x[i].scales, &sc, &m);
      const float d1 = d * sc, m1 = min * m;
      q4_k_scale_min(is + 1, x[i].scales, &sc, &m);
      const float d2 = d * sc, m2 = min * m;
      for (int l = 0; l < 32; ++l) *y++ = d1 * ((ql[l] & 0xF) + (qh[l] & u1 ? 16 : 0)) - m1;
      for (int l = 0; l < 32; ++l) *y++ = d2 * ((ql[l] >> 4) + (qh[l] & u2 ? 16 : 0)) - m2;
    }
  }
}

void dequantize_row_q6_K(const BlockQ6_K* x, float* y, std::int64_t k) {
  for (std::int64_t i = 0; i < k / kQK_K; ++i) {
    const float d = half_to_float(x[i].d);
    const std::uint8_t* ql = x[i].ql;
    const std::uint8_t* qh = x[i].qh;
    const std::int8_t* sc = x[i].scales;
    for (int n = 0; n < kQK_K; n += 128, y += 128, ql += 64, qh += 32, sc += 8) {
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        y[l] = d * sc[is] * q1;
        y[l + 32] = d * sc[is + 2] * q2;
        y[l + 64] = d * sc[is + 4] * q3;
        y[l + 96] = d * sc[is + 6] * q4;
      }
    }
  }
}

bool dequantize_row(int type, const void* x, float* y, std::int64_t k) {
  const GgmlTypeInfo* info = ggml_type_info(type);
  if (info == nullptr || !info->dequantized || k < 0 || k % info->block_elements != 0) return false;
  info->dequantize(x, y, k);
  return true;
}

}  // namespace attn::kernels
