// A safetensors file in the layout TinyTransformer.toSafetensors() writes and fromSafetensors reads
// (src/js/formats/safetensors.js): 8-byte little-endian header length, a JSON header padded with spaces to a
// multiple of 8, then every tensor in state-dict order. Here the tensors are F16 (round to nearest
// even), which halves the presets' size; `__metadata__` holds the format, the model config and the
// preset's description, each a JSON string.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace presets {

// float → IEEE binary16 bits, round to nearest even (overflow → ±inf, which callers refuse).
std::uint16_t to_half(float x);
float from_half(std::uint16_t h);

// JSON string literal of `s` (quotes, escapes).
std::string json_string(const std::string& s);

// The file's bytes. metadata: (key, value-as-string) pairs, in order.
std::vector<std::uint8_t> write_safetensors(const std::vector<std::string>& names,
                                            const std::vector<attn::Tensor>& tensors,
                                            const std::vector<std::pair<std::string, std::string>>& metadata);

}  // namespace presets
