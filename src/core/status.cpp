#include "core/status.h"

namespace attn {

const char* status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kInvalidArgument: return "INVALID_ARGUMENT";
    case StatusCode::kShapeMismatch: return "SHAPE_MISMATCH";
    case StatusCode::kHeadsDoNotDivide: return "HEADS_DO_NOT_DIVIDE";
    case StatusCode::kEmptyInput: return "EMPTY_INPUT";
    case StatusCode::kNonFinite: return "NON_FINITE";
    case StatusCode::kTooLarge: return "TOO_LARGE";
    case StatusCode::kInvalidMask: return "INVALID_MASK";
    case StatusCode::kUnknownParameter: return "UNKNOWN_PARAMETER";
  }
  return "UNKNOWN";
}

}  // namespace attn
