// PretrainedModel by Hugging Face's tensor names (pretrained.h), for the native tests that read the
// fixtures' safetensors files: each name is turned into its role here and the role-keyed API does
// the work. The library's loaders (src/js/pretrained.js) go by role and take the names from the
// family registry (src/js/architectures/); this table is the tests' copy of the two layouts.
#include <algorithm>
#include <string>

#include "model/pretrained.h"

namespace attn {

namespace {

Status invalid(const std::string& what) {
  return Status::Error(StatusCode::kInvalidArgument, what);
}

struct Named {
  TensorRole role;
  const char* gpt2;   // GPT-2's name, or nullptr
  const char* llama;  // the Llama layout's name, or nullptr
};

// Per-layer names follow "h.<l>." (GPT-2) or "model.layers.<l>." (Llama). With post-norms the
// Llama layout's post_attention_layernorm is the attention output's norm (post_names()).
constexpr Named kNames[] = {
    {TensorRole::kEmbed, "wte.weight", "model.embed_tokens.weight"},
    {TensorRole::kPositions, "wpe.weight", nullptr},
    {TensorRole::kFinalNorm, "ln_f.weight", "model.norm.weight"},
    {TensorRole::kFinalNormBias, "ln_f.bias", nullptr},
    {TensorRole::kUnembed, "lm_head.weight", "lm_head.weight"},
    {TensorRole::kAttnNorm, "ln_1.weight", "input_layernorm.weight"},
    {TensorRole::kAttnNormBias, "ln_1.bias", nullptr},
    {TensorRole::kMlpNorm, "ln_2.weight", "post_attention_layernorm.weight"},
    {TensorRole::kMlpNormBias, "ln_2.bias", nullptr},
    {TensorRole::kPostAttnNorm, nullptr, "post_attention_layernorm.weight"},
    {TensorRole::kPostMlpNorm, nullptr, "post_feedforward_layernorm.weight"},
    {TensorRole::kQ, nullptr, "self_attn.q_proj.weight"},
    {TensorRole::kK, nullptr, "self_attn.k_proj.weight"},
    {TensorRole::kV, nullptr, "self_attn.v_proj.weight"},
    {TensorRole::kQkv, "attn.c_attn.weight", "self_attn.qkv_proj.weight"},
    {TensorRole::kQBias, nullptr, "self_attn.q_proj.bias"},
    {TensorRole::kKBias, nullptr, "self_attn.k_proj.bias"},
    {TensorRole::kVBias, nullptr, "self_attn.v_proj.bias"},
    {TensorRole::kQkvBias, "attn.c_attn.bias", nullptr},
    {TensorRole::kO, "attn.c_proj.weight", "self_attn.o_proj.weight"},
    {TensorRole::kOBias, "attn.c_proj.bias", nullptr},
    {TensorRole::kQNorm, nullptr, "self_attn.q_norm.weight"},
    {TensorRole::kKNorm, nullptr, "self_attn.k_norm.weight"},
    {TensorRole::kGate, nullptr, "mlp.gate_proj.weight"},
    {TensorRole::kUp, "mlp.c_fc.weight", "mlp.up_proj.weight"},
    {TensorRole::kGateUp, nullptr, "mlp.gate_up_proj.weight"},
    {TensorRole::kDown, "mlp.c_proj.weight", "mlp.down_proj.weight"},
    {TensorRole::kUpBias, "mlp.c_fc.bias", nullptr},
    {TensorRole::kDownBias, "mlp.c_proj.bias", nullptr},
};

// The name of a key for a config; empty when the layout has none.
std::string name_of(const PretrainedConfig& c, const TensorKey& key) {
  const bool gpt2 = c.arch == PretrainedArch::kGpt2;
  const char* name = nullptr;
  for (const Named& n : kNames)
    if (n.role == key.role) name = gpt2 ? n.gpt2 : n.llama;
  if (!gpt2 && c.post_norms && key.role == TensorRole::kMlpNorm) name = "pre_feedforward_layernorm.weight";
  if (!name) return "";
  if (key.layer < 0) return name;
  return (gpt2 ? "h." : "model.layers.") + std::to_string(key.layer) + "." + name;
}

// GPT-2's Conv1D weights are stored (in, out).
bool conv1d(const PretrainedConfig& c, TensorRole r) {
  return c.arch == PretrainedArch::kGpt2 &&
         (r == TensorRole::kQkv || r == TensorRole::kO || r == TensorRole::kUp || r == TensorRole::kDown);
}

}  // namespace

// The key of a name this config's model has (GPT-2's with or without "transformer.").
static bool key_of(const PretrainedConfig& c, const std::vector<TensorSpec>& specs, const std::string& given,
                   TensorKey& key) {
  const std::string name =
      c.arch == PretrainedArch::kGpt2 && given.rfind("transformer.", 0) == 0 ? given.substr(12) : given;
  for (const TensorSpec& s : specs) {
    if (name_of(c, s.key) == name) {
      key = s.key;
      return true;
    }
  }
  return false;
}

std::vector<std::pair<std::string, Shape>> pretrained_hf_names(const PretrainedConfig& c,
                                                               const std::vector<TensorSpec>& specs) {
  std::vector<std::pair<std::string, Shape>> out;
  for (const TensorSpec& s : specs) {
    Shape shape = s.shape;
    if (conv1d(c, s.key.role)) std::swap(shape[0], shape[1]);
    out.emplace_back(name_of(c, s.key), shape);
  }
  return out;
}

Status PretrainedModel::begin_tensor(const std::string& name, const Shape& shape, WeightFormat format,
                                     void*& data) {
  TensorKey key;
  if (!key_of(config_, specs_, name, key))
    return Status::Error(StatusCode::kUnknownParameter, "this model has no tensor \"" + name + "\"");
  return begin_tensor(key, shape, format, conv1d(config_, key.role), name, data);
}

Status PretrainedModel::end_tensor(const std::string& name) {
  TensorKey key;
  if (!key_of(config_, specs_, name, key)) return invalid("tensor \"" + name + "\" was not begun");
  return end_tensor(key);
}

Status PretrainedModel::set_tensor(const std::string& name, const Tensor& value) {
  ATTN_RETURN_IF_ERROR(check_well_formed(value, name.c_str()));
  void* data = nullptr;
  ATTN_RETURN_IF_ERROR(begin_tensor(name, value.shape, WeightFormat::kF32, data));
  std::copy(value.data.begin(), value.data.end(), static_cast<float*>(data));
  return end_tensor(name);
}

std::vector<std::string> PretrainedModel::missing_tensors() const {
  std::vector<std::string> out;
  for (const TensorKey& k : missing()) out.push_back(name_of(config_, k));
  return out;
}

Status PretrainedModel::read_rows(const std::string& name, int first, int count,
                                  std::vector<float>& out) const {
  TensorKey key;
  if (!key_of(config_, specs_, name, key)) return invalid("this model has no tensor \"" + name + "\"");
  return read_rows(key, first, count, out);
}

}  // namespace attn
