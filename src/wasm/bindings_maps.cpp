// Bindings of the maps on demand (bindings_maps.h): a prefill's session and its maps, copied out.
#include "wasm/bindings_maps.h"

#include <emscripten/bind.h>

namespace attn_js {

val MapSessionHandle::overview(int layer, int head, bool max_pool) const {
  std::vector<float> cells;
  int n = 0;
  const attn::Status st = session.overview(layer, head, max_pool, cells, n);
  val out = status_object(st);
  if (st.ok()) {
    out.set("data", float_array(cells));
    out.set("cells", n);
  }
  return out;
}

val MapSessionHandle::tile(int layer, int head, int r0, int r1, int c0, int c1) const {
  std::vector<float> weights;
  const attn::Status st = session.tile(layer, head, r0, r1, c0, c1, weights);
  val out = status_object(st);
  if (st.ok()) out.set("data", float_array(weights));
  return out;
}

val MapSessionHandle::top_k(int layer, int head, int query, int k) const {
  std::vector<int> index;
  std::vector<float> weight;
  const attn::Status st = session.top_k(layer, head, query, k, index, weight);
  val out = status_object(st);
  if (st.ok()) {
    out.set("indices",
            val::global("Int32Array").new_(emscripten::typed_memory_view(index.size(), index.data())));
    out.set("weights", float_array(weight));
  }
  return out;
}

}  // namespace attn_js

EMSCRIPTEN_BINDINGS(attention_maps) {
  using attn_js::MapSessionHandle;
  emscripten::class_<MapSessionHandle>("MapSessionHandle")
      .constructor<>()
      .function("length", &MapSessionHandle::length)
      .function("bytes", &MapSessionHandle::bytes)
      .function("logits", &MapSessionHandle::logits)
      .function("overview", &MapSessionHandle::overview)
      .function("tile", &MapSessionHandle::tile)
      .function("topK", &MapSessionHandle::top_k)
      .function("release", &MapSessionHandle::release);
}
