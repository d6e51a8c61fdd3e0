#include "core/tensor.h"

#include <cmath>
#include <cstring>

namespace attn {

std::int64_t shape_numel(const Shape& shape) {
  std::int64_t n = 1;
  for (int d : shape) n *= d;
  return n;
}

std::string shape_to_string(const Shape& shape) {
  // No iostreams: they would add ~100 KB to the wasm module.
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) out += ',';
  return out + ')';
}

Tensor Tensor::zeros(Shape s) {
  const auto n = static_cast<size_t>(shape_numel(s));
  return Tensor(std::move(s), std::vector<float>(n, 0.0f));
}

namespace {

template <typename T>
Status check_shape_and_size(const Shape& shape, const std::vector<T>& data, const char* what) {
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) {
      return Status::Error(StatusCode::kShapeMismatch, std::string(what) + " has negative dimension " +
                                                           std::to_string(shape[i]) + " in shape " +
                                                           shape_to_string(shape));
    }
    if (shape[i] == 0) {
      return Status::Error(StatusCode::kEmptyInput,
                           std::string(what) + " is empty: shape " + shape_to_string(shape));
    }
  }
  if (static_cast<std::int64_t>(data.size()) != shape_numel(shape)) {
    return Status::Error(StatusCode::kShapeMismatch,
                         std::string(what) + " has " + std::to_string(data.size()) + " values but shape " +
                             shape_to_string(shape) + " needs " + std::to_string(shape_numel(shape)));
  }
  return Status::Ok();
}

}  // namespace

Status check_well_formed(const Tensor& t, const char* what) {
  return check_shape_and_size(t.shape, t.data, what);
}

Status check_well_formed(const BoolTensor& t, const char* what) {
  return check_shape_and_size(t.shape, t.data, what);
}

Status check_finite(const Tensor& t, const char* what) {
  // First a scan that vectorises: a float is non-finite iff its exponent bits are all ones, so an
  // unsigned max over those bits finds any. Only on failure is the offending index looked up.
  std::uint32_t worst = 0;
  for (const float f : t.data) {
    std::uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    const std::uint32_t exponent = bits & 0x7f800000u;
    worst = exponent > worst ? exponent : worst;
  }
  if (worst != 0x7f800000u) return Status::Ok();
  for (size_t i = 0; i < t.data.size(); ++i) {
    if (!std::isfinite(t.data[i])) {
      return Status::Error(StatusCode::kNonFinite, std::string(what) + " contains " +
                                                       (std::isnan(t.data[i]) ? "NaN" : "Inf") +
                                                       " at flat index " + std::to_string(i) +
                                                       " (inputs and weights must be finite)");
    }
  }
  return Status::Ok();
}

Status check_computed(const float* data, std::size_t n, const char* step) {
  std::uint32_t worst = 0;  // the exponent scan of check_finite
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t bits;
    std::memcpy(&bits, data + i, sizeof bits);
    const std::uint32_t exponent = bits & 0x7f800000u;
    worst = exponent > worst ? exponent : worst;
  }
  if (worst != 0x7f800000u) return Status::Ok();
  return Status::Error(StatusCode::kNonFinite,
                       std::string(step) + " overflowed float32 (the inputs or weights are too large)");
}

Status check_additive_mask_values(const Tensor& t, const char* what) {
  for (size_t i = 0; i < t.data.size(); ++i) {
    const float x = t.data[i];
    if (std::isnan(x) || (std::isinf(x) && x > 0)) {
      return Status::Error(StatusCode::kNonFinite, std::string(what) + " contains " +
                                                       (std::isnan(x) ? "NaN" : "+Inf") + " at flat index " +
                                                       std::to_string(i) +
                                                       " (an additive mask may hold -Inf, not NaN or +Inf)");
    }
  }
  return Status::Ok();
}

}  // namespace attn
