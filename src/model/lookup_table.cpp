// LookupTable (lookup_table.h): a table's rows from memory or from the source that keeps them.
#include "model/lookup_table.h"

#include <string>
#include <utility>

namespace attn {

LookupTable LookupTable::outside(WeightFormat format, int rows, int cols,
                                 std::shared_ptr<const TableRows> source) {
  LookupTable t;
  t.view_.format = format;
  t.view_.rows = rows;
  t.view_.cols = cols;
  t.source_ = std::move(source);
  return t;
}

const void* LookupTable::row_bytes(int r) const {
  const std::size_t bytes = view_.row_bytes();
  row_.resize((bytes + sizeof(std::uint64_t) - 1) / sizeof(std::uint64_t));
  source_->copy_row(r, row_.data(), bytes);
  return row_.data();
}

void LookupTable::widen_row(int r, float* out) const {
  if (!source_) {
    view_.widen_row(r, out);
    return;
  }
  WeightView one = view_;  // the copied row as a one-row matrix: the same routine widens it
  one.rows = 1;
  one.data = row_bytes(r);
  one.widen_row(0, out);
}

Status LookupTable::check_finite(const char* name) const {
  if (!source_) return Status::Ok();  // in memory: StoredWeight::check_finite checked it as it was loaded
  for (int r = 0; r < view_.rows; ++r) {
    const std::int64_t bad = first_non_finite(view_.format, row_bytes(r), view_.cols);
    if (bad < 0) continue;
    const std::string at = std::to_string(static_cast<std::int64_t>(r) * view_.cols + bad);
    if (is_quantized(view_.format))
      return Status::Error(StatusCode::kNonFinite, std::string(name) + " holds a non-finite scale in its " +
                                                       format_name(view_.format) + " block at flat index " +
                                                       at);
    return Status::Error(StatusCode::kNonFinite,
                         std::string(name) + " holds a non-finite value at flat index " + at);
  }
  return Status::Ok();
}

}  // namespace attn
