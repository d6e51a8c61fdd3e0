// Building a MultiHeadAttention and its forward options from a golden fixture (the mha_* and
// mha_bwd_* families share one layout: config scalars, parameters by PyTorch name, masks as 0/1).
#pragma once
#include <catch2/catch.hpp>
#include <string>

#include "core/multi_head.h"
#include "core/status.h"
#include "fixture.h"

namespace golden {

inline std::string describe(const attn::Status& s) {
  return s.ok() ? "status OK" : std::string(attn::status_code_name(s.code)) + ": " + s.message;
}

inline const char* const kParameterNames[] = {"in_proj_weight",    "q_proj_weight",  "k_proj_weight",
                                              "v_proj_weight",     "in_proj_bias",   "out_proj.weight",
                                              "out_proj.bias",     "bias_k",         "bias_v",
                                              "layer_norm.weight", "layer_norm.bias"};

inline attn::MhaConfig mha_config(const Fixture& f) {
  attn::MhaConfig c;
  c.embed_dim = static_cast<int>(f.scalar("embed_dim", 0));
  c.num_heads = static_cast<int>(f.scalar("num_heads", 1));
  c.kdim = static_cast<int>(f.scalar("kdim", 0));
  c.vdim = static_cast<int>(f.scalar("vdim", 0));
  c.head_dim = static_cast<int>(f.scalar("head_dim", 0));
  c.value_head_dim = static_cast<int>(f.scalar("value_head_dim", 0));
  c.bias = f.flag("bias", true);
  c.add_bias_kv = f.flag("add_bias_kv");
  c.add_zero_attn = f.flag("add_zero_attn");
  c.residual = f.flag("residual");
  c.layer_norm = f.flag("layer_norm");
  c.layer_norm_eps = f.scalar("layer_norm_eps", 1e-5f);
  c.seed = 12345;  // every parameter is overwritten below; a leftover would show as a mismatch
  return c;
}

// A parameter the module expects is provided by the fixture, directly or through the other
// spelling of the input projection (in_proj_weight <-> q/k/v_proj_weight).
inline bool provided(const Fixture& f, const std::string& name) {
  if (f.has(name)) return true;
  if (name == "in_proj_weight") {
    return f.has("q_proj_weight") && f.has("k_proj_weight") && f.has("v_proj_weight");
  }
  if (name == "q_proj_weight" || name == "k_proj_weight" || name == "v_proj_weight") {
    return f.has("in_proj_weight");
  }
  return false;
}

inline attn::MultiHeadAttention make_mha(const Fixture& f) {
  attn::MultiHeadAttention mha;
  attn::Status s = attn::MultiHeadAttention::create(mha_config(f), mha);
  INFO(f.name << " create: " << describe(s));
  REQUIRE(s.ok());
  for (const char* name : kParameterNames) {
    if (!f.has(name)) continue;
    s = mha.set_parameter(name, f.at(name));
    INFO(f.name << " set_parameter(" << name << "): " << describe(s));
    REQUIRE(s.ok());
  }
  for (const std::string& name : mha.parameter_names()) {
    INFO(f.name << ": the module's parameter " << name << " is not in the fixture");
    CHECK(provided(f, name));
  }
  return mha;
}

// The forward options of one fixture; owns the masks the options point to (never copied).
struct MhaInputs {
  attn::BoolTensor mask, key_padding_mask;
  attn::MhaForwardOptions options;

  explicit MhaInputs(const Fixture& f) {
    if (f.has("mask")) {
      mask = f.as_bool("mask");
      options.mask = &mask;
    }
    if (f.has("key_padding_mask")) {
      key_padding_mask = f.as_bool("key_padding_mask");
      options.key_padding_mask = &key_padding_mask;
    }
    if (f.has("additive_mask")) options.additive_mask = &f.at("additive_mask");
    options.causal = f.flag("causal");
    options.need_weights = f.flag("need_weights", true);
    options.average_weights = f.flag("average_weights", true);
  }
  MhaInputs(const MhaInputs&) = delete;
  MhaInputs& operator=(const MhaInputs&) = delete;
};

}  // namespace golden
