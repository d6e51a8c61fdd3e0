// Rotary position embeddings and ALiBi slopes: a double reference (a rotation matrix per pair), the
// backward as the transpose, the relative-position property, the golden fixtures and the errors.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/memory_limit.h"
#include "core/rotary.h"
#include "fixture.h"
#include "golden_close.h"
#include "test_helpers.h"

using attn::RotaryOptions;
using attn::RotaryStyle;
using attn::StatusCode;

namespace {

// Float32 cos/sin (rounded once) times inputs of |x| <= ~5, two products and a sum (observed 3e-7).
constexpr double kRotaryTol = 1e-6;
// ⟨rotate(x), g⟩ = ⟨x, rotate_backward(g)⟩ relative to Σ|x|·|g|: float rounding of both sides.
constexpr double kAdjointRelTol = 1e-5;
// inverse(rotate(x)) = x: two float rotations, and cos² + sin² = 1 only to float rounding (observed 5e-7).
constexpr double kRoundTripTol = 2e-6;
// q(p+δ)·k(p) for p up to 2^31, relative to |q|·|k|: at p ~ 2^31 the double angle itself is only
// good to ~2^31·2^−53 relative, plus the float rotations.
constexpr double kRelativePositionTol = 1e-5;

// The reference: one head x (d) at position p, pairs rotated by the matrix [[c, −s], [s, c]] in double.
std::vector<double> reference_rotate(const std::vector<double>& x, double p, double base, int dims,
                                     RotaryStyle style, bool inverse) {
  std::vector<double> y = x;
  const int half = dims / 2;
  for (int m = 0; m < half; ++m) {
    const double angle = p * std::pow(base, -2.0 * m / dims) * (inverse ? -1.0 : 1.0);
    const double rot[2][2] = {{std::cos(angle), -std::sin(angle)}, {std::sin(angle), std::cos(angle)}};
    const int a = style == RotaryStyle::kHalf ? m : 2 * m;
    const int b = style == RotaryStyle::kHalf ? m + half : 2 * m + 1;
    y[a] = rot[0][0] * x[a] + rot[0][1] * x[b];
    y[b] = rot[1][0] * x[a] + rot[1][1] * x[b];
  }
  return y;
}

// The reference over a strided buffer laid out as rotate_rows documents.
std::vector<double> reference_rows(const std::vector<float>& x, int seqs, int t, int ld, int heads, int d,
                                   const RotaryOptions& o, bool inverse) {
  std::vector<double> y(x.begin(), x.end());
  const int dims = o.dims == 0 ? d : o.dims;
  for (int n = 0; n < seqs; ++n)
    for (int r = 0; r < t; ++r)
      for (int h = 0; h < heads; ++h) {
        const std::size_t at = static_cast<std::size_t>((n * t + r) * ld + h * d);
        const std::vector<double> head(y.begin() + at, y.begin() + at + d);
        const std::vector<double> rotated =
            reference_rotate(head, static_cast<double>(o.offset + r), o.base, dims, o.style, inverse);
        std::copy(rotated.begin(), rotated.end(), y.begin() + at);
      }
  return y;
}

void require_error(const attn::Status& st, StatusCode code, const std::string& fragment) {
  INFO("message: " << st.message);
  REQUIRE(st.code == code);
  CHECK(st.message.find(fragment) != std::string::npos);
}

using golden::require_fixture_close;

double dot(const std::vector<float>& a, const std::vector<float>& b, double* magnitude) {
  double s = 0, m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    s += static_cast<double>(a[i]) * b[i];
    m += std::fabs(static_cast<double>(a[i]) * b[i]);
  }
  if (magnitude != nullptr) *magnitude = m;
  return s;
}

}  // namespace

TEST_CASE("rotate_rows matches the double reference: both styles, partial dims, offsets, strided heads",
          "[rotary]") {
  const int seqs = 2, t = 4;
  for (RotaryStyle style : {RotaryStyle::kHalf, RotaryStyle::kInterleaved}) {
    for (int d = 2; d <= 10; ++d) {
      for (int dims = 0; dims <= d; dims += 2) {
        if (dims == 0 && d % 2 != 0) continue;  // dims 0 means d, which must be even
        for (std::int64_t offset : {std::int64_t{0}, std::int64_t{3}, std::int64_t{2147483640}}) {
          for (int heads : {1, 3}) {
            RotaryOptions o;
            o.style = style;
            o.dims = dims;
            o.offset = offset;
            o.base = d % 2 == 0 ? 10000.0 : 500.0;
            REQUIRE(attn::check_rotary(o, d).ok());
            const int ld = heads * d + 3;  // 3 floats of padding after every row
            std::vector<float> x = testutil::random_tensor({seqs * t * ld}, 7 + d).data;  // (seqs, t, ld)
            const std::vector<double> want = reference_rows(x, seqs, t, ld, heads, d, o, false);
            attn::RotaryTable table;
            attn::make_rotary_table(o, d, offset, t, table);
            REQUIRE(table.cos.size() == static_cast<std::size_t>(t * table.dims / 2));
            attn::rotate_rows(x.data(), seqs, t, ld, heads, d, table, false);
            CAPTURE(static_cast<int>(style), d, dims, offset, heads);
            // The reference leaves the padding and the pass-through features as they were.
            testutil::require_close(x, want, kRotaryTol, "rotate_rows");
          }
        }
      }
    }
  }
}

TEST_CASE("apply_rotary on (..., T, d): every leading index is its own sequence from offset", "[rotary]") {
  for (RotaryStyle style : {RotaryStyle::kHalf, RotaryStyle::kInterleaved}) {
    RotaryOptions o;
    o.style = style;
    o.dims = 4;
    o.offset = 11;
    const attn::Tensor x = testutil::random_tensor({2, 3, 5, 6}, 21);
    attn::Tensor y;
    REQUIRE(attn::apply_rotary(x, o, y).ok());
    REQUIRE(y.shape == x.shape);
    testutil::require_close(y.data, reference_rows(x.data, 6, 5, 6, 1, 6, o, false), kRotaryTol,
                            "apply_rotary");
    attn::Tensor gx;
    REQUIRE(attn::apply_rotary_backward(x, o, gx).ok());
    testutil::require_close(gx.data, reference_rows(x.data, 6, 5, 6, 1, 6, o, true), kRotaryTol,
                            "apply_rotary_backward");
    attn::Tensor same = x;  // out may alias the input
    REQUIRE(attn::apply_rotary(same, o, same).ok());
    CHECK(same.data == y.data);
  }
}

TEST_CASE("the rotary backward is the transpose and undoes the forward", "[rotary]") {
  for (RotaryStyle style : {RotaryStyle::kHalf, RotaryStyle::kInterleaved}) {
    for (int dims : {0, 2, 6}) {
      RotaryOptions o;
      o.style = style;
      o.dims = dims;
      o.offset = 1000;
      const attn::Tensor x = testutil::random_tensor({3, 7, 8}, 31);
      const attn::Tensor g = testutil::random_tensor({3, 7, 8}, 32);
      attn::Tensor y, gx, back;
      REQUIRE(attn::apply_rotary(x, o, y).ok());
      REQUIRE(attn::apply_rotary_backward(g, o, gx).ok());
      double magnitude = 0;
      const double lhs = dot(y.data, g.data, &magnitude);
      const double rhs = dot(x.data, gx.data, nullptr);
      CAPTURE(static_cast<int>(style), dims, lhs, rhs);
      CHECK(std::fabs(lhs - rhs) <= kAdjointRelTol * magnitude);
      REQUIRE(attn::apply_rotary_backward(y, o, back).ok());
      testutil::require_close(back.data, x.data, kRoundTripTol, "inverse(rotate(x))");
    }
  }
}

TEST_CASE("a rotary scale multiplies the rotated features only, and the backward stays the transpose",
          "[rotary]") {
  // Phi-3's LongRoPE attention factor: transformers multiplies cos and sin by it.
  const double scale = 1.1902380714238083;  // √(1 + ln 32 / ln 4096), Phi-4-mini's
  RotaryOptions plain;
  plain.dims = 6;
  plain.offset = 5;
  RotaryOptions scaled = plain;
  scaled.scale = scale;
  const attn::Tensor x = testutil::random_tensor({3, 7, 8}, 41);
  const attn::Tensor g = testutil::random_tensor({3, 7, 8}, 42);
  attn::Tensor y0, y, gx;
  REQUIRE(attn::apply_rotary(x, plain, y0).ok());
  REQUIRE(attn::apply_rotary(x, scaled, y).ok());
  std::vector<float> want = y0.data;
  for (std::size_t i = 0; i < want.size(); ++i)
    if (i % 8 < 6) want[i] = static_cast<float>(scale * y0.data[i]);
  testutil::require_close(y.data, want, kRotaryTol, "scaled rotary");
  for (std::size_t i = 0; i < want.size(); ++i)
    if (i % 8 >= 6) CHECK(y.data[i] == x.data[i]);  // the pass-through features are not scaled
  REQUIRE(attn::apply_rotary_backward(g, scaled, gx).ok());
  double magnitude = 0;
  const double lhs = dot(y.data, g.data, &magnitude);
  const double rhs = dot(x.data, gx.data, nullptr);
  CHECK(std::fabs(lhs - rhs) <= kAdjointRelTol * magnitude);
}

TEST_CASE("rotary scores depend only on the relative position: q(p+δ)·k(p) is the same for every p",
          "[rotary]") {
  const int d = 8, delta = 3;
  const std::vector<float> q = testutil::random_tensor({d}, 41).data;
  const std::vector<float> k = testutil::random_tensor({d}, 42).data;
  for (RotaryStyle style : {RotaryStyle::kHalf, RotaryStyle::kInterleaved}) {
    double first = 0, scale = 0;
    bool have_first = false;
    for (std::int64_t p : {std::int64_t{0}, std::int64_t{5}, std::int64_t{100}, std::int64_t{12345},
                           std::int64_t{2147483000}}) {
      RotaryOptions o;
      o.style = style;
      o.offset = p;
      // Rows p … p+δ: k at row 0, q at row δ, zeros between.
      attn::Tensor x = attn::Tensor::zeros({delta + 1, d});
      std::copy(k.begin(), k.end(), x.data.begin());
      std::copy(q.begin(), q.end(), x.data.begin() + delta * d);
      attn::Tensor y;
      REQUIRE(attn::apply_rotary(x, o, y).ok());
      const std::vector<float> kr(y.data.begin(), y.data.begin() + d);
      const std::vector<float> qr(y.data.begin() + delta * d, y.data.end());
      const double score = dot(qr, kr, nullptr);
      if (!have_first) {
        first = score, have_first = true;
        scale = std::sqrt(dot(q, q, nullptr) * dot(k, k, nullptr));
      }
      CAPTURE(static_cast<int>(style), p, score, first);
      CHECK(std::fabs(score - first) <= kRelativePositionTol * scale);
      CHECK(std::fabs(score - dot(q, k, nullptr)) > 1e-3);  // δ ≠ 0 does change the score
    }
  }
}

TEST_CASE("rotary matches the golden fixtures (output and grad_x)", "[rotary]") {
  for (const char* name : {"modern_rope_half", "modern_rope_interleaved", "modern_rope_partial_offset"}) {
    const Fixture f = load_fixture(name);
    RotaryOptions o;
    o.base = f.scalar("base", 10000.0f);
    o.style = f.flag("interleaved") ? RotaryStyle::kInterleaved : RotaryStyle::kHalf;
    o.dims = static_cast<int>(f.scalar("dims", 0.0f));
    o.offset = static_cast<std::int64_t>(f.scalar("offset", 0.0f));
    CAPTURE(name);
    attn::Tensor y, gx;
    REQUIRE(attn::apply_rotary(f.at("x"), o, y).ok());
    REQUIRE(y.shape == f.at("output").shape);
    require_fixture_close(y.data, f.at("output"), "output");
    REQUIRE(attn::apply_rotary_backward(f.at("grad_output"), o, gx).ok());
    REQUIRE(gx.shape == f.at("grad_x").shape);
    require_fixture_close(gx.data, f.at("grad_x"), "grad_x");
  }
}

TEST_CASE("ALiBi slopes match the paper's get_slopes and the golden fixture", "[rotary]") {
  const Fixture f = load_fixture("modern_alibi_slopes");
  for (int h : {4, 6, 8, 12}) {
    std::vector<float> slopes;
    REQUIRE(attn::alibi_slopes(h, slopes).ok());
    CAPTURE(h);
    require_fixture_close(slopes, f.at("slopes_" + std::to_string(h)), "slopes");
  }
  std::vector<float> one, three;
  REQUIRE(attn::alibi_slopes(1, one).ok());
  CHECK(one == std::vector<float>{1.0f / 256});  // 2^(−8)
  REQUIRE(attn::alibi_slopes(3, three).ok());    // get_slopes(2) then get_slopes(4)[0]
  CHECK(three == std::vector<float>{1.0f / 16, 1.0f / 256, 0.25f});
}

TEST_CASE("rotary and ALiBi errors name the problem", "[rotary]") {
  RotaryOptions o;
  o.dims = 5;
  require_error(attn::check_rotary(o, 8), StatusCode::kInvalidArgument, "rotary dims must be even, got 5");
  o.dims = 0;
  require_error(attn::check_rotary(o, 7), StatusCode::kInvalidArgument, "rotary dims must be even, got 7");
  o.dims = 12;
  require_error(attn::check_rotary(o, 10), StatusCode::kInvalidArgument,
                "rotary dims 12 exceeds the head size");
  o.dims = -2;
  require_error(attn::check_rotary(o, 10), StatusCode::kInvalidArgument, "rotary dims must be >= 0");
  o = RotaryOptions();
  o.base = 0.0;
  require_error(attn::check_rotary(o, 8), StatusCode::kInvalidArgument, "base must be a finite number > 0");
  o.base = std::numeric_limits<double>::quiet_NaN();
  require_error(attn::check_rotary(o, 8), StatusCode::kInvalidArgument,
                "base must be a finite number > 0, got NaN");
  o = RotaryOptions();
  o.scale = 0.0;
  require_error(attn::check_rotary(o, 8), StatusCode::kInvalidArgument,
                "rotary scale must be a finite number > 0");
  o = RotaryOptions();
  o.offset = -1;
  require_error(attn::check_rotary(o, 8), StatusCode::kInvalidArgument, "rotary offset must be >= 0, got -1");
  o.offset = attn::kMaxRotaryOffset;
  require_error(attn::check_rotary(o, 8), StatusCode::kInvalidArgument, "rotary offset must be < 2^53");

  std::vector<float> slopes;
  require_error(attn::alibi_slopes(0, slopes), StatusCode::kInvalidArgument,
                "alibi num_heads must be >= 1, got 0");

  attn::Tensor y;
  require_error(attn::apply_rotary(testutil::random_tensor({8}, 1), RotaryOptions(), y),
                StatusCode::kShapeMismatch, "rotary input must have rank >= 2");
  attn::Tensor nan = testutil::random_tensor({2, 4}, 1);
  nan.data[5] = std::numeric_limits<float>::quiet_NaN();
  require_error(attn::apply_rotary(nan, RotaryOptions(), y), StatusCode::kNonFinite,
                "rotary input contains NaN at flat index 5");
  require_error(attn::apply_rotary_backward(nan, RotaryOptions(), y), StatusCode::kNonFinite,
                "rotary grad_output contains NaN");
  o = RotaryOptions();
  o.dims = 6;  // checked against the tensor's d = 4
  require_error(attn::apply_rotary(testutil::random_tensor({2, 4}, 1), o, y), StatusCode::kInvalidArgument,
                "rotary dims 6 exceeds the head size d = 4");
  const std::uint64_t saved_limit = attn::memory_limit_bytes();
  attn::set_memory_limit_bytes(64);  // 16 floats: the (4, 8) output alone does not fit
  const attn::Status too_large = attn::apply_rotary(testutil::random_tensor({4, 8}, 1), RotaryOptions(), y);
  attn::set_memory_limit_bytes(saved_limit);  // restored before any REQUIRE can leave the test
  require_error(too_large, StatusCode::kTooLarge, "rotary would need");
}
