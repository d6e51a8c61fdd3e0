// The softmax-family kernels of src/kernels/kernels.h (softmax_row, the fused
// scale_mask_softmax_row, layer_norm_row, online_softmax_row) against the double reference
// (reference.h), for every variant this build has, and the kernels composed into attention.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernel_variants.h"
#include "reference.h"

using namespace kernel_test;

namespace {

// ---- named tolerances -----------------------------------------------------------------------
constexpr double kSoftmaxTol = 2e-6;    // absolute, on weights in [0, 1]
constexpr double kExpUlpTol = 2.0;      // ulps, exp seen through softmax([0, x])[1]
constexpr double kLayerNormTol = 1e-5;  // absolute, outputs of order 1
constexpr double kOnlineTol = 1e-5;     // absolute, out / l against softmax · V (|v| ≤ 1)
constexpr double kAttnTol = 1e-5;       // absolute, attention weights and outputs

}  // namespace

TEST_CASE("kernels: softmax_row matches the reference, with some keys masked", "[kernel][softmax]") {
  for (const auto& v : variants())
    for (int n : row_sizes())
      for (int masked = 0; masked < 2; ++masked) {
        INFO(v.name << " n=" << n << " masked=" << masked);
        auto x = random_vec(n, 6u + n, -8.f, 8.f);
        if (masked)
          for (int j = 0; j < n; j += 3) x[j] = kNegInf;  // j = 0 masked; n = 1 is fully masked
        std::vector<double> want(n);
        ref::softmax_row(n, x.data(), want.data());
        std::vector<float> out(n);
        v.softmax_row(n, x.data(), out.data());
        CHECK(max_abs_diff(out, want) <= kSoftmaxTol);
        v.softmax_row(n, x.data(), x.data());  // in place
        CHECK(bits_equal(x, out));
      }
}

TEST_CASE("kernels: softmax_row of a fully masked row is zeros, never NaN", "[kernel][softmax]") {
  for (const auto& v : variants())
    for (int n : row_sizes()) {
      INFO(v.name << " n=" << n);
      const std::vector<float> x(n, kNegInf);
      std::vector<float> out(n, 123.f);
      v.softmax_row(n, x.data(), out.data());
      CHECK(out == std::vector<float>(n, 0.f));
    }
}

TEST_CASE("kernels: softmax_row of huge logits does not overflow", "[kernel][softmax]") {
  const std::vector<std::vector<float>> rows = {
      {1, 1, 1, 5},  // the tutorial's worked example
      {1e4f, 1e4f - 1.f, -1e4f},
      {3e38f, -3e38f, 3e38f, 0.f, 1.f},
      {88.f, 89.f, 90.f, 1000.f, 120.f, -120.f, 50.f},
      {-1e30f, -1e30f + 1e24f, kNegInf, -1e30f, -1e30f, -1e30f, -1e30f, -1e30f, -1e30f}};
  for (const auto& v : variants())
    for (const auto& x : rows) {
      INFO(v.name << " n=" << x.size() << " x[0]=" << x[0]);
      const int n = static_cast<int>(x.size());
      std::vector<double> want(n);
      ref::softmax_row(n, x.data(), want.data());
      std::vector<float> out(n);
      v.softmax_row(n, x.data(), out.data());
      CHECK(max_abs_diff(out, want) <= kSoftmaxTol);
    }
  std::vector<float> out(4);
  variants().back().softmax_row(4, rows[0].data(), out.data());
  CHECK(out[0] == Approx(0.0174).margin(1e-4));
  CHECK(out[3] == Approx(0.9479).margin(1e-4));
}

TEST_CASE("kernels: softmax_row's exp is accurate to a few ulp down to underflow", "[kernel][softmax]") {
  // softmax([0, x])[1] = e^x / (1 + e^x); for x < -17, 1 + e^x rounds to 1, so it is e^x itself.
  for (const auto& v : variants()) {
    double worst_ulp = 0.0, worst_rel = 0.0;
    for (float x = -87.0f; x < 0.f; x += 0.0137f) {
      const float row[2] = {0.f, x};
      float out[2];
      v.softmax_row(2, row, out);
      const double e = std::exp(static_cast<double>(x));
      if (x < -17.f) {
        int exp2;
        std::frexp(static_cast<float>(e), &exp2);
        worst_ulp = std::max(worst_ulp, std::fabs(out[1] - e) / std::ldexp(1.0, exp2 - 24));
      } else {
        worst_rel = std::max(worst_rel, std::fabs(out[1] - e / (1 + e)) / (e / (1 + e)));
      }
    }
    INFO(v.name << ": " << worst_ulp << " ulp on [-87, -17], relative " << worst_rel);
    CHECK(worst_ulp <= kExpUlpTol);
    CHECK(worst_rel <= 4 * kExpUlpTol * std::numeric_limits<float>::epsilon());
    const float deep[3] = {0.f, -100.f, -1e6f};  // far below underflow: exactly 0, not NaN
    float out[3];
    v.softmax_row(3, deep, out);
    CHECK(out[0] == 1.f);
    CHECK(out[1] == Approx(0.0).margin(1e-40));
    CHECK(out[2] == 0.f);
  }
}

TEST_CASE("kernels: scale_mask_softmax_row equals scale_vec -> mask_row -> softmax_row bit for bit",
          "[kernel][softmax]") {
  const float scales[] = {0.125f, 0.37796447f, 1.0f};
  std::vector<int> sizes = row_sizes();
  sizes.insert(sizes.end(), {11, 12, 15, 31, 40, 513});
  for (const auto& v : variants())
    for (int n : sizes)
      for (int mode = 0; mode < 8; ++mode) {
        const float scale = scales[mode % 3];
        const auto x = random_vec(n, 8u + n + mode, -20.f, 20.f), add = random_vec(n, 9u + n);
        std::vector<std::uint8_t> allowed(n);
        for (int j = 0; j < n; ++j) allowed[j] = mode == 7 ? 0 : (j * 5 + mode) % 4 != 0;
        const float* a = (mode & 1) ? add.data() : nullptr;
        const std::uint8_t* al = (mode & 2) || mode == 7 ? allowed.data() : nullptr;
        INFO(v.name << " n=" << n << " mode=" << mode);
        std::vector<float> fused(n), step(n), tmp(n);
        v.scale_mask_softmax_row(n, x.data(), scale, a, al, fused.data());
        v.scale_vec(n, x.data(), scale, tmp.data());
        v.mask_row(n, tmp.data(), a, al, tmp.data());
        v.softmax_row(n, tmp.data(), step.data());
        CHECK(bits_equal(fused, step));
        std::vector<double> z(n), want(n);  // z: (n) the reference's masked scores
        for (int j = 0; j < n; ++j)
          z[j] = (al && !al[j]) ? -HUGE_VAL : double(x[j] * scale) + (a ? a[j] : 0.0);
        ref::softmax_row(n, z.data(), want.data());
        CHECK(max_abs_diff(fused, want) <= kSoftmaxTol);
        if (mode == 7) CHECK(fused == std::vector<float>(n, 0.f));
      }
}

TEST_CASE("kernels: layer_norm_row matches the reference", "[kernel][layernorm]") {
  std::vector<int> sizes = row_sizes();
  sizes.push_back(512);
  for (const auto& v : variants())
    for (int n : sizes)
      for (int mode = 0; mode < 4; ++mode) {
        INFO(v.name << " n=" << n << " gamma=" << (mode & 1) << " beta=" << (mode >> 1));
        auto x = random_vec(n, 10u + n, 1.f, 5.f);
        const auto g = random_vec(n, 11u + n, 0.5f, 1.5f), b = random_vec(n, 12u + n);
        const float* gamma = (mode & 1) ? g.data() : nullptr;
        const float* beta = (mode >> 1) ? b.data() : nullptr;
        const float eps = mode % 2 ? 1e-5f : 1e-6f;
        std::vector<double> want(n);
        ref::layer_norm_row(n, x.data(), gamma, beta, eps, want.data());
        std::vector<float> out(n);
        v.layer_norm_row(n, x.data(), gamma, beta, eps, out.data());
        CHECK(max_abs_diff(out, want) <= kLayerNormTol);
        v.layer_norm_row(n, x.data(), gamma, beta, eps, x.data());  // in place
        CHECK(bits_equal(x, out));
        const std::vector<float> flat(n, 2.5f);  // zero variance: (x - mean) = 0 → beta
        v.layer_norm_row(n, flat.data(), gamma, beta, eps, out.data());
        CHECK(out == (beta ? b : std::vector<float>(n, 0.f)));
      }
}

// Rows 1e4 + N(0, 1) (float32 inputs, exact as given) against float64, within 1e-6 of
// the row's max |y| per element. A float32 mean is off by up to half an ulp of 1e4 (~5e-4) there:
// PyTorch's float32 kernel misses this bound by ~300×.
constexpr double kOffsetRelTol = 1e-6;

TEST_CASE("kernels: layer_norm_row is exact on rows with a large common offset", "[kernel][layernorm]") {
  std::vector<int> sizes = row_sizes();
  for (int n : {64, 512, 4096}) sizes.push_back(n);
  for (const auto& v : variants())
    for (int n : sizes)
      for (float offset : {1e4f, -3e5f, 1e6f}) {
        INFO(v.name << " n=" << n << " offset=" << offset);
        auto x = random_vec(n, 20u + n, -1.f, 1.f);  // uniform, then a normal-ish sum of 3
        const auto x2 = random_vec(n, 21u + n, -1.f, 1.f), x3 = random_vec(n, 22u + n, -1.f, 1.f);
        for (int j = 0; j < n; ++j) x[j] = offset + (x[j] + x2[j] + x3[j]);  // rounded once to float32
        const auto g = random_vec(n, 23u + n, 0.5f, 1.5f), b = random_vec(n, 24u + n);
        std::vector<double> want(n);
        ref::layer_norm_row(n, x.data(), g.data(), b.data(), 1e-5f, want.data());
        std::vector<float> out(n);
        v.layer_norm_row(n, x.data(), g.data(), b.data(), 1e-5f, out.data());
        double max_y = 0.0;
        for (double w : want) max_y = std::max(max_y, std::abs(w));
        CHECK(max_abs_diff(out, want) <= kOffsetRelTol * max_y);
      }
}

// Folds row segments of `tile` keys into (m, l, out) the way the flash path does: out = out · factor
// + Σ p_j · v_j per segment, then out / l. Returns out (dv); checks the kernel's own promises.
std::vector<float> fold_online(const Variant& v, int Tk, int tile, int dv, const std::vector<float>& x,
                               float scale, const float* add, const std::uint8_t* allowed,
                               const std::vector<float>& V, float& m, float& l) {
  std::vector<double> out(dv, 0.0);  // out: (dv) unnormalised
  m = kNegInf;
  l = 0.f;
  for (int j0 = 0; j0 < Tk; j0 += tile) {
    const int n = std::min(tile, Tk - j0);
    std::vector<float> p(n), alias(x.begin() + j0, x.begin() + j0 + n);  // p, alias: (n)
    const float m0 = m, l0 = l;
    const float factor = v.online_softmax_row(n, &x[j0], scale, add ? add + j0 : nullptr,
                                              allowed ? allowed + j0 : nullptr, &m, &l, p.data());
    float m1 = m0, l1 = l0;  // p may alias x: same bits
    CHECK(v.online_softmax_row(n, alias.data(), scale, add ? add + j0 : nullptr,
                               allowed ? allowed + j0 : nullptr, &m1, &l1, alias.data()) == factor);
    CHECK((bits_equal(alias, p) && m1 == m && l1 == l));
    if (m == m0 && m0 != kNegInf) CHECK(factor == 1.f);       // the max did not move
    if (m0 == kNegInf && m != kNegInf) CHECK(factor == 0.f);  // first segment with an allowed key
    for (int d = 0; d < dv; ++d) out[d] *= factor;
    for (int j = 0; j < n; ++j)
      for (int d = 0; d < dv; ++d) out[d] += double(p[j]) * V[size_t(j0 + j) * dv + d];
  }
  std::vector<float> result(dv, 0.f);
  if (l > 0.f)
    for (int d = 0; d < dv; ++d) result[d] = static_cast<float>(out[d] / l);
  return result;
}

TEST_CASE("kernels: online_softmax_row over tiles equals softmax · V", "[kernel][online]") {
  const int tiles[] = {1, 3, 4, 16, 64, 100};
  for (const auto& v : variants())
    for (int Tk : {1, 5, 17, 64, 130})
      for (int tile : tiles)
        for (int dv : {1, 7, 16})
          for (int mode = 0; mode < 4; ++mode) {  // 0 plain, 1 masked + rising, 2 falling, 3 all masked
            INFO(v.name << " Tk=" << Tk << " tile=" << tile << " dv=" << dv << " mode=" << mode);
            auto x = random_vec(Tk, 13u + Tk + dv, -4.f, 4.f);  // x: (Tk) raw scores
            for (int j = 0; j < Tk; ++j) x[j] += mode == 1 ? 0.5f * j : mode == 2 ? -0.5f * j : 0.f;
            const auto add = random_vec(Tk, 15u + Tk, -0.5f, 0.5f);  // add: (Tk)
            std::vector<std::uint8_t> allowed(Tk);
            for (int j = 0; j < Tk; ++j)
              allowed[j] = mode == 3 ? 0 : !(mode == 1 && (j < tile || j % 5 == 2));
            const float scale = 0.7f;
            const auto V = random_vec(static_cast<size_t>(Tk) * dv, 14u + dv);  // V: (Tk, dv)
            float m, l;
            const auto out = fold_online(v, Tk, tile, dv, x, scale, mode % 2 ? add.data() : nullptr,
                                         allowed.data(), V, m, l);
            std::vector<double> z(Tk), w(Tk), want(dv, 0.0);  // z: (Tk) the reference's masked scores
            for (int j = 0; j < Tk; ++j)
              z[j] = !allowed[j] ? -HUGE_VAL : double(x[j] * scale) + (mode % 2 ? add[j] : 0.0);
            ref::softmax_row(Tk, z.data(), w.data());
            for (int j = 0; j < Tk; ++j)
              for (int d = 0; d < dv; ++d) want[d] += w[j] * V[static_cast<size_t>(j) * dv + d];
            if (mode == 3) CHECK((l == 0.f && m == kNegInf));
            CHECK(max_abs_diff(out, want) <= kOnlineTol);
          }
}
TEST_CASE("kernels: composed into attention, they match ref::sdpa", "[kernel][attention]") {
  struct Shape {
    int batch, Tq, Tk, dk, dv;
  };
  const Shape shapes[] = {{1, 1, 1, 1, 1}, {2, 1, 5, 3, 1},    {1, 7, 9, 1, 4},
                          {3, 5, 5, 8, 8}, {1, 17, 33, 65, 7}, {2, 9, 70, 16, 16}};
  for (const auto& v : variants())
    for (const auto& sh : shapes)
      for (int masked = 0; masked < 2; ++masked) {
        INFO(v.name << " b=" << sh.batch << " Tq=" << sh.Tq << " Tk=" << sh.Tk << " dk=" << sh.dk
                    << " dv=" << sh.dv << " masked=" << masked);
        const int B = sh.batch, Tq = sh.Tq, Tk = sh.Tk, dk = sh.dk, dv = sh.dv;
        const auto q = random_vec(size_t(B) * Tq * dk, 21u), kk = random_vec(size_t(B) * Tk * dk, 22u);
        const auto vv = random_vec(size_t(B) * Tk * dv, 23u);
        const auto add = random_vec(size_t(B) * Tq * Tk, 24u, -0.5f, 0.5f);
        std::vector<std::uint8_t> allowed(size_t(B) * Tq * Tk);  // causal; row 0 of batch 1 empty
        for (int b = 0; b < B; ++b)
          for (int i = 0; i < Tq; ++i)
            for (int j = 0; j < Tk; ++j)
              allowed[(size_t(b) * Tq + i) * Tk + j] = j <= i && !(b == 1 && i == 0);
        const double scale = 1.0 / std::sqrt(double(dk));
        std::vector<double> want_out, want_w;
        ref::sdpa(q, kk, vv, B, Tq, Tk, dk, dv, scale, masked ? &allowed : nullptr, masked ? &add : nullptr,
                  want_out, want_w);
        std::vector<float> w(size_t(B) * Tq * Tk), out(size_t(B) * Tq * dv), flash(out.size());
        for (int b = 0; b < B; ++b) {
          const size_t qo = size_t(b) * Tq, ko = size_t(b) * Tk;
          float* wb = &w[qo * Tk];  // wb: (Tq, Tk) scores, then weights
          v.gemm_nt(Tq, Tk, dk, &q[qo * dk], dk, &kk[ko * dk], dk, wb, Tk, false);
          for (int i = 0; i < Tq; ++i) {
            const size_t r = (qo + i) * Tk;
            v.scale_mask_softmax_row(Tk, wb + size_t(i) * Tk, float(scale), masked ? &add[r] : nullptr,
                                     masked ? &allowed[r] : nullptr, wb + size_t(i) * Tk);
          }
          v.gemm_nn(Tq, dv, Tk, wb, Tk, &vv[ko * dv], dv, &out[qo * dv], dv, false);
          for (int i = 0; i < Tq; ++i) {  // the flash path: scores of query i in tiles of 4 keys
            float m = kNegInf, l = 0.f, s[4];
            std::vector<float> acc(dv, 0.f);  // acc: (dv) unnormalised output row
            for (int j0 = 0; j0 < Tk; j0 += 4) {
              const int n = std::min(4, Tk - j0);
              const size_t r = (qo + i) * Tk + j0;
              v.gemm_nt(1, n, dk, &q[(qo + i) * dk], dk, &kk[(ko + j0) * dk], dk, s, n, false);
              const float factor = v.online_softmax_row(n, s, float(scale), masked ? &add[r] : nullptr,
                                                        masked ? &allowed[r] : nullptr, &m, &l, s);
              v.scale_vec(dv, acc.data(), factor, acc.data());
              v.gemm_nn(1, dv, n, s, n, &vv[(ko + j0) * dv], dv, acc.data(), dv, true);
            }
            for (int d = 0; d < dv; ++d) flash[(qo + i) * dv + d] = l > 0.f ? acc[d] / l : 0.f;
          }
        }
        CHECK(max_abs_diff(w, want_w) <= kAttnTol);
        CHECK(max_abs_diff(out, want_out) <= kAttnTol);
        CHECK(max_abs_diff(flash, want_out) <= kAttnTol);
      }
}

TEST_CASE("kernels: ref::sdpa itself: a hand-computed case and the callback mask", "[kernel][attention]") {
  // One query, two keys, dk = dv = 1: scores [0, ln 3] → weights [1/4, 3/4], out = 0.25·2 + 0.75·6.
  const std::vector<float> q = {1.f}, kk = {0.f, float(std::log(3.0))}, vv = {2.f, 6.f};
  std::vector<double> out, w;
  ref::sdpa(q, kk, vv, 1, 1, 2, 1, 1, 1.0, nullptr, nullptr, out, w);
  CHECK(w[0] == Approx(0.25).epsilon(1e-7));
  CHECK(out[0] == Approx(5.0).epsilon(1e-7));
  const std::vector<std::uint8_t> none = {0, 0};
  ref::sdpa(q, kk, vv, 1, 1, 2, 1, 1, 1.0, &none, nullptr, out, w);
  CHECK((w[0] == 0.0 && w[1] == 0.0 && out[0] == 0.0));  // fully masked row → zeros
  ref::sdpa_fn(
      q, kk, vv, 1, 1, 2, 1, 1, 1.0, [](int, int, int j) { return j == 1; }, nullptr, out, w);
  CHECK((w[0] == 0.0 && w[1] == 1.0 && out[0] == 6.0));
}
