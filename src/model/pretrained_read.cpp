// PretrainedModel::read_rows (pretrained.h): a loaded tensor read back as float32, from its stored
// matrix or from the float32 place its vector was widened into.
#include <string>

#include "model/pretrained.h"

namespace attn {

namespace {

Status invalid(const std::string& what) {
  return Status::Error(StatusCode::kInvalidArgument, what);
}

}  // namespace

Status PretrainedModel::read_rows(const TensorKey& key, int first, int count, std::vector<float>& out) const {
  const auto known = set_.find(key);
  if (known == set_.end()) return invalid("this model has no tensor " + key.label());
  if (!known->second) return invalid("tensor " + key.label() + " was never set");
  const Shape* shape = nullptr;
  for (const TensorSpec& s : specs_)
    if (s.key == key) shape = &s.shape;
  const bool matrix = shape->size() == 2;
  const int rows = matrix ? static_cast<int>((*shape)[0]) : 1;
  const int cols = matrix ? static_cast<int>((*shape)[1]) : static_cast<int>((*shape)[0]);
  if (first < 0 || count < 0 || first > rows || count > rows - first)
    return invalid("rows [" + std::to_string(first) + ", " + std::to_string(first + count) +
                   ") are outside tensor " + key.label() + "'s " + std::to_string(rows) + " rows");
  const LookupTable* table = key.role == TensorRole::kEmbed           ? &embed_rows_
                             : key.role == TensorRole::kPerLayerEmbed ? &per_layer_.table
                                                                      : nullptr;
  if (matrix && table && table->outside_memory()) {  // rows kept outside memory (attach_table)
    out.assign(static_cast<std::size_t>(count) * cols, 0.0f);
    for (int r = 0; r < count; ++r)
      table->widen_row(first + r, out.data() + static_cast<std::size_t>(r) * cols);
    return Status::Ok();
  }
  if (matrix) {
    const WeightView w = stored_.at(key).view();  // GPT-2's Conv1D weights already transposed: (out, in)
    out.assign(static_cast<std::size_t>(count) * w.cols, 0.0f);
    for (int r = 0; r < count; ++r) w.widen_row(first + r, out.data() + static_cast<std::size_t>(r) * w.cols);
    return Status::Ok();
  }
  // A vector: widened into its place by use().
  Tensor v;
  const Layer* L = key.layer >= 0 ? &layers_[static_cast<std::size_t>(key.layer)] : nullptr;
  if (const Tensor* slot = vector_slot(key))
    v = *slot;
  else if (L && key.role == TensorRole::kOBias)
    ATTN_RETURN_IF_ERROR(L->mixer.attn.get_parameter("out_proj.bias", v));
  else if (L && key.role == TensorRole::kQkvBias)
    ATTN_RETURN_IF_ERROR(L->mixer.attn.get_parameter("in_proj_bias", v));
  else if (L && (key.role == TensorRole::kQNorm || key.role == TensorRole::kKNorm))
    v = L->mixer.attn.qk_norm_weight(key.role == TensorRole::kKNorm);
  else if (L && (key.role == TensorRole::kQBias || key.role == TensorRole::kKBias ||
                 key.role == TensorRole::kVBias)) {
    // Qwen2's separate biases: their segment of in_proj_bias [b_q; b_k; b_v], as use() put them
    Tensor bias;
    ATTN_RETURN_IF_ERROR(L->mixer.attn.get_parameter("in_proj_bias", bias));
    const MultiHeadAttention& a = L->mixer.attn;  // its sizes: Gemma 4's differ per layer
    const int qk = config_.heads * a.head_dim(), kv = a.num_kv_heads() * a.head_dim();
    const int at = key.role == TensorRole::kQBias ? 0 : key.role == TensorRole::kKBias ? qk : qk + kv;
    if (at + cols <= static_cast<int>(bias.data.size()))
      v.data.assign(bias.data.begin() + at, bias.data.begin() + at + cols);
  }
  if (static_cast<int>(v.data.size()) != cols)
    return invalid("tensor " + key.label() + " cannot be read back");
  out = v.data;
  return Status::Ok();
}

}  // namespace attn
