#include "core/positional.h"

#include <cmath>
#include <string>

#include "core/memory_limit.h"
#include "core/rng.h"

namespace attn {

namespace {

Status check_table_size(int length, int d_model, const char* what) {
  if (length <= 0 || d_model <= 0) {
    return Status::Error(StatusCode::kEmptyInput,
                         std::string(what) + " needs length > 0 and dModel > 0, got length " +
                             std::to_string(length) + ", dModel " + std::to_string(d_model));
  }
  return check_allocation(static_cast<std::uint64_t>(length) * static_cast<std::uint64_t>(d_model), what);
}

}  // namespace

Status sinusoidal_encoding(int length, int d_model, double base, Tensor& out) {
  ATTN_RETURN_IF_ERROR(check_table_size(length, d_model, "sinusoidal encoding"));
  if (!(base > 1.0) || !std::isfinite(base)) {
    return Status::Error(StatusCode::kInvalidArgument,
                         "sinusoidal encoding base must be a finite number > 1, got " + format_number(base));
  }
  Tensor pe = Tensor::zeros({length, d_model});  // pe: (length, d_model)
  for (int pair = 0; 2 * pair < d_model; ++pair) {
    // Frequency of the pair (2i, 2i+1): 1 / base^(2i / d_model). Computed in double, rounded once.
    const double inv_freq = std::pow(base, -2.0 * pair / d_model);
    for (int pos = 0; pos < length; ++pos) {
      const double angle = pos * inv_freq;
      pe.data[static_cast<size_t>(pos) * d_model + 2 * pair] = static_cast<float>(std::sin(angle));
      // Odd d_model: the last pair has no cosine column (documented in positional.h).
      if (2 * pair + 1 < d_model) {
        pe.data[static_cast<size_t>(pos) * d_model + 2 * pair + 1] = static_cast<float>(std::cos(angle));
      }
    }
  }
  out = std::move(pe);
  return Status::Ok();
}

Status LearnedPositionalEncoding::create(int max_length, int d_model, std::uint64_t seed,
                                         LearnedPositionalEncoding& out) {
  ATTN_RETURN_IF_ERROR(check_table_size(max_length, d_model, "learned positional encoding"));
  Tensor table = Tensor::zeros({max_length, d_model});  // table: (max_length, d_model)
  for (size_t i = 0; i < table.data.size(); ++i) table.data[i] = approx_normal(seed, i);
  out.table_ = std::move(table);
  return Status::Ok();
}

Status LearnedPositionalEncoding::set_table(const Tensor& table) {
  ATTN_RETURN_IF_ERROR(check_well_formed(table, "positional table"));
  if (table.shape != table_.shape) {
    return Status::Error(StatusCode::kShapeMismatch, "positional table must have shape " +
                                                         shape_to_string(table_.shape) + ", got " +
                                                         shape_to_string(table.shape));
  }
  ATTN_RETURN_IF_ERROR(check_finite(table, "positional table"));
  table_ = table;
  return Status::Ok();
}

Status LearnedPositionalEncoding::encode(int length, Tensor& out) const {
  const int max_length = table_.dim(0), d_model = table_.dim(1);
  if (length <= 0 || length > max_length) {
    return Status::Error(StatusCode::kInvalidArgument,
                         "learned positional encoding has " + std::to_string(max_length) +
                             " positions; cannot encode length " + std::to_string(length));
  }
  out = Tensor({length, d_model},
               std::vector<float>(table_.data.begin(),
                                  table_.data.begin() + static_cast<std::ptrdiff_t>(length) * d_model));
  return Status::Ok();
}

}  // namespace attn
