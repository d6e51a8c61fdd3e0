// The DeltaNet block (delta_net.h) against a float64 reference of the whole block written here from
// the formulas (projections, causal conv + SiLU, L2 norms, β and g, the recurrence, the gated norm,
// the output projection), in both value-head orders; decoding from its state; threads; the
// backward against central differences of that reference.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "core/rng.h"
#include "core/stored_weight.h"
#include "model/delta_net.h"
#include "parallel_check.h"
#include "test_helpers.h"

namespace {

using attn::DeltaNetBlock;
using attn::DeltaNetShape;

struct Fixture {
  DeltaNetShape s;
  std::vector<attn::StoredWeight> store;
  std::vector<std::vector<float>> w;  // qkv, z, b, a, out as floats (rows, cols)
  DeltaNetBlock block;
  attn::WeightView matrix(int rows, int cols, std::uint64_t seed, float scale) {
    attn::StoredWeight sw;
    REQUIRE(attn::StoredWeight::allocate({rows, cols}, attn::WeightFormat::kF32, "test", sw).ok());
    std::vector<float> v(static_cast<std::size_t>(rows) * cols);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = scale * attn::approx_normal(seed, i);
    std::copy(v.begin(), v.end(), static_cast<float*>(sw.bytes()));
    w.push_back(v);
    store.push_back(std::move(sw));
    return store.back().view();
  }
  explicit Fixture(bool tiled) {
    s.hidden = 12;
    s.k_heads = 2;
    s.v_heads = 4;
    s.k_dim = 6;
    s.v_dim = 5;
    s.kernel = 4;
    s.tiled = tiled;
    s.a_log = !tiled;
    store.reserve(8);
    block = DeltaNetBlock(s);
    const int c = s.channels(), vd = s.v_heads * s.v_dim;
    block.qkv = matrix(c, s.hidden, 1, 0.4f);
    block.z = matrix(vd, s.hidden, 2, 0.4f);
    block.b_proj = matrix(s.v_heads, s.hidden, 3, 0.4f);
    block.a_proj = matrix(s.v_heads, s.hidden, 4, 0.4f);
    block.out = matrix(s.hidden, vd, 5, 0.4f);
    block.conv = testutil::random_tensor({c, s.kernel}, 6, 0.5f);
    block.decay = testutil::random_tensor({s.v_heads}, 7, 0.5f);
    block.dt_bias = testutil::random_tensor({s.v_heads}, 8, 0.5f);
    block.norm = testutil::random_tensor({s.v_dim}, 9, 1.0f);
  }
};

double silu(double x) {
  return x / (1 + std::exp(-x));
}

// y (T, E) of one sequence in float64.
template <class X>  // float or double inputs (the backward test moves them in double)
std::vector<double> reference_block(const Fixture& f, const std::vector<X>& x, int t) {
  const DeltaNetShape& s = f.s;
  const int e = s.hidden, c = s.channels(), vd = s.v_heads * s.v_dim, qd = s.k_heads * s.k_dim;
  const auto lin = [&](int which, int rows, int cols, const double* in, double* o) {
    for (int r = 0; r < rows; ++r) {
      double acc = 0;
      for (int j = 0; j < cols; ++j) acc += f.w[which][r * cols + j] * in[j];
      o[r] = acc;
    }
  };
  std::vector<double> mixed(static_cast<std::size_t>(t) * c), zz(t * vd), bb(t * s.v_heads),
      aa(t * s.v_heads);
  for (int r = 0; r < t; ++r) {
    std::vector<double> xr(x.begin() + r * e, x.begin() + (r + 1) * e);
    lin(0, c, e, xr.data(), &mixed[r * c]);
    lin(1, vd, e, xr.data(), &zz[r * vd]);
    lin(2, s.v_heads, e, xr.data(), &bb[r * s.v_heads]);
    lin(3, s.v_heads, e, xr.data(), &aa[r * s.v_heads]);
  }
  std::vector<double> conv(mixed.size());
  for (int r = 0; r < t; ++r)
    for (int ch = 0; ch < c; ++ch) {
      double acc = 0;
      for (int j = 0; j < s.kernel; ++j) {
        const int src = r - (s.kernel - 1) + j;
        if (src >= 0) acc += f.block.conv.data[ch * s.kernel + j] * mixed[src * c + ch];
      }
      conv[r * c + ch] = silu(acc);
    }
  std::vector<double> normed(static_cast<std::size_t>(t) * vd);
  for (int h = 0; h < s.v_heads; ++h) {
    const int kh = s.tiled ? h % s.k_heads : h / (s.v_heads / s.k_heads);
    const double a = s.a_log ? -std::exp(static_cast<double>(f.block.decay.data[h])) : f.block.decay.data[h];
    std::vector<double> st(static_cast<std::size_t>(s.k_dim) * s.v_dim, 0.0);
    for (int r = 0; r < t; ++r) {
      std::vector<double> q(&conv[r * c + kh * s.k_dim], &conv[r * c + (kh + 1) * s.k_dim]);
      std::vector<double> k(&conv[r * c + qd + kh * s.k_dim], &conv[r * c + qd + (kh + 1) * s.k_dim]);
      const double* v = &conv[r * c + 2 * qd + h * s.v_dim];
      double nq = 0, nk = 0;
      for (int i = 0; i < s.k_dim; ++i) nq += q[i] * q[i], nk += k[i] * k[i];
      for (int i = 0; i < s.k_dim; ++i) {
        q[i] /= std::sqrt(nq + s.eps) * std::sqrt(static_cast<double>(s.k_dim));
        k[i] /= std::sqrt(nk + s.eps);
      }
      const double beta = 1 / (1 + std::exp(-bb[r * s.v_heads + h]));
      const double x_dt = aa[r * s.v_heads + h] + f.block.dt_bias.data[h];
      const double g = a * std::log1p(std::exp(x_dt));
      for (double& y : st) y *= std::exp(g);
      for (int j = 0; j < s.v_dim; ++j) {
        double sk = 0;
        for (int i = 0; i < s.k_dim; ++i) sk += st[i * s.v_dim + j] * k[i];
        for (int i = 0; i < s.k_dim; ++i) st[i * s.v_dim + j] += k[i] * beta * (v[j] - sk);
      }
      std::vector<double> o(static_cast<std::size_t>(s.v_dim), 0.0);
      double ss = 0;
      for (int j = 0; j < s.v_dim; ++j) {
        for (int i = 0; i < s.k_dim; ++i) o[j] += st[i * s.v_dim + j] * q[i];
        ss += o[j] * o[j];
      }
      for (int j = 0; j < s.v_dim; ++j)
        normed[r * vd + h * s.v_dim + j] = o[j] / std::sqrt(ss / s.v_dim + s.eps) * f.block.norm.data[j] *
                                           silu(zz[r * vd + h * s.v_dim + j]);
    }
  }
  std::vector<double> y(static_cast<std::size_t>(t) * e);
  for (int r = 0; r < t; ++r) lin(4, e, vd, &normed[r * vd], &y[r * e]);
  return y;
}

std::vector<float> run(const Fixture& f, int b, int t, const std::vector<float>& x,
                       const float* state = nullptr, std::vector<float>* next = nullptr) {
  std::vector<float> y(static_cast<std::size_t>(b) * t * f.s.hidden);
  if (next) next->assign(static_cast<std::size_t>(b * f.s.state_floats()), 0.0f);
  REQUIRE(f.block.forward(b, t, x.data(), y.data(), state, next ? next->data() : nullptr, nullptr, nullptr, 0)
              .ok());
  return y;
}

}  // namespace

TEST_CASE("DeltaNet block: equals a float64 reference in both value-head orders", "[delta_net]") {
  for (const bool tiled : {false, true}) {
    const Fixture f(tiled);
    const int b = 2, t = 70;  // past one chunk
    const attn::Tensor x = testutil::random_tensor({b, t, f.s.hidden}, 30, 1.0f);
    const std::vector<float> got = run(f, b, t, x.data);
    for (int s = 0; s < b; ++s) {
      const std::vector<float> xs(x.data.begin() + s * t * f.s.hidden,
                                  x.data.begin() + (s + 1) * t * f.s.hidden);
      const std::vector<double> want = reference_block(f, xs, t);
      const std::vector<float> mine(got.begin() + s * t * f.s.hidden, got.begin() + (s + 1) * t * f.s.hidden);
      INFO("tiled " << tiled << ", sequence " << s);
      testutil::require_close(mine, want, 1e-5, "the block's output");
    }
  }
}

TEST_CASE("DeltaNet block: decoding from the state equals the whole forward", "[delta_net]") {
  const Fixture f(false);
  const int b = 2, t = 75, e = f.s.hidden, split = 67;
  const attn::Tensor x = testutil::random_tensor({b, t, e}, 40, 1.0f);
  const std::vector<float> whole = run(f, b, t, x.data);
  // rows [0, split) as a prefill, then one row at a time
  const auto rows = [&](int r0, int r1) {
    std::vector<float> out;
    for (int s = 0; s < b; ++s)
      out.insert(out.end(), x.data.begin() + (s * t + r0) * e, x.data.begin() + (s * t + r1) * e);
    return out;
  };
  std::vector<float> state, next;
  std::vector<float> got = run(f, b, split, rows(0, split), nullptr, &state);
  std::vector<std::vector<float>> steps;
  for (int r = split; r < t; ++r) {
    steps.push_back(run(f, b, 1, rows(r, r + 1), state.data(), &next));
    state.swap(next);
  }
  double worst = 0;
  for (int s = 0; s < b; ++s)
    for (int r = 0; r < t; ++r)
      for (int i = 0; i < e; ++i) {
        const float want = whole[(s * t + r) * e + i];
        const float have = r < split ? got[(s * split + r) * e + i] : steps[r - split][s * e + i];
        worst = std::max(worst, std::fabs(have - want) / (1.0 + std::fabs(want)));
      }
  INFO("worst error / (1 + |y|) " << worst);
  REQUIRE(worst <= 1e-5);
}

TEST_CASE("DeltaNet block: the same bits at every thread count", "[delta_net][parallel]") {
  const Fixture f(true);
  const attn::Tensor x = testutil::random_tensor({3, 90, f.s.hidden}, 50, 1.0f);
  testutil::require_same_at_every_count("the DeltaNet block", [&] {
    std::vector<float> next;
    std::vector<float> y = run(f, 3, 90, x.data, nullptr, &next);
    y.insert(y.end(), next.begin(), next.end());
    return y;
  });
}

// The backward (delta_net_backward.cpp) against central differences of the float64 reference: step
// kFdStep in double leaves O(h²) ≈ 1e-10, so the float32 backward (its inputs and some steps rounded
// to float) must agree within kBackwardTol of the largest gradient, on rows either side of a chunk.
TEST_CASE("DeltaNet block backward: every input gradient against float64 central differences",
          "[delta_net][gradients]") {
  constexpr double kFdStep = 1e-5, kBackwardTol = 1e-5;
  for (const bool tiled : {false, true}) {
    const Fixture f(tiled);
    const int t = 70, e = f.s.hidden;  // past one chunk of 64
    const std::vector<float> x = testutil::random_tensor({1, t, e}, 60, 1.0f).data;
    const std::vector<float> dy = testutil::random_tensor({1, t, e}, 61, 1.0f).data;
    std::vector<float> dx(x.size());
    REQUIRE(f.block.backward(1, t, x.data(), dy.data(), dx.data(), nullptr, nullptr).ok());
    std::vector<double> xd(x.begin(), x.end());
    const auto metric = [&] {
      const std::vector<double> y = reference_block(f, xd, t);
      double s = 0;
      for (std::size_t i = 0; i < y.size(); ++i) s += dy[i] * y[i];
      return s;
    };
    // every input of rows on both sides of the chunk boundary (each a reference forward, at -O0)
    std::vector<float> got, want;
    double largest = 0;
    for (const int row : {0, 40, 63, 64, 69})
      for (int j = 0; j < e; ++j) {
        const std::size_t i = static_cast<std::size_t>(row) * e + j;
        xd[i] = x[i] + kFdStep;
        const double up = metric();
        xd[i] = x[i] - kFdStep;
        const double down = metric();
        xd[i] = x[i];
        want.push_back(static_cast<float>((up - down) / (2 * kFdStep)));
        got.push_back(dx[i]);
        largest = std::max(largest, std::abs(static_cast<double>(want.back())));
      }
    INFO((tiled ? "tiled" : "grouped") << " value heads, largest gradient " << largest);
    testutil::require_close(got, want, kBackwardTol * largest, "dx against float64 finite differences");
  }
}
