// PretrainedModel (pretrained.h): the tables only looked up by token id (lookup_table.h) attached
// from outside the model — an untied token embedding, Gemma 4's per-layer table — and their bytes.
#include <algorithm>
#include <string>
#include <utility>

#include "model/pretrained.h"

namespace attn {

bool PretrainedModel::lookup_only(const PretrainedConfig& c, TensorRole role) {
  // A tied embedding is also the head, whose product reads every row: it stays in memory.
  return role == TensorRole::kPerLayerEmbed || (role == TensorRole::kEmbed && !c.tie_embeddings);
}

std::uint64_t lookup_only_values(const PretrainedConfig& c) {
  const std::uint64_t v = static_cast<std::uint64_t>(c.vocab_size);
  std::uint64_t n = c.tie_embeddings ? 0 : v * static_cast<std::uint64_t>(c.hidden);
  if (c.per_layer_width > 0) n += v * static_cast<std::uint64_t>(c.layers) * c.per_layer_width;
  return n;
}

Status PretrainedModel::attach_table(const TensorKey& key, const Shape& shape, WeightFormat format,
                                     const std::string& label, std::shared_ptr<const TableRows> rows) {
  const auto it =
      std::find_if(specs_.begin(), specs_.end(), [&](const TensorSpec& s) { return s.key == key; });
  if (it == specs_.end())
    return Status::Error(StatusCode::kUnknownParameter, "this model has no tensor " + key.label());
  if (!lookup_only(config_, key.role) || it->shape.size() != 2 || !rows)
    return Status::Error(StatusCode::kInvalidArgument,
                         "tensor \"" + label + "\" is not only looked up by row: it must be in memory");
  if (shape != it->shape)
    return Status::Error(StatusCode::kShapeMismatch, "tensor \"" + label + "\" must have shape " +
                                                         shape_to_string(it->shape) +
                                                         " for this config, got " + shape_to_string(shape));
  if (!known_format(format) || it->shape[1] % format_block_elements(format) != 0)
    return Status::Error(StatusCode::kInvalidArgument, "tensor \"" + label +
                                                           "\" has an unknown weight format " +
                                                           std::to_string(static_cast<int>(format)) +
                                                           " or rows not a whole number of its blocks");
  LookupTable table =
      LookupTable::outside(format, static_cast<int>(shape[0]), static_cast<int>(shape[1]), std::move(rows));
  ATTN_RETURN_IF_ERROR(table.check_finite(label.c_str()));
  pending_.erase(key);
  stored_.erase(key);  // a copy loaded before into memory goes: nothing else views it (lookup_only)
  if (key.role == TensorRole::kEmbed) {
    embed_ = WeightView{};
    embed_rows_ = std::move(table);
  } else {
    per_layer_.table = std::move(table);
  }
  set_[key] = true;
  return Status::Ok();
}

std::uint64_t PretrainedModel::off_heap_bytes() const {
  std::uint64_t bytes = 0;
  for (const LookupTable* t : {&embed_rows_, &per_layer_.table})
    if (t->outside_memory()) bytes += t->byte_size();
  return bytes;
}

}  // namespace attn
