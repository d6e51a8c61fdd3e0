#include "core/status.h"

#include <cmath>

namespace attn {

const char* status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "OK";
    case StatusCode::kInvalidArgument:
      return "INVALID_ARGUMENT";
    case StatusCode::kShapeMismatch:
      return "SHAPE_MISMATCH";
    case StatusCode::kHeadsDoNotDivide:
      return "HEADS_DO_NOT_DIVIDE";
    case StatusCode::kEmptyInput:
      return "EMPTY_INPUT";
    case StatusCode::kNonFinite:
      return "NON_FINITE";
    case StatusCode::kTooLarge:
      return "TOO_LARGE";
    case StatusCode::kInvalidMask:
      return "INVALID_MASK";
    case StatusCode::kUnknownParameter:
      return "UNKNOWN_PARAMETER";
  }
  return "UNKNOWN";
}

std::string format_number(double x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "Infinity" : "-Infinity";
  const std::string sign = x < 0 ? "-" : "";
  x = std::fabs(x);
  if (x >= 1e15) return sign + "1e" + std::to_string(static_cast<int>(std::log10(x)));
  long long whole = static_cast<long long>(x);
  long long micro = std::llround((x - static_cast<double>(whole)) * 1e6);
  if (micro == 1000000) {
    ++whole;
    micro = 0;
  }
  std::string out = sign + std::to_string(whole);
  if (micro == 0)
    return x > 0 && whole == 0 ? sign + "0.000000" : out;  // tiny values keep their scale visible
  std::string frac = std::to_string(micro);
  frac.insert(0, 6 - frac.size(), '0');
  while (frac.back() == '0') frac.pop_back();
  return out + "." + frac;
}

}  // namespace attn
