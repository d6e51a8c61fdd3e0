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
  // { length, bytes, logits: Float32Array (V) } (the logits once the prefill is complete). One
  // signature for every call below keeps the module small (each Embind signature is code of its own).
  val info() const;
  // o { layer, head, max } → { code, message, data: Float32Array (cells²), cells }
  val overview(val o) const;
  // o { layer, head, r0, r1, c0, c1 } → { code, message, data: Float32Array ((r1 − r0) · (c1 − c0)) }
  val tile(val o) const;
  // o { layer, head, query, k } → { code, message, indices: Int32Array (k), weights: Float32Array (k) }
  val top_k(val o) const;
  // Frees the state at once (the JS handle's delete() follows).
  void release() { session = attn::MapSession(); }

  attn::MapSession session;
};

}  // namespace attn_js
