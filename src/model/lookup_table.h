// Lookup-only tables: a matrix the model only ever reads one row at a time, by token id (an untied
// token embedding, Gemma 4's per-layer table), may live outside the model's memory — in the wasm
// build, in JS ArrayBuffers outside the 4 GiB heap. The model then asks a TableRows for each row's
// stored bytes when a call needs that row and widens them with the format's own row routine
// (WeightView::widen_row), so a row read from either place gives the same bits.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/status.h"
#include "core/stored_weight.h"

namespace attn {

// Where the rows of a table kept outside the model are.
class TableRows {
 public:
  virtual ~TableRows() = default;
  // Copies row r's stored bytes (`bytes` of them, in the table's format) to dst. The model calls it
  // on the thread running its call (the embeddings are looked up there, never in the thread pool).
  virtual void copy_row(int r, void* dst, std::size_t bytes) const = 0;
};

// A (rows, cols) matrix read by row: through its view when its bytes are in memory, else through
// its source, one row copied into a buffer of its own at a time (a model's calls run one at a time).
class LookupTable {
 public:
  LookupTable() = default;
  explicit LookupTable(const WeightView& in_memory) : view_(in_memory) {}
  // A table whose rows `source` copies out (never packed: rows as the file stores them).
  static LookupTable outside(WeightFormat format, int rows, int cols,
                             std::shared_ptr<const TableRows> source);
  bool empty() const { return view_.empty() && !source_; }
  bool outside_memory() const { return source_ != nullptr; }
  std::uint64_t byte_size() const { return static_cast<std::uint64_t>(view_.rows) * view_.row_bytes(); }
  // out (cols) = row r widened to float32 (r in [0, rows): the caller checked it).
  void widen_row(int r, float* out) const;
  // NON_FINITE naming `name` and the flat index of the first inf or NaN (quantized: of the first
  // element of the first block with a non-finite scale), read row by row from the source.
  Status check_finite(const char* name) const;

 private:
  const void* row_bytes(int r) const;  // row r's stored bytes: in memory, or copied into row_
  WeightView view_;                    // format, rows, cols; data only when the table is in memory
  std::shared_ptr<const TableRows> source_;
  mutable std::vector<std::uint64_t> row_;  // one row from the source (8-byte aligned for any block)
};

}  // namespace attn
