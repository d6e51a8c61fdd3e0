// _constants(): the numbers the JS wrapper shares with C++, as the compiled binding sees them, so
// that tests/js/constants.test.mjs can check src/js/constants.js (generated from the same enums by
// scripts/gen-constants.mjs) against the real values. Test-only and cold: the wrapper never calls
// it (it imports constants.js, which it needs before init()). Names as the generator writes them;
// where the core has its own name function (status_code_name, format_name) the name comes from it.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <initializer_list>
#include <utility>

#include "core/status.h"
#include "core/stored_weight.h"
#include "model/pretrained.h"
#include "model/tiny_transformer.h"
#include "wasm/fast_path.h"

using emscripten::val;

namespace {

template <class E>
val table(std::initializer_list<std::pair<const char*, E>> entries) {
  val out = val::object();
  for (const auto& [name, value] : entries) out.set(name, static_cast<int>(value));
  return out;
}

val constants_js() {
  using attn::StatusCode;
  val status = val::object();
  for (StatusCode c : {StatusCode::kOk, StatusCode::kInvalidArgument, StatusCode::kShapeMismatch,
                       StatusCode::kHeadsDoNotDivide, StatusCode::kEmptyInput, StatusCode::kNonFinite,
                       StatusCode::kTooLarge, StatusCode::kInvalidMask, StatusCode::kUnknownParameter})
    status.set(attn::status_code_name(c), static_cast<int>(c));
  val formats = val::object();
  for (int f = 0; f < attn::kWeightFormatCount; ++f)
    formats.set(attn::format_name(static_cast<attn::WeightFormat>(f)), f);

  using attn::PositionalKind, attn::NormKind, attn::PretrainedArch, attn_js::FastFlag, attn_js::FastIo;
  val out = val::object();
  out.set("STATUS_CODE", status);
  out.set("POSITIONAL_KIND", table<PositionalKind>({{"none", PositionalKind::kNone},
                                                    {"learned", PositionalKind::kLearned},
                                                    {"sinusoidal", PositionalKind::kSinusoidal},
                                                    {"rope", PositionalKind::kRope},
                                                    {"alibi", PositionalKind::kAlibi}}));
  out.set("NORM_KIND",
          table<NormKind>({{"none", NormKind::kNone}, {"pre", NormKind::kPre}, {"post", NormKind::kPost}}));
  out.set("WEIGHT_FORMAT", formats);
  out.set("PRETRAINED_ARCH",
          table<PretrainedArch>({{"GPT2", PretrainedArch::kGpt2}, {"LLAMA", PretrainedArch::kLlama}}));
  using QkNorm = attn::MhaConfig::QkNorm;
  out.set("QK_NORM",
          table<QkNorm>(
              {{"none", QkNorm::kNone}, {"perHead", QkNorm::kPerHead}, {"allHeads", QkNorm::kAllHeads}}));
  out.set("FAST_FLAG", table<FastFlag>({{"KEY", FastFlag::kKey},
                                        {"VALUE", FastFlag::kValue},
                                        {"CAUSAL", FastFlag::kCausal},
                                        {"NEED_WEIGHTS", FastFlag::kNeedWeights},
                                        {"AVERAGE_WEIGHTS", FastFlag::kAverageWeights},
                                        {"SCALE", FastFlag::kScale}}));
  out.set("FAST_IO", table<FastIo>({{"INPUT_STRIDE", FastIo::kInputStride},
                                    {"OUT", FastIo::kOut},
                                    {"OUT_OUTPUT_PTR", FastIo::kOutOutputPtr},
                                    {"OUT_OUTPUT_LENGTH", FastIo::kOutOutputLength},
                                    {"OUT_WEIGHTS_PTR", FastIo::kOutWeightsPtr},
                                    {"OUT_WEIGHTS_LENGTH", FastIo::kOutWeightsLength},
                                    {"OUT_WEIGHTS_RANK", FastIo::kOutWeightsRank},
                                    {"OUT_WEIGHTS_DIMS", FastIo::kOutWeightsDims},
                                    {"OUT_END", FastIo::kOutEnd},
                                    {"SIZE", FastIo::kSize}}));
  return out;
}

}  // namespace

EMSCRIPTEN_BINDINGS(attention_constants) {
  emscripten::function("_constants", &constants_js);
}
