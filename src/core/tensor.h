// Tensor and BoolTensor: owning, row-major, contiguous buffers with a shape.
// The core keeps tensors deliberately simple (a shape and a flat vector) so the binding can copy
// them in and out of the wasm heap with one memcpy each.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace attn {

using Shape = std::vector<int>;

// Number of elements of a shape (1 for a scalar shape {}), as 64-bit so products cannot overflow.
std::int64_t shape_numel(const Shape& shape);
// "(2, 3, 4)"
std::string shape_to_string(const Shape& shape);

struct Tensor {
  Shape shape;
  std::vector<float> data;  // row-major, data.size() == shape_numel(shape)

  Tensor() = default;
  Tensor(Shape s, std::vector<float> d) : shape(std::move(s)), data(std::move(d)) {}
  static Tensor zeros(Shape s);

  int rank() const { return static_cast<int>(shape.size()); }
  int dim(int axis) const { return shape[axis < 0 ? shape.size() + axis : axis]; }
  std::int64_t numel() const { return shape_numel(shape); }
  bool empty() const { return data.empty(); }
};

// A boolean mask: 1 = may attend, 0 = masked. Row-major like Tensor.
struct BoolTensor {
  Shape shape;
  std::vector<std::uint8_t> data;

  int rank() const { return static_cast<int>(shape.size()); }
  std::int64_t numel() const { return shape_numel(shape); }
};

// Checks that data.size() matches the shape and that no dimension is zero or negative.
// `what` names the tensor in the message ("query", "key_padding_mask", ...).
Status check_well_formed(const Tensor& t, const char* what);
Status check_well_formed(const BoolTensor& t, const char* what);

// NaN/Inf policy: inputs and weights must be finite (kNonFinite names the tensor and flat index).
// Additive masks may contain -inf (meaning "masked") but not NaN or +inf.
Status check_finite(const Tensor& t, const char* what);
// A value computed from finite inputs: a non-finite one means an intermediate overflowed float32
// (kNonFinite naming `step`, e.g. "multi-head attention: the scores q·kᵀ·scale"). Never a quiet NaN.
Status check_computed(const float* data, std::size_t n, const char* step);  // no string built unless it fails
inline Status check_computed(const float* data, std::size_t n, const std::string& step) {
  return check_computed(data, n, step.c_str());
}
Status check_additive_mask_values(const Tensor& t, const char* what);

}  // namespace attn
