// _constants(): the numbers the JS wrapper shares with C++, as the compiled binding sees them, so
// that tests/js/constants.test.mjs can check src/js/constants.js (generated from the same enums by
// scripts/gen-constants.mjs) against the real values. Test-only and cold: the wrapper never calls
// it (it imports constants.js, which it needs before init()). Names as the generator writes them;
// where the core has its own name function (status_code_name, format_name, role_name) the name
// comes from it; the weight types are the rows of the core's own table (kernels/weight_types.h).
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <initializer_list>
#include <string>
#include <utility>

#include "core/status.h"
#include "core/stored_weight.h"
#include "kernels/weight_types.h"
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

// GGML_TYPE: every row of the type table (kernels/weight_types.h) by name, with the fields the JS reads.
val ggml_types_js() {
  val out = val::object();
  for (int i = 0; i < attn::kernels::ggml_type_count(); ++i) {
    const attn::kernels::GgmlTypeInfo& t = attn::kernels::ggml_types()[i];
    val row = val::object();
    row.set("id", t.id);
    row.set("name", std::string(t.name));
    row.set("blockElements", t.block_elements);
    row.set("blockBytes", t.block_bytes);
    row.set("dequantized", t.dequantized);
    row.set("int8", t.int8 != nullptr);
    out.set(t.name, row);
  }
  return out;
}

// WEIGHT_FORMAT: every number below kWeightFormatCount that is a format, by format_name.
val weight_formats_js() {
  val out = val::object();
  for (int f = 0; f < attn::kWeightFormatCount; ++f)
    if (attn::known_format(static_cast<attn::WeightFormat>(f)))
      out.set(attn::format_name(static_cast<attn::WeightFormat>(f)), f);
  return out;
}

val constants_js() {
  using attn::StatusCode;
  val status = val::object();
  for (StatusCode c : {StatusCode::kOk, StatusCode::kInvalidArgument, StatusCode::kShapeMismatch,
                       StatusCode::kHeadsDoNotDivide, StatusCode::kEmptyInput, StatusCode::kNonFinite,
                       StatusCode::kTooLarge, StatusCode::kInvalidMask, StatusCode::kUnknownParameter})
    status.set(attn::status_code_name(c), static_cast<int>(c));

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
  out.set("MIXER_KIND", table<attn::MixerKind>({{"ATTENTION", attn::MixerKind::kAttention},
                                                {"SHORT_CONV", attn::MixerKind::kShortConv},
                                                {"DELTA_NET", attn::MixerKind::kDeltaNet}}));
  out.set("GGML_TYPE", ggml_types_js());
  out.set("WEIGHT_FORMAT", weight_formats_js());
  val roles = val::object();
  for (int r = 0; r < static_cast<int>(attn::TensorRole::kCount); ++r)
    roles.set(attn::role_name(static_cast<attn::TensorRole>(r)), r);
  out.set("TENSOR_ROLE", roles);
  return out;
}

}  // namespace

EMSCRIPTEN_BINDINGS(attention_constants) {
  emscripten::function("_constants", &constants_js);
}
