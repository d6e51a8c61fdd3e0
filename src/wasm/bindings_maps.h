// The handle of a prefill with maps on demand (model/map_session.h): PretrainedHandle's prefillBegin
// and prefillStep fill it chunk by chunk (bindings_pretrained.cpp), its own calls read the maps
// (bindings_maps.cpp). Every result is a copy out of the heap; the JS side is
// src/js/pretrained/prefill.js.
#pragma once
#include <emscripten/val.h>

#include <vector>

#include "model/map_session.h"
#include "wasm/binding_util.h"

namespace attn_js {

class MapSessionHandle {
 public:
  int length() const { return session.length(); }
  double bytes() const { return static_cast<double>(session.bytes()); }
  // The last row's logits (V), once the prefill is complete.
  val logits() const { return float_array(session.logits()); }
  // { code, message, data: Float32Array (cells²), cells }
  val overview(int layer, int head, bool max_pool) const;
  // { code, message, data: Float32Array ((r1 − r0) · (c1 − c0)) }
  val tile(int layer, int head, int r0, int r1, int c0, int c1) const;
  // { code, message, indices: Int32Array (k), weights: Float32Array (k) }
  val top_k(int layer, int head, int query, int k) const;
  // Frees the state at once (the JS handle's delete() follows).
  void release() { session = attn::MapSession(); }

  attn::MapSession session;
};

}  // namespace attn_js
