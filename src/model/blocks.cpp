// The block kinds (blocks.h): norms and MLPs, forward and input gradient.
#include "model/blocks.h"

#include <cmath>

#include "core/softmax_backward.h"
#include "kernels/kernels.h"
#include "kernels/parallel.h"

namespace attn {

namespace {

// Elementwise activations over n values in parallel (each value is its own: docs/threads.md).
constexpr std::int64_t kActivationWork = 24;  // ~multiply-adds per value (exp/tanh polynomials)

void gelu_tanh_parallel(std::int64_t n, float* h) {
  kernels::parallel_items(n, kActivationWork, [&](std::int64_t i0, std::int64_t i1) {
    kernels::gelu_tanh_row(static_cast<int>(i1 - i0), h + i0, h + i0);
  });
}

constexpr double kGeluK = 0.7978845608028654;  // √(2/π)

// gelu_tanh(a) = 0.5·a·(1 + tanh(k·(a + 0.044715·a³))) and its derivative, in double.
double gelu_tanh(double a, double& slope) {
  const double inner = kGeluK * (a + 0.044715 * a * a * a), th = std::tanh(inner);
  slope = 0.5 * (1 + th) + 0.5 * a * (1 - th * th) * kGeluK * (1 + 3 * 0.044715 * a * a);
  return 0.5 * a * (1 + th);
}

// silu(a) = a·σ(a) and its derivative σ(a)·(1 + a·(1 − σ(a))), in double.
double silu(double a, double& slope) {
  const double s = 1 / (1 + std::exp(-a));
  slope = s * (1 + a * (1 - s));
  return a * s;
}

}  // namespace

void NormBlock::forward(std::int64_t rows, const float* x, float* y) const {
  const int e = width_;
  kernels::parallel_items(rows, 4 * e, [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t r = r0; r < r1; ++r) {
      const float* xr = x + r * e;
      float* yr = y + r * e;
      if (kind_ == Kind::kLayer) {
        kernels::layer_norm_row(e, xr, weight.data.data(), bias.data.data(), static_cast<float>(eps_), yr);
        continue;
      }
      double ss = 0;
      for (int i = 0; i < e; ++i) ss += static_cast<double>(xr[i]) * xr[i];
      const double inv = 1.0 / std::sqrt(ss / e + eps_);
      for (int i = 0; i < e; ++i) yr[i] = static_cast<float>(xr[i] * inv) * weight.data[i];
    }
  });
}

// RMSNorm: y = x · r · w, r = (mean(x²) + eps)^−1/2, so dx_i = r·w_i·dy_i − x_i·r³/E·Σ_j w_j·dy_j·x_j.
void NormBlock::backward(std::int64_t rows, const float* x, const float* dy, float* dx) const {
  const int e = width_;
  if (kind_ == Kind::kLayer) {
    layer_norm_backward_rows(rows, e, x, weight.data.data(), static_cast<float>(eps_), dy, dx, false, nullptr,
                             nullptr);
    return;
  }
  for (std::int64_t r = 0; r < rows; ++r) {
    const float *xr = x + r * e, *dyr = dy + r * e;
    double ss = 0, dot = 0;
    for (int i = 0; i < e; ++i) {
      ss += static_cast<double>(xr[i]) * xr[i];
      dot += static_cast<double>(weight.data[i]) * dyr[i] * xr[i];
    }
    const double inv = 1.0 / std::sqrt(ss / e + eps_), c = inv * inv * inv / e * dot;
    for (int i = 0; i < e; ++i) dx[r * e + i] = static_cast<float>(inv * weight.data[i] * dyr[i] - xr[i] * c);
  }
}

void MlpBlock::forward(std::int64_t rows, const float* x, float* y, std::vector<float>& h,
                       std::vector<float>& u, std::vector<float>* keep_a, std::vector<float>* keep_u,
                       const HookRun* hooks, int layer) const {
  const int e = width_, in = hidden_, m = static_cast<int>(rows);
  h.resize(static_cast<std::size_t>(rows) * in);  // h: (rows, I)
  if (kind_ == Kind::kGelu) {
    up.linear(m, x, e, up_b.data.data(), h.data(), in);
    if (hooks) hooks->stream(HookKind::kMlpPre, layer, h.data(), in);
    if (keep_a) *keep_a = h;
    if (!y) return;  // only the pre-activations were asked for
    gelu_tanh_parallel(static_cast<std::int64_t>(h.size()), h.data());  // "gelu_new"
    if (hooks) hooks->stream(HookKind::kMlpPost, layer, h.data(), in);
    down.linear(m, h.data(), in, down_b.data.data(), y, e);
    return;
  }
  u.resize(h.size());  // u: (rows, I)
  const WeightView::Output gate_up[] = {{&gate, nullptr, h.data(), in}, {&up, nullptr, u.data(), in}};
  WeightView::linear_many(m, x, e, gate_up, 2);  // one job of the pool while decoding
  if (hooks) {
    hooks->stream(HookKind::kMlpPre, layer, h.data(), in);
    hooks->stream(HookKind::kMlpPreLinear, layer, u.data(), in);
  }
  if (keep_a) *keep_a = h;
  if (keep_u) *keep_u = u;
  if (!y) return;
  if (kind_ == Kind::kGeGlu) {  // Gemma's GeGLU: gelu_pytorch_tanh(gate) · up
    gelu_tanh_parallel(static_cast<std::int64_t>(h.size()), h.data());
    for (std::size_t i = 0; i < h.size(); ++i) h[i] *= u[i];
  } else {
    kernels::parallel_items(
        static_cast<std::int64_t>(h.size()), kActivationWork, [&](std::int64_t i0, std::int64_t i1) {
          kernels::silu_mul_row(static_cast<int>(i1 - i0), h.data() + i0, u.data() + i0, h.data() + i0);
        });
  }
  if (hooks) hooks->stream(HookKind::kMlpPost, layer, h.data(), in);
  down.linear(m, h.data(), in, nullptr, y, e);
}

void MlpBlock::backward(std::int64_t rows, const std::vector<float>& a, const std::vector<float>& u,
                        const float* dy, float* dx) const {
  const int e = width_, in = hidden_, m = static_cast<int>(rows);
  const std::size_t n = static_cast<std::size_t>(rows) * in;
  std::vector<float> dh(n);                                    // (rows, I)
  down.linear_backward_input(m, dy, e, dh.data(), in, false);  // dh = dy · W_down
  double slope = 0;
  if (kind_ == Kind::kGelu) {
    for (std::size_t i = 0; i < n; ++i) {
      gelu_tanh(a[i], slope);
      dh[i] = static_cast<float>(dh[i] * slope);
    }
    up.linear_backward_input(m, dh.data(), in, dx, e, false);
    return;
  }
  std::vector<float> du(n);  // (rows, I): the gradient of up(x); dh becomes the gradient of gate(x)
  for (std::size_t i = 0; i < n; ++i) {
    const double act = kind_ == Kind::kGeGlu ? gelu_tanh(a[i], slope) : silu(a[i], slope);
    du[i] = static_cast<float>(dh[i] * act);
    dh[i] = static_cast<float>(dh[i] * static_cast<double>(u[i]) * slope);
  }
  gate.linear_backward_input(m, dh.data(), in, dx, e, false);
  up.linear_backward_input(m, du.data(), in, dx, e, true);
}

}  // namespace attn
