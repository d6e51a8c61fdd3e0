// Bindings of the maps on demand (bindings_maps.h): a prefill's session and its maps, copied out.
#include "wasm/bindings_maps.h"

#include <emscripten/bind.h>

namespace attn_js {

namespace {

int int_of(const val& o, const char* key) {
  return o[key].as<int>();
}

}  // namespace

val MapSessionHandle::info() const {
  val out = val::object();
  out.set("length", session.length());
  out.set("bytes", static_cast<double>(session.bytes()));
  out.set("logits", float_array(session.logits()));
  return out;
}

val MapSessionHandle::overview(val o) const {
  std::vector<float> cells;
  int n = 0;
  const attn::Status st =
      session.overview(int_of(o, "layer"), int_of(o, "head"), o["max"].as<bool>(), cells, n);
  val out = status_object(st);
  if (st.ok()) {
    out.set("data", float_array(cells));
    out.set("cells", n);
  }
  return out;
}

val MapSessionHandle::tile(val o) const {
  std::vector<float> weights;
  const attn::Status st = session.tile(int_of(o, "layer"), int_of(o, "head"), int_of(o, "r0"),
                                       int_of(o, "r1"), int_of(o, "c0"), int_of(o, "c1"), weights);
  val out = status_object(st);
  if (st.ok()) out.set("data", float_array(weights));
  return out;
}

val MapSessionHandle::top_k(val o) const {
  std::vector<int> index;
  std::vector<float> weight;
  const attn::Status st =
      session.top_k(int_of(o, "layer"), int_of(o, "head"), int_of(o, "query"), int_of(o, "k"), index, weight);
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
      .function("info", &MapSessionHandle::info)
      .function("overview", &MapSessionHandle::overview)
      .function("tile", &MapSessionHandle::tile)
      .function("topK", &MapSessionHandle::top_k)
      .function("release", &MapSessionHandle::release);
}
