#include "safetensors_writer.h"

#include <cmath>
#include <cstring>

namespace presets {

std::uint16_t to_half(float x) {
  std::uint32_t f;
  std::memcpy(&f, &x, sizeof f);
  const std::uint32_t sign = (f >> 16) & 0x8000u;
  const std::uint32_t abs = f & 0x7fffffffu;
  if (abs >= 0x7f800000u)
    return static_cast<std::uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  if (abs >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds past 65504: inf
  if (abs < 0x38800000u) {  // below the smallest normal half: a subnormal (or zero), rounded
    const float scaled = std::fabs(x) * 16777216.0f;  // 2^24: units of the smallest subnormal
    const auto m = static_cast<std::uint32_t>(std::nearbyint(scaled));
    return static_cast<std::uint16_t>(sign | m);
  }
  const std::uint32_t exp = ((abs >> 23) - 112) << 10;  // rebias 127 → 15
  const std::uint32_t mant = abs & 0x7fffffu;
  std::uint32_t h = exp | (mant >> 13);
  const std::uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // nearest, ties to even
  return static_cast<std::uint16_t>(sign | h);
}

float from_half(std::uint16_t h) {
  const std::uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0) return (sign ? -1.0f : 1.0f) * static_cast<float>(mant) * std::ldexp(1.0f, -24);
  std::uint32_t f = exp == 31 ? sign | 0x7f800000u | (mant << 13) : sign | ((exp + 112) << 23) | (mant << 13);
  float out;
  std::memcpy(&out, &f, sizeof out);
  return out;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      static const char* hex = "0123456789abcdef";
      out += "\\u00";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::vector<std::uint8_t> write_safetensors(
    const std::vector<std::string>& names, const std::vector<attn::Tensor>& tensors,
    const std::vector<std::pair<std::string, std::string>>& metadata) {
  // 1. The header JSON: metadata first, then each tensor's dtype, shape and byte range.
  std::string header = "{\"__metadata__\":{";
  for (std::size_t i = 0; i < metadata.size(); ++i)
    header += (i ? "," : "") + json_string(metadata[i].first) + ":" + json_string(metadata[i].second);
  header += "}";
  std::uint64_t offset = 0;
  for (std::size_t k = 0; k < tensors.size(); ++k) {
    std::string shape;
    for (std::size_t a = 0; a < tensors[k].shape.size(); ++a)
      shape += (a ? "," : "") + std::to_string(tensors[k].shape[a]);
    const std::uint64_t bytes = 2 * static_cast<std::uint64_t>(tensors[k].data.size());
    header += "," + json_string(names[k]) + ":{\"dtype\":\"F16\",\"shape\":[" + shape +
              "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + bytes) + "]}";
    offset += bytes;
  }
  header += "}";
  while (header.size() % 8) header += ' ';
  // 2. Length, header, data (little-endian halves).
  std::vector<std::uint8_t> out;
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<std::uint8_t>(static_cast<std::uint64_t>(header.size()) >> (8 * i)));
  out.insert(out.end(), header.begin(), header.end());
  for (const attn::Tensor& t : tensors)
    for (float x : t.data) {
      const std::uint16_t h = to_half(x);
      out.push_back(static_cast<std::uint8_t>(h & 0xff));
      out.push_back(static_cast<std::uint8_t>(h >> 8));
    }
  return out;
}

}  // namespace presets
