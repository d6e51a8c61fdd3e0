// Header-only loader for the PyTorch golden fixtures in tests/golden/fixtures/.
//
// File format (tests/golden/README.md), one tensor per line:
//   <name> <ndim> <d0> ... <d_{ndim-1}> : <v0> <v1> ...
// '#' lines are comments (the first one says which module and case); scalars have ndim 0; values
// may be "inf", "-inf" or "nan" (additive masks hold -inf), so they are parsed with strtof rather
// than operator>>, which rejects "inf" in libstdc++.
//
// ATTN_GOLDEN_DIR is a compile definition (tests/cpp/CMakeLists.txt). Under wasm the test binary
// is linked with NODERAWFS, so a plain std::ifstream reads the same files as natively.
// Loading problems throw std::runtime_error: Catch2 reports them as a failed test with the message.
#pragma once
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/tensor.h"

#ifndef ATTN_GOLDEN_DIR
#error "ATTN_GOLDEN_DIR must point at tests/golden/fixtures (set by tests/cpp/CMakeLists.txt)"
#endif

namespace golden {

struct Fixture {
  std::string name;
  std::string description;  // the first comment line, without "# "
  std::map<std::string, attn::Tensor> tensors;

  bool has(const std::string& key) const { return tensors.count(key) != 0; }

  const attn::Tensor& at(const std::string& key) const {
    auto it = tensors.find(key);
    if (it == tensors.end()) {
      throw std::runtime_error("fixture " + name + " has no tensor '" + key + "'");
    }
    return it->second;
  }

  // A rank-0 (or one-element) tensor as a float; `def` when absent.
  float scalar(const std::string& key, float def) const {
    if (!has(key)) return def;
    const attn::Tensor& t = at(key);
    if (t.data.size() != 1) {
      throw std::runtime_error("fixture " + name + ": '" + key + "' is not a scalar");
    }
    return t.data[0];
  }

  bool flag(const std::string& key, bool def = false) const { return scalar(key, def ? 1.0f : 0.0f) != 0.0f; }

  // A 0/1 float tensor (the fixtures' convention: 1 = may attend / real token) as a BoolTensor.
  attn::BoolTensor as_bool(const std::string& key) const {
    const attn::Tensor& t = at(key);
    attn::BoolTensor b;
    b.shape = t.shape;
    b.data.reserve(t.data.size());
    for (float v : t.data) {
      if (v != 0.0f && v != 1.0f) {
        throw std::runtime_error("fixture " + name + ": '" + key + "' is not a 0/1 mask");
      }
      b.data.push_back(v != 0.0f ? 1 : 0);
    }
    return b;
  }
};

namespace detail {

inline float parse_float(const std::string& token, const std::string& where) {
  const char* begin = token.c_str();
  char* end = nullptr;
  float v = std::strtof(begin, &end);  // accepts "inf", "-inf", "nan"
  if (end == begin || *end != '\0') throw std::runtime_error(where + ": bad number '" + token + "'");
  return v;
}

inline int parse_dim(const std::string& token, const std::string& where) {
  const char* begin = token.c_str();
  char* end = nullptr;
  long v = std::strtol(begin, &end, 10);
  if (end == begin || *end != '\0' || v < 0) {
    throw std::runtime_error(where + ": bad dimension '" + token + "'");
  }
  return static_cast<int>(v);
}

// Parses one "<name> <ndim> <dims...> : <values...>" line into (name, tensor).
inline std::pair<std::string, attn::Tensor> parse_line(const std::string& line, const std::string& where) {
  std::istringstream in(line);
  std::string name, token;
  in >> name >> token;
  const int ndim = parse_dim(token, where);
  attn::Tensor t;
  for (int i = 0; i < ndim; ++i) {
    if (!(in >> token)) throw std::runtime_error(where + ": missing dimensions for " + name);
    t.shape.push_back(parse_dim(token, where));
  }
  if (!(in >> token) || token != ":") throw std::runtime_error(where + ": expected ':' in " + name);
  while (in >> token) t.data.push_back(parse_float(token, where));
  if (static_cast<std::int64_t>(t.data.size()) != attn::shape_numel(t.shape)) {
    throw std::runtime_error(where + ": " + name + " has " + std::to_string(t.data.size()) +
                             " values for shape " + attn::shape_to_string(t.shape));
  }
  return {name, std::move(t)};
}

inline std::ifstream open_golden(const std::string& file) {
  const std::string path = std::string(ATTN_GOLDEN_DIR) + "/" + file;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open golden fixture " + path);
  return in;
}

}  // namespace detail

// Reads ATTN_GOLDEN_DIR/<name>.txt.
inline Fixture load_fixture(const std::string& name) {
  std::ifstream in = detail::open_golden(name + ".txt");
  Fixture f;
  f.name = name;
  std::string line;
  for (int line_no = 1; std::getline(in, line); ++line_no) {
    if (line.empty()) continue;
    if (line[0] == '#') {
      if (f.description.empty()) f.description = line.substr(line.size() > 1 ? 2 : 1);
      continue;
    }
    auto entry = detail::parse_line(line, name + ".txt:" + std::to_string(line_no));
    if (!f.tensors.emplace(entry.first, std::move(entry.second)).second) {
      throw std::runtime_error(name + ".txt: duplicate tensor '" + entry.first + "'");
    }
  }
  return f;
}

// The fixture names listed in ATTN_GOLDEN_DIR/index.txt (written by make_fixtures.py), in order, or
// in another index (index_grad.txt: make_grad_fixtures.py).
inline std::vector<std::string> list_fixtures(const std::string& index = "index.txt") {
  std::ifstream in = detail::open_golden(index);
  std::vector<std::string> names;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != '#') names.push_back(line);
  }
  return names;
}

}  // namespace golden

// The brief's spelling: Fixture / load_fixture without the namespace.
using golden::Fixture;
using golden::load_fixture;
