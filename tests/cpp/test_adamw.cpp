// AdamW + global gradient-norm clipping (src/train/adamw.h): against a double-precision twin of
// the same formulas written here, and against PyTorch (tests/golden/fixtures/adamw_clip.txt,
// written by tests/golden/make_adamw_fixture.py).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/rng.h"
#include "fixture.h"
#include "train/adamw.h"

namespace {

using attn::AdamWOptions;
using attn::AdamWParam;

// float32 implementation vs the double twin after 3 steps: a few float roundings per element per
// step, relative to values of order 1 and updates of order lr.
constexpr double kDoubleRefAbsTol = 2e-6;
constexpr double kDoubleRefRelTol = 2e-5;
// Against PyTorch (the brief's bound): torch may fuse one multiply-add into an FMA on AVX2.
constexpr double kTorchAbsTol = 1e-6;
constexpr double kTorchRelTol = 1e-5;

// One parameter tensor with its float32 buffers.
struct ParamBuffers {
  std::vector<float> value, grad, exp_avg, exp_avg_sq;  // (n,) each
  explicit ParamBuffers(std::size_t n) : value(n), grad(n), exp_avg(n, 0.0f), exp_avg_sq(n, 0.0f) {}
  AdamWParam view() {
    return {value.data(), grad.data(), exp_avg.data(), exp_avg_sq.data(),
            static_cast<std::int64_t>(value.size())};
  }
};

// The same formulas in double (the AdamW paper's decoupled decay as torch writes it).
struct RefParam {
  std::vector<double> value, grad, exp_avg, exp_avg_sq;  // (n,) each
};

double ref_global_norm(const std::vector<RefParam>& params) {
  double sum = 0;
  for (const RefParam& p : params)
    for (double g : p.grad) sum += g * g;
  return std::sqrt(sum);
}

double ref_clip_factor(double norm, double clip) {
  if (clip == 0) return 1;
  return std::fmin(clip / (norm + 1e-6), 1.0);
}

void ref_adamw_step(std::vector<RefParam>& params, const AdamWOptions& o, int step, double scale) {
  const double lr = o.lr, b1 = o.beta1, b2 = o.beta2, eps = o.eps, wd = o.weight_decay;
  const double bc1 = 1 - std::pow(b1, step), bc2 = 1 - std::pow(b2, step);
  for (RefParam& p : params) {
    for (std::size_t i = 0; i < p.value.size(); ++i) {
      const double g = p.grad[i] * scale;
      p.grad[i] = g;
      p.exp_avg[i] = b1 * p.exp_avg[i] + (1 - b1) * g;
      p.exp_avg_sq[i] = b2 * p.exp_avg_sq[i] + (1 - b2) * g * g;
      const double m_hat = p.exp_avg[i] / bc1;
      const double denom = std::sqrt(p.exp_avg_sq[i] / bc2) + eps;
      p.value[i] = p.value[i] * (1 - lr * wd) - lr * m_hat / denom;
    }
  }
}

// |got - want| <= abs_tol + rel_tol * |want| for every element; reports the worst.
template <typename Want>
void require_near(const std::vector<float>& got, const std::vector<Want>& want, double abs_tol,
                  double rel_tol, const std::string& what) {
  REQUIRE(got.size() == want.size());
  double worst_excess = -1;
  std::size_t worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double w = static_cast<double>(want[i]);
    const double excess = std::fabs(static_cast<double>(got[i]) - w) - (abs_tol + rel_tol * std::fabs(w));
    if (!(excess <= worst_excess)) {
      worst_excess = excess;
      worst = i;
    }
  }
  INFO(what << ": worst element " << worst << " got " << got[worst] << " want " << want[worst]);
  REQUIRE(worst_excess <= 0);
}

std::vector<float> as_vector(const attn::Tensor& t) {
  return t.data;
}

}  // namespace

TEST_CASE("adamw: three clipped steps match a double-precision twin", "[train]") {
  AdamWOptions o;
  o.lr = 0.05f;
  o.beta1 = 0.85f;
  o.beta2 = 0.98f;
  o.eps = 1e-4f;
  o.weight_decay = 0.2f;
  o.clip_grad_norm = 1.0f;
  REQUIRE(attn::check_adamw_options(o).ok());
  const std::vector<std::size_t> sizes = {3, 5, 7};
  std::vector<ParamBuffers> bufs;
  std::vector<RefParam> ref;
  for (std::size_t t = 0; t < sizes.size(); ++t) {
    bufs.emplace_back(sizes[t]);
    for (std::size_t i = 0; i < sizes[t]; ++i) bufs[t].value[i] = attn::approx_normal(11 + t, i);
    ref.push_back({std::vector<double>(bufs[t].value.begin(), bufs[t].value.end()),
                   std::vector<double>(sizes[t]), std::vector<double>(sizes[t], 0.0),
                   std::vector<double>(sizes[t], 0.0)});
  }
  // Gradient scales chosen so the total norm is above, below, then above the clip norm.
  const float grad_scales[3] = {1.5f, 0.1f, 0.6f};
  float factors[3];
  for (int step = 1; step <= 3; ++step) {
    std::vector<AdamWParam> views;
    for (std::size_t t = 0; t < sizes.size(); ++t) {
      for (std::size_t i = 0; i < sizes[t]; ++i) {
        bufs[t].grad[i] = grad_scales[step - 1] * attn::approx_normal(100 * step + t, i);
        ref[t].grad[i] = bufs[t].grad[i];
      }
      views.push_back(bufs[t].view());
    }
    const float norm = attn::global_grad_norm(views);
    const double ref_norm = ref_global_norm(ref);
    CHECK(std::fabs(norm - ref_norm) <= kDoubleRefAbsTol + kDoubleRefRelTol * ref_norm);
    factors[step - 1] = attn::clip_factor(norm, o.clip_grad_norm);
    const double ref_factor = ref_clip_factor(ref_norm, o.clip_grad_norm);
    CHECK(std::fabs(factors[step - 1] - ref_factor) <= kDoubleRefAbsTol + kDoubleRefRelTol * ref_factor);
    attn::adamw_step(views, o, step, factors[step - 1]);
    ref_adamw_step(ref, o, step, ref_factor);
    for (std::size_t t = 0; t < sizes.size(); ++t) {
      const std::string where = "step " + std::to_string(step) + " param " + std::to_string(t);
      require_near(bufs[t].grad, ref[t].grad, kDoubleRefAbsTol, kDoubleRefRelTol, where + " clipped grad");
      require_near(bufs[t].value, ref[t].value, kDoubleRefAbsTol, kDoubleRefRelTol, where + " value");
      require_near(bufs[t].exp_avg, ref[t].exp_avg, kDoubleRefAbsTol, kDoubleRefRelTol, where + " exp_avg");
      require_near(bufs[t].exp_avg_sq, ref[t].exp_avg_sq, kDoubleRefAbsTol, kDoubleRefRelTol,
                   where + " exp_avg_sq");
    }
  }
  // The clip factor really changed between steps: clipped, not clipped, clipped by another factor.
  CHECK(factors[0] < 1.0f);
  CHECK(factors[1] == 1.0f);
  CHECK(factors[2] < 1.0f);
  CHECK(factors[2] != factors[0]);
}

TEST_CASE("adamw: a grad scale of exactly 1 leaves the gradients untouched", "[train]") {
  ParamBuffers p(5);
  for (int i = 0; i < 5; ++i) {
    p.value[i] = attn::approx_normal(1, i);
    p.grad[i] = (i % 2 ? 1.0f : -1.0f) * static_cast<float>(i + 1) * 1e-3f;  // |g| >= 1e-3 >> eps
  }
  const std::vector<float> grad_before = p.grad;
  const std::vector<float> value_before = p.value;
  attn::adamw_step({p.view()}, AdamWOptions{}, 1, 1.0f);
  CHECK(p.grad == grad_before);
  CHECK(p.value != value_before);
  // First step from zero moments: m = (1 - b1) g, v = (1 - b2) g², so m̂ / sqrt(v̂) = sign(g) and
  // every parameter moves by lr (up to eps / |g| <= 1e-5 and float32 rounding of a value of order
  // 1, ~2e-4 of lr = 1e-3), after weight decay.
  constexpr double kFirstStepRelTol = 1e-3;
  const AdamWOptions o;
  for (int i = 0; i < 5; ++i) {
    const double decayed = value_before[i] * (1.0 - double(o.lr) * o.weight_decay);
    const double moved = std::fabs(double(p.value[i]) - decayed);
    CHECK(std::fabs(moved - o.lr) <= kFirstStepRelTol * o.lr);
  }
}

TEST_CASE("adamw: global_grad_norm is the norm over every gradient", "[train]") {
  ParamBuffers a(3), b(7);
  a.grad = {3.0f, 0.0f, -4.0f};        // norm 5
  b.grad = {0, 0, 12.0f, 0, 0, 0, 0};  // norm 12; total sqrt(25 + 144) = 13
  CHECK(attn::global_grad_norm({a.view(), b.view()}) == 13.0f);
  CHECK(attn::global_grad_norm({}) == 0.0f);
  // Squares of 1e30 overflow float32; accumulated in double the norm is still right.
  b.grad = {1e30f, 1e30f, 1e30f, 1e30f, 0, 0, 0};
  const float big = attn::global_grad_norm({b.view()});
  CHECK(std::fabs(big - 2e30) <= 1e-6 * 2e30);
  b.grad[6] = std::numeric_limits<float>::quiet_NaN();
  CHECK(std::isnan(attn::global_grad_norm({a.view(), b.view()})));
}

TEST_CASE("adamw: clip_factor edge cases follow torch", "[train]") {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Clipping off: exactly 1 whatever the norm.
  CHECK(attn::clip_factor(5.0f, 0.0f) == 1.0f);
  CHECK(attn::clip_factor(0.0f, 0.0f) == 1.0f);
  CHECK(attn::clip_factor(inf, 0.0f) == 1.0f);
  // Zero or small gradients are never scaled up.
  CHECK(attn::clip_factor(0.0f, 1.0f) == 1.0f);
  CHECK(attn::clip_factor(0.5f, 1.0f) == 1.0f);
  // At norm == max_norm torch still scales, by max_norm / (max_norm + 1e-6) < 1.
  const float at_limit = attn::clip_factor(1.0f, 1.0f);
  CHECK(at_limit < 1.0f);
  CHECK(std::fabs(at_limit - 1.0 / (1.0 + 1e-6)) <= 1e-7);
  // Above the limit: max_norm / (norm + 1e-6).
  CHECK(std::fabs(attn::clip_factor(100.0f, 2.5f) - 2.5 / (100.0 + 1e-6)) <= 1e-7 * 0.025);
  // Non-finite norms as torch (error_if_nonfinite=False): inf scales by 0, NaN stays NaN.
  CHECK(attn::clip_factor(inf, 1.0f) == 0.0f);
  CHECK(std::isnan(attn::clip_factor(nan, 1.0f)));
}

TEST_CASE("adamw: check_adamw_options names the invalid option", "[train]") {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(attn::check_adamw_options(AdamWOptions{}).ok());
  AdamWOptions edges;  // every boundary that is allowed
  edges.lr = 0.0f;
  edges.beta1 = 0.0f;
  edges.beta2 = 0.0f;
  edges.weight_decay = 0.0f;
  edges.clip_grad_norm = 0.0f;
  CHECK(attn::check_adamw_options(edges).ok());

  struct Case {
    const char* option;
    float AdamWOptions::*field;
    float value;
  };
  const Case cases[] = {
      {"lr", &AdamWOptions::lr, -1e-3f},
      {"lr", &AdamWOptions::lr, inf},
      {"lr", &AdamWOptions::lr, nan},
      {"beta1", &AdamWOptions::beta1, 1.0f},
      {"beta1", &AdamWOptions::beta1, -0.1f},
      {"beta2", &AdamWOptions::beta2, 1.0f},
      {"beta2", &AdamWOptions::beta2, nan},
      {"eps", &AdamWOptions::eps, 0.0f},
      {"eps", &AdamWOptions::eps, -1e-8f},
      {"eps", &AdamWOptions::eps, inf},
      {"weight_decay", &AdamWOptions::weight_decay, -0.01f},
      {"clip_grad_norm", &AdamWOptions::clip_grad_norm, -1.0f},
      {"clip_grad_norm", &AdamWOptions::clip_grad_norm, inf},
  };
  for (const Case& c : cases) {
    AdamWOptions o;
    o.*c.field = c.value;
    const attn::Status s = attn::check_adamw_options(o);
    INFO(c.option << " = " << c.value << ": " << s.message);
    CHECK(s.code == attn::StatusCode::kInvalidArgument);
    CHECK(s.message.find(std::string("option ") + c.option + " ") != std::string::npos);
  }
}

TEST_CASE("adamw: three clipped steps match torch.optim.AdamW (golden)", "[train][golden]") {
  const Fixture f = load_fixture("adamw_clip");
  AdamWOptions o;
  o.lr = f.scalar("lr", -1);
  o.beta1 = f.scalar("beta1", -1);
  o.beta2 = f.scalar("beta2", -1);
  o.eps = f.scalar("eps", -1);
  o.weight_decay = f.scalar("weight_decay", -1);
  o.clip_grad_norm = f.scalar("clip_grad_norm", -1);
  REQUIRE(attn::check_adamw_options(o).ok());
  const int num_params = static_cast<int>(f.scalar("num_params", 0));
  const int num_steps = static_cast<int>(f.scalar("num_steps", 0));
  REQUIRE(num_params == 3);
  REQUIRE(num_steps == 3);
  std::vector<ParamBuffers> bufs;
  for (int i = 0; i < num_params; ++i) {
    const attn::Tensor& v0 = f.at("value0_p" + std::to_string(i));
    bufs.emplace_back(v0.data.size());
    bufs.back().value = v0.data;
  }
  for (int s = 1; s <= num_steps; ++s) {
    const std::string step = "_s" + std::to_string(s);
    std::vector<AdamWParam> views;
    for (int i = 0; i < num_params; ++i) {
      bufs[i].grad = as_vector(f.at("grad" + step + "_p" + std::to_string(i)));
      views.push_back(bufs[i].view());
    }
    const float norm = attn::global_grad_norm(views);
    const float factor = attn::clip_factor(norm, o.clip_grad_norm);
    require_near({norm}, std::vector<float>{f.scalar("total_norm" + step, -1)}, kTorchAbsTol, kTorchRelTol,
                 "total_norm" + step);
    require_near({factor}, std::vector<float>{f.scalar("clip_factor" + step, -1)}, kTorchAbsTol, kTorchRelTol,
                 "clip_factor" + step);
    attn::adamw_step(views, o, s, factor);
    for (int i = 0; i < num_params; ++i) {
      const std::string key = step + "_p" + std::to_string(i);
      require_near(bufs[i].grad, f.at("clipped_grad" + key).data, kTorchAbsTol, kTorchRelTol,
                   "clipped_grad" + key);
      require_near(bufs[i].value, f.at("value" + key).data, kTorchAbsTol, kTorchRelTol, "value" + key);
      require_near(bufs[i].exp_avg, f.at("exp_avg" + key).data, kTorchAbsTol, kTorchRelTol, "exp_avg" + key);
      require_near(bufs[i].exp_avg_sq, f.at("exp_avg_sq" + key).data, kTorchAbsTol, kTorchRelTol,
                   "exp_avg_sq" + key);
    }
  }
}
