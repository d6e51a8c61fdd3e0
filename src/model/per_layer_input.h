// Per-layer inputs (Gemma 4's "per-layer embeddings"): a second token table of L·P values per token
// feeds every layer a P-wide input of its own. From the token ids and the scaled embeddings x (N, E):
//   pl[n, l] = (RMSNorm_P(W_model (x[n]) / √E)[l] + table[id_n][l] · √P) / √2        (N, L, P)
// and in layer l, after the MLP's residual add:
//   h += RMSNorm_E(W_proj,l (gelu_tanh(W_gate,l h) ⊙ pl[:, l]))
// (transformers' get_per_layer_inputs / project_per_layer_inputs and the decoder layer's tail;
// llama.cpp's build_inp_per_layer / project_per_layer_inputs). The constants are float32: √P, 1/√E
// and 1/√2, as both references multiply them in float32.
#pragma once
#include <cstdint>
#include <vector>

#include "core/stored_weight.h"
#include "model/blocks.h"
#include "model/lookup_table.h"

namespace attn {

class PerLayerInput {
 public:
  PerLayerInput() = default;
  PerLayerInput(int layers, int width, int hidden, double eps);
  bool present() const { return width_ > 0; }
  int width() const { return width_; }
  // pl (N, L, P) for the n rows' ids and their scaled embeddings x (N, E); proj: scratch.
  void inputs(std::int64_t n, const std::int32_t* ids, const float* x, std::vector<float>& pl,
              std::vector<float>& proj) const;
  // out (N, E) = layer l's branch on the stream x (N, E) with pl from inputs(); g: scratch (N, P).
  void branch(int l, std::int64_t n, const float* x, const std::vector<float>& pl, std::vector<float>& g,
              std::vector<float>& y, float* out) const;
  // Set by the loader: the table (V, L·P), the model projection (L·P, E) and its norm (P); per layer
  // the gate (P, E), the projection (E, P) and the post-norm (E).
  LookupTable table;  // in memory or kept outside (PretrainedModel::attach_table)
  WeightView model_proj;
  NormBlock proj_norm;
  struct Layer {
    WeightView gate, proj;
    NormBlock post_norm;
  };
  std::vector<Layer> layers;

 private:
  int layers_ = 0, width_ = 0, hidden_ = 0;
};

}  // namespace attn
