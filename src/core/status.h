// Status: how every fallible core function reports failure. No exception crosses the API.
#pragma once
#include <string>
#include <utility>

namespace attn {

// Stable numeric codes: the wasm binding passes them to JS, where the wrapper maps them to the
// string codes of AttentionError (see status_code_name).
enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument = 1,   // an option is out of range (dropout p, eps, scale, numHeads < 1, ...)
  kShapeMismatch = 2,     // tensor ranks/sizes disagree
  kHeadsDoNotDivide = 3,  // numHeads does not divide embedDim (and no explicit headDim was given)
  kEmptyInput = 4,        // a sequence or dimension of length 0
  kNonFinite = 5,         // NaN or Inf in an input (additive masks may hold -inf)
  kTooLarge = 6,          // the buffers needed would exceed the memory limit (memory_limit.h)
  kInvalidMask = 7,       // a mask of the wrong kind or shape
  kUnknownParameter = 8,  // a state-dict name the module does not have
};

// Upper-case names used in messages and as AttentionError.code in JS.
const char* status_code_name(StatusCode code);

// A number for an error message: up to 6 decimals, "NaN", "Infinity". Not std::to_string(double),
// whose printf machinery would add ~8 KB to the wasm module.
std::string format_number(double x);

struct Status {
  StatusCode code = StatusCode::kOk;
  std::string message;

  bool ok() const { return code == StatusCode::kOk; }
  static Status Ok() { return {}; }
  static Status Error(StatusCode c, std::string msg) { return {c, std::move(msg)}; }
};

// Early-return helper: `ATTN_RETURN_IF_ERROR(check_x(...));`
#define ATTN_RETURN_IF_ERROR(expr)               \
  do {                                           \
    ::attn::Status attn_status_ = (expr);        \
    if (!attn_status_.ok()) return attn_status_; \
  } while (0)

}  // namespace attn
