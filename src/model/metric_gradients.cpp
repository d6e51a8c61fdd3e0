// The metric of metric_gradients.h: its checks, its value and its gradient with respect to one row of
// pre-cap logits, shared by both model classes.
#include "model/metric_gradients.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace attn {

namespace {

Status invalid(const std::string& what) {
  return Status::Error(StatusCode::kInvalidArgument, what);
}

}  // namespace

Status check_metric(const MetricSpec& m, int t, int vocab) {
  const int kind = static_cast<int>(m.kind);
  if (kind < 0 || kind > 2) return invalid("metric kind " + std::to_string(kind) + " does not exist");
  const int position = m.position < 0 ? t - 1 : m.position;
  if (m.position < -1 || position >= t)
    return invalid("position " + std::to_string(m.position) + " is outside [0, " + std::to_string(t) + ")");
  if (m.token < 0 || m.token >= vocab)
    return invalid("token " + std::to_string(m.token) + " is outside [0, " + std::to_string(vocab) + ")");
  if (m.against < -1 || m.against >= vocab)
    return invalid("against " + std::to_string(m.against) + " is outside [0, " + std::to_string(vocab) + ")");
  if (m.against >= 0 && m.kind != MetricKind::kLogitDiff)
    return invalid("against is the logit difference's option: a probability metric has none");
  return Status::Ok();
}

// kLogitDiff: ±1 at token / against. The probability metrics on capped = c · tanh(z / c):
//   p = softmax(capped)[token];  ∂ log p / ∂capped_j = [j = token] − softmax_j;  ∂p = p · ∂ log p;
//   ∂capped_j / ∂z_j = 1 − tanh²(z_j / c)  (1 without a cap).
double metric_value_and_grad(const MetricSpec& m, int vocab, const float* logits, float final_softcap,
                             float* dlogits) {
  std::fill(dlogits, dlogits + vocab, 0.0f);
  if (m.kind == MetricKind::kLogitDiff) {
    dlogits[m.token] = 1.0f;
    if (m.against < 0) return logits[m.token];
    dlogits[m.against] -= 1.0f;  // against == token: the difference is 0 and so is its gradient
    return static_cast<double>(logits[m.token]) - logits[m.against];
  }
  std::vector<double> capped(static_cast<std::size_t>(vocab));  // (V) the output distribution's logits
  double top = -INFINITY;
  for (int j = 0; j < vocab; ++j) {
    const double z = logits[j];
    capped[j] = final_softcap > 0 ? final_softcap * std::tanh(z / final_softcap) : z;
    top = std::max(top, capped[j]);
  }
  double sum = 0;
  for (int j = 0; j < vocab; ++j) sum += std::exp(capped[j] - top);
  const double log_p = capped[m.token] - top - std::log(sum);
  const double p = std::exp(log_p), outer = m.kind == MetricKind::kProbability ? p : 1.0;
  for (int j = 0; j < vocab; ++j) {
    const double softmax_j = std::exp(capped[j] - top) / sum;
    double g = ((j == m.token ? 1.0 : 0.0) - softmax_j) * outer;
    if (final_softcap > 0) {
      const double th = std::tanh(static_cast<double>(logits[j]) / final_softcap);
      g *= 1.0 - th * th;
    }
    dlogits[j] = static_cast<float>(g);
  }
  return m.kind == MetricKind::kProbability ? p : log_p;
}

}  // namespace attn
