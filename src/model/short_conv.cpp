// The short-convolution token mixer (short_conv.h): the projections on the GEMM, the convolution
// and the gate row by row on the thread pool; its backward the same way.
#include "model/short_conv.h"

#include <algorithm>
#include <string>

#include "kernels/parallel.h"
#include "model/blocks.h"

namespace attn {

Status ShortConvBlock::check_config(const std::vector<int>& kinds, int kernel) {
  const int conv = static_cast<int>(MixerKind::kShortConv);
  if (std::find(kinds.begin(), kinds.end(), conv) == kinds.end() || (kernel >= 2 && kernel <= 64))
    return Status::Ok();
  return Status::Error(
      StatusCode::kInvalidArgument,
      "config: a short-convolution layer needs conv_L_cache in [2, 64], got " + std::to_string(kernel));
}

void ShortConvBlock::forward(int b, int t, const float* in, float* y, const float* state,
                             std::vector<float>* next_state, ShortConvWork& work, Tensor* map,
                             const HookRun* hooks, int layer) const {
  const int e = channels_, k = kernel_, keep = kernel_ - 1;
  const std::int64_t n = static_cast<std::int64_t>(b) * t;
  work.bcx.resize(static_cast<std::size_t>(n) * 3 * e);
  work.bx.resize(static_cast<std::size_t>(n) * e);
  work.conv.resize(work.bx.size());
  in_proj.linear(static_cast<int>(n), in, e, nullptr, work.bcx.data(), 3 * e);
  if (hooks) hooks->stream(HookKind::kConvBcx, layer, work.bcx.data(), 3 * e);
  const float* bcx = work.bcx.data();
  float* bx = work.bx.data();
  kernels::parallel_items(n, e, [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t r = r0; r < r1; ++r)
      for (int c = 0; c < e; ++c) bx[r * e + c] = bcx[r * 3 * e + c] * bcx[r * 3 * e + 2 * e + c];
  });
  if (hooks) hooks->stream(HookKind::kConvIn, layer, bx, e);
  // Row j of sequence s's extended input [state; B ⊙ X]: j < K − 1 is the state (or zero).
  const auto ext = [&](int s, int j, int c) -> float {
    if (j >= keep) return bx[(static_cast<std::int64_t>(s) * t + j - keep) * e + c];
    return state ? state[(static_cast<std::size_t>(s) * keep + j) * e + c] : 0.0f;
  };
  float* conv = work.conv.data();
  kernels::parallel_items(n, static_cast<std::int64_t>(k) * e, [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t r = r0; r < r1; ++r) {
      const int s = static_cast<int>(r / t), row = static_cast<int>(r % t);
      for (int c = 0; c < e; ++c) {
        double acc = 0;
        for (int j = 0; j < k; ++j)
          acc += static_cast<double>(weight[static_cast<std::size_t>(c) * k + j]) * ext(s, row + j, c);
        conv[r * e + c] = static_cast<float>(acc);
      }
    }
  });
  if (hooks) hooks->stream(HookKind::kConvOut, layer, conv, e);
  if (next_state) {
    next_state->resize(state_size(b));
    for (int s = 0; s < b; ++s)
      for (int j = 0; j < keep; ++j)
        for (int c = 0; c < e; ++c)
          (*next_state)[(static_cast<std::size_t>(s) * keep + j) * e + c] = ext(s, t + j, c);
  }
  if (map) mixing_map(b, t, work, *map);
  kernels::parallel_items(n, e, [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t r = r0; r < r1; ++r)
      for (int c = 0; c < e; ++c) conv[r * e + c] *= bcx[r * 3 * e + e + c];
  });
  if (hooks) hooks->stream(HookKind::kConvGated, layer, conv, e);
  out_proj.linear(static_cast<int>(n), conv, e, nullptr, y, e);
}

// y = W_out·g, g = C ⊙ conv, conv[r] = Σ_j w[j]·bx[r − (K − 1) + j], bx = B ⊙ X, [B | C | X] = W_in·in:
// dg = dy·W_out; dC = dg ⊙ conv; dconv = dg ⊙ C; dbx[u] = Σ_j w[j]·dconv[u + (K − 1) − j] (rows of the
// same sequence); dB = dbx ⊙ X; dX = dbx ⊙ B; dx = [dB | dC | dX]·W_in. conv is recomputed from bx
// as the forward computed it (same order, same bits).
void ShortConvBlock::backward(int b, int t, const ShortConvWork& work, const float* dy, float* dx) const {
  const int e = channels_, k = kernel_, keep = kernel_ - 1;
  const std::int64_t n = static_cast<std::int64_t>(b) * t;
  std::vector<float> dg(static_cast<std::size_t>(n) * e), dconv(dg.size()), dbcx(dg.size() * 3);
  out_proj.linear_backward_input(static_cast<int>(n), dy, e, dg.data(), e, false);
  const float* bcx = work.bcx.data();
  const float* bx = work.bx.data();
  const auto w = [&](int c, int j) {
    return static_cast<double>(weight[static_cast<std::size_t>(c) * k + j]);
  };
  kernels::parallel_items(n, static_cast<std::int64_t>(k) * e, [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t r = r0; r < r1; ++r) {
      const std::int64_t first = r - r % t;  // row 0 of this sequence
      const int row = static_cast<int>(r % t);
      for (int c = 0; c < e; ++c) {
        double acc = 0;
        for (int j = 0; j < k; ++j)
          if (row - keep + j >= 0) acc += w(c, j) * bx[(first + row - keep + j) * e + c];
        const float conv = static_cast<float>(acc), g = dg[r * e + c];
        dbcx[r * 3 * e + e + c] = g * conv;
        dconv[r * e + c] = g * bcx[r * 3 * e + e + c];
      }
    }
  });
  kernels::parallel_items(n, static_cast<std::int64_t>(k) * e, [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t r = r0; r < r1; ++r) {
      const std::int64_t first = r - r % t;
      const int row = static_cast<int>(r % t);
      for (int c = 0; c < e; ++c) {
        double acc = 0;
        for (int j = 0; j < k; ++j)
          if (row + keep - j < t) acc += w(c, j) * dconv[(first + row + keep - j) * e + c];
        const float d = static_cast<float>(acc);
        dbcx[r * 3 * e + c] = d * bcx[r * 3 * e + 2 * e + c];
        dbcx[r * 3 * e + 2 * e + c] = d * bcx[r * 3 * e + c];
      }
    }
  });
  in_proj.linear_backward_input(static_cast<int>(n), dbcx.data(), 3 * e, dx, e, false);
}

// A[s][t][u] = mean_c C[t, c] · w[c][K − 1 − (t − u)] · B[u, c] for t − K < u ≤ t, in double.
void ShortConvBlock::mixing_map(int b, int t, const ShortConvWork& work, Tensor& map) const {
  const int e = channels_, k = kernel_;
  map.shape.assign({b, 1, t, t});
  map.data.assign(static_cast<std::size_t>(b) * t * t, 0.0f);
  const float* bcx = work.bcx.data();
  const std::int64_t rows = static_cast<std::int64_t>(b) * t;
  kernels::parallel_items(rows, static_cast<std::int64_t>(k) * e, [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t r = r0; r < r1; ++r) {
      const int s = static_cast<int>(r / t), row = static_cast<int>(r % t);
      const float* cr = bcx + r * 3 * e + e;
      for (int u = std::max(0, row - k + 1); u <= row; ++u) {
        const float* bu = bcx + (static_cast<std::int64_t>(s) * t + u) * 3 * e;
        const int j = k - 1 - (row - u);
        double acc = 0;
        for (int c = 0; c < e; ++c)
          acc += static_cast<double>(cr[c]) * weight[static_cast<std::size_t>(c) * k + j] * bu[c];
        map.data[static_cast<std::size_t>(r) * t + u] = static_cast<float>(acc / e);
      }
    }
  });
}

}  // namespace attn
