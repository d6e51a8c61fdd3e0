// The tiny Hugging Face checkpoints of tests/golden/pretrained, natively: the fixture folders (listed
// from the directory), each folder's committed core config (core-config.json, written from the JS by
// tests/golden/write-core-configs.mjs) as a PretrainedConfig, its tensor-roles.json (the file names
// of the model's roles, from the same writer), a small safetensors reader, and the one function that
// fills a model's tensors from a file by role (load_checkpoint).
//
// ATTN_PRETRAINED_DIR is a compile definition (tests/cpp/CMakeLists.txt). Under wasm the test binary
// is linked with NODERAWFS, so opendir and std::ifstream read the same files as natively.
#pragma once
#include <dirent.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/stored_weight.h"
#include "json_value.h"
#include "model/pretrained.h"

#ifndef ATTN_PRETRAINED_DIR
#error "ATTN_PRETRAINED_DIR must point at tests/golden/pretrained (set by tests/cpp/CMakeLists.txt)"
#endif

namespace pretrained_fixture {

inline std::string path(const std::string& fixture, const std::string& file) {
  return std::string(ATTN_PRETRAINED_DIR) + "/" + fixture + "/" + file;
}

// Every folder of tests/golden/pretrained holding a config.json, sorted (no hand list: a new
// fixture is tested as soon as it is there).
inline std::vector<std::string> list_fixtures() {
  DIR* dir = opendir(ATTN_PRETRAINED_DIR);
  if (dir == nullptr) throw std::runtime_error("cannot list " + std::string(ATTN_PRETRAINED_DIR));
  std::vector<std::string> names;
  while (const dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (name.empty() || name[0] == '.') continue;
    if (std::ifstream(path(name, "config.json"))) names.push_back(name);
  }
  closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

// core-config.json (the object the JS passes to the binding, in its names) as the core's config:
// the same field-by-field reading as src/wasm/bindings_pretrained.cpp, the variants optional.
inline attn::PretrainedConfig core_config(const testjson::Value& c) {
  attn::PretrainedConfig p;
  p.arch = static_cast<attn::PretrainedArch>(c["arch"].integer());
  p.vocab_size = c["vocabSize"].integer();
  p.hidden = c["hidden"].integer();
  p.layers = c["layers"].integer();
  p.heads = c["heads"].integer();
  p.kv_heads = c["kvHeads"].integer();
  p.head_dim = c["headDim"].integer();
  p.intermediate = c["intermediate"].integer();
  p.max_positions = c["maxPositions"].integer();
  p.norm_eps = c["normEps"].num();
  p.rope_theta = c["ropeTheta"].num();
  p.qkv_bias = c["qkvBias"].flag();
  p.tie_embeddings = c["tieEmbeddings"].flag();
  if (c.has("ropeInvFreq")) p.rope_inv_freq = c["ropeInvFreq"].numbers<double>();
  if (c.has("ropeAttentionFactor")) p.rope_attention_factor = c["ropeAttentionFactor"].num();
  if (c.has("qkNorm")) p.qk_norm = static_cast<attn::MhaConfig::QkNorm>(c["qkNorm"].integer());
  if (c.has("postNorms")) p.post_norms = c["postNorms"].flag();
  if (c.has("preNorms")) p.pre_norms = c["preNorms"].flag();
  if (c.has("normWeightOffset")) p.norm_weight_offset = static_cast<float>(c["normWeightOffset"].num());
  if (c.has("embedScale")) p.embed_scale = static_cast<float>(c["embedScale"].num());
  if (c.has("attentionScale")) p.attention_scale = c["attentionScale"].num();
  if (c.has("geluMlp")) p.gelu_mlp = c["geluMlp"].flag();
  if (c.has("localRopeTheta")) p.local_rope_theta = c["localRopeTheta"].num();
  if (c.has("attnSoftcap")) p.attn_softcap = static_cast<float>(c["attnSoftcap"].num());
  if (c.has("finalSoftcap")) p.final_softcap = static_cast<float>(c["finalSoftcap"].num());
  if (c.has("residualScale")) p.residual_scale = static_cast<float>(c["residualScale"].num());
  if (c.has("logitsScaling")) p.logits_scaling = static_cast<float>(c["logitsScaling"].num());
  if (c.has("queryTemperatureBeta")) p.query_temperature_beta = c["queryTemperatureBeta"].num();
  if (c.has("queryTemperatureFloor")) p.query_temperature_floor = c["queryTemperatureFloor"].integer();
  if (c.has("fusedProjections")) p.fused_projections = c["fusedProjections"].flag();
  if (c.has("rotaryDims")) p.rotary_dims = c["rotaryDims"].integer();
  if (c.has("layerWindow")) p.layer_window = c["layerWindow"].numbers<int>();
  if (c.has("layerRope")) p.layer_rope = c["layerRope"].numbers<int>();
  if (c.has("layerMixer")) p.layer_mixer = c["layerMixer"].numbers<int>();
  if (c.has("convKernel")) p.conv_kernel = c["convKernel"].integer();
  if (c.has("linearKHeads")) p.linear_k_heads = c["linearKHeads"].integer();
  if (c.has("linearVHeads")) p.linear_v_heads = c["linearVHeads"].integer();
  if (c.has("linearKDim")) p.linear_k_dim = c["linearKDim"].integer();
  if (c.has("linearVDim")) p.linear_v_dim = c["linearVDim"].integer();
  if (c.has("linearConvKernel")) p.linear_conv_kernel = c["linearConvKernel"].integer();
  if (c.has("linearLayout")) p.linear_layout = c["linearLayout"].integer();
  if (c.has("attnOutputGate")) p.attn_output_gate = c["attnOutputGate"].flag();
  if (c.has("layerHeadDim")) p.layer_head_dim = c["layerHeadDim"].numbers<int>();  // Gemma 4
  if (c.has("layerKvFrom")) p.layer_kv_from = c["layerKvFrom"].numbers<int>();
  if (c.has("layerIntermediate")) p.layer_intermediate = c["layerIntermediate"].numbers<int>();
  if (c.has("vNorm")) p.v_norm = c["vNorm"].flag();
  if (c.has("perLayerWidth")) p.per_layer_width = c["perLayerWidth"].integer();
  if (c.has("layerScale")) p.layer_scale = c["layerScale"].flag();
  return p;
}

// One safetensors file in memory: an 8-byte little-endian header length, the JSON header
// ({ name: { dtype, shape, data_offsets: [begin, end] }, __metadata__ }), then the data.
struct Safetensors {
  struct Entry {
    attn::WeightFormat format = attn::WeightFormat::kF32;
    attn::Shape shape;
    std::size_t begin = 0, end = 0;  // offsets into bytes
  };
  std::string bytes;
  std::map<std::string, Entry> entries;
};

inline attn::WeightFormat format_of(const std::string& dtype) {
  if (dtype == "F32") return attn::WeightFormat::kF32;
  if (dtype == "F16") return attn::WeightFormat::kF16;
  if (dtype == "BF16") return attn::WeightFormat::kBF16;
  throw std::runtime_error("safetensors: dtype " + dtype + " is not F32, F16 or BF16");
}

inline Safetensors read_safetensors(const std::string& file) {
  Safetensors st;
  st.bytes = testjson::read_text(file);
  std::uint64_t n = 0;
  for (int i = 7; i >= 0 && st.bytes.size() >= 8; --i) n = n << 8 | static_cast<unsigned char>(st.bytes[i]);
  if (st.bytes.size() < 8 || n > st.bytes.size() - 8) throw std::runtime_error(file + ": bad header length");
  const testjson::Value header = testjson::parse(st.bytes.substr(8, n));
  const std::size_t data = 8 + static_cast<std::size_t>(n);
  for (const auto& [name, v] : header.object) {
    if (name == "__metadata__") continue;
    Safetensors::Entry e;
    e.format = format_of(v["dtype"].str());
    e.shape = v["shape"].numbers<int>();
    e.begin = data + static_cast<std::size_t>(v["data_offsets"][0].num());
    e.end = data + static_cast<std::size_t>(v["data_offsets"][1].num());
    const auto bytes = static_cast<std::size_t>(attn::shape_numel(e.shape) * attn::format_bytes(e.format));
    if (e.end > st.bytes.size() || e.begin > e.end || e.end - e.begin != bytes)
      throw std::runtime_error(file + ": tensor " + name + " has bad data_offsets");
    st.entries.emplace(name, std::move(e));
  }
  return st;
}

// One tensor of tensor-roles.json (written from the family registry by
// tests/golden/write-core-configs.mjs): the model's key, the names a file may give it (the one
// model.safetensors uses first) and whether the file stores it (in, out).
struct TensorFile {
  attn::TensorKey key;
  std::vector<std::string> names;
  bool transposed = false;
};

inline std::vector<TensorFile> tensor_roles(const testjson::Value& list) {
  std::vector<TensorFile> out;
  for (const testjson::Value& t : list.items()) {
    TensorFile f;
    INFO("tensor-roles.json: role " << t["role"].str());
    REQUIRE(attn::role_from_name(t["role"].str(), f.key.role));
    f.key.layer = t["layer"].integer();
    f.names.push_back(t["name"].str());
    for (const testjson::Value& n : t["fileNames"].items())
      if (n.str() != f.names.front()) f.names.push_back(n.str());
    f.transposed = t["transposed"].flag();
    out.push_back(std::move(f));
  }
  return out;
}

inline attn::Shape squeezed(const attn::Shape& s) {
  attn::Shape out;
  for (auto n : s)
    if (n != 1) out.push_back(n);
  return out;
}

// THE adapter between a checkpoint file and the model's tensor API: every tensor the registry maps
// (tensor-roles.json), found in the file under one of its names (GPT-2's with or without
// "transformer.", as src/js/pretrained/pretrained.js finds them), copied by role in its file format through
// begin_tensor / end_tensor after reserve() of the total, as the JS loader does. The Hugging Face
// names come only from tensor-roles.json: no C++ copy of them.
inline void load_checkpoint(attn::PretrainedModel& model, const Safetensors& file,
                            const std::vector<TensorFile>& roles) {
  std::vector<std::pair<const TensorFile*, std::map<std::string, Safetensors::Entry>::const_iterator>> found;
  std::uint64_t total = 0;
  for (const TensorFile& t : roles) {
    auto it = file.entries.end();
    for (const std::string& name : t.names)
      if (it == file.entries.end()) it = file.entries.find(name);
    INFO("tensor " << t.names.front());
    REQUIRE(it != file.entries.end());
    found.emplace_back(&t, it);
    total += it->second.end - it->second.begin;
  }
  REQUIRE(model.reserve(total).ok());
  for (const auto& [t, it] : found) {
    const Safetensors::Entry& e = it->second;
    // The file's shape up to dimensions of size 1 (Qwen3.5's conv1d (C, 1, K) is the core's (C, K)),
    // as src/js/pretrained/pretrained.js reads it
    attn::Shape shape = e.shape;
    for (const attn::TensorSpec& spec : model.tensors())
      if (spec.key == t->key && squeezed(spec.shape) == squeezed(e.shape)) shape = spec.shape;
    void* room = nullptr;
    const attn::Status begin = model.begin_tensor(t->key, shape, e.format, t->transposed, it->first, room);
    INFO(it->first << ": " << begin.message);
    REQUIRE(begin.ok());
    std::memcpy(room, file.bytes.data() + e.begin, e.end - e.begin);
    const attn::Status end = model.end_tensor(t->key);
    INFO(end.message);
    REQUIRE(end.ok());
  }
  const std::vector<attn::TensorKey> missing = model.missing();
  INFO("first missing: " << (missing.empty() ? std::string() : missing.front().label()));
  REQUIRE(missing.empty());
}

// A fixture's model from core-config.json, tensor-roles.json and one of its weight files
// (model.safetensors, model.f16.safetensors, model.bf16.safetensors).
inline void load_model(const std::string& fixture, const std::string& weights, attn::PretrainedModel& model) {
  const attn::PretrainedConfig config = core_config(testjson::parse_file(path(fixture, "core-config.json")));
  const attn::Status st = attn::PretrainedModel::create(config, model);
  INFO(fixture << ": " << st.message);
  REQUIRE(st.ok());
  load_checkpoint(model, read_safetensors(path(fixture, weights)),
                  tensor_roles(testjson::parse_file(path(fixture, "tensor-roles.json"))));
}

}  // namespace pretrained_fixture
