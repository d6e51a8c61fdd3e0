// Positional encodings: the sinusoidal formula (any base, odd d_model) and the learned table.
#include <catch2/catch.hpp>
#include <cmath>

#include "core/positional.h"
#include "test_helpers.h"

namespace {
constexpr double kSinusoidTol = 1e-6;  // float32 rounding of sin/cos values in [-1, 1]
}

TEST_CASE("sinusoidal encoding follows the formula for bases 10000 and 1000 and odd d_model",
          "[positional]") {
  for (double base : {10000.0, 1000.0}) {
    for (int d : {1, 2, 5, 8, 9}) {
      attn::Tensor pe;
      REQUIRE(attn::sinusoidal_encoding(7, d, base, pe).ok());
      REQUIRE(pe.shape == attn::Shape{7, d});
      std::vector<double> want(7 * d);
      for (int pos = 0; pos < 7; ++pos)
        for (int col = 0; col < d; ++col) {
          const int pair = col / 2;
          const double angle = pos / std::pow(base, 2.0 * pair / d);
          want[pos * d + col] = col % 2 == 0 ? std::sin(angle) : std::cos(angle);
        }
      CAPTURE(base, d);
      testutil::require_close(pe.data, want, kSinusoidTol, "sinusoidal");
    }
  }
}

TEST_CASE("the base changes the pattern: 1000 and 10000 differ beyond the first pair", "[positional]") {
  attn::Tensor a, b;
  REQUIRE(attn::sinusoidal_encoding(4, 8, 10000.0, a).ok());
  REQUIRE(attn::sinusoidal_encoding(4, 8, 1000.0, b).ok());
  CHECK(a.data[8 + 0] == b.data[8 + 0]);  // pair 0 has frequency 1 for every base
  CHECK(a.data[8 + 2] != b.data[8 + 2]);
}

TEST_CASE("learned positional encoding: seeded, settable, encodes a prefix", "[positional]") {
  attn::LearnedPositionalEncoding a, b;
  REQUIRE(attn::LearnedPositionalEncoding::create(10, 4, 3, a).ok());
  REQUIRE(attn::LearnedPositionalEncoding::create(10, 4, 3, b).ok());
  CHECK(a.table().data == b.table().data);
  attn::Tensor first;
  REQUIRE(a.encode(3, first).ok());
  CHECK(first.shape == attn::Shape{3, 4});
  CHECK(first.data == std::vector<float>(a.table().data.begin(), a.table().data.begin() + 12));
  const attn::Tensor table = testutil::random_tensor({10, 4}, 99);
  REQUIRE(a.set_table(table).ok());
  CHECK(a.table().data == table.data);
  CHECK(a.set_table(testutil::random_tensor({9, 4}, 1)).code == attn::StatusCode::kShapeMismatch);
  CHECK(a.encode(11, first).code == attn::StatusCode::kInvalidArgument);
}
