// Lookup-only tables outside memory (src/model/lookup_table.h): a LookupTable over a TableRows widens
// each row of every ggml block format to the double reference of quant_reference.h (independent of
// the kernels) and to the same bits as the in-memory view, copying exactly the one row asked for; its
// load-time check finds a non-finite scale or value at the flat index StoredWeight::check_finite gives.
// Every fixture of tests/golden/pretrained whose embedding is untied or that has per-layer inputs, in
// F32, F16 and BF16: those tables attached from outside (PretrainedModel::attach_table) give the
// logits and greedy ids of the model with them in memory, bit for bit; a tied embedding is refused.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/stored_weight.h"
#include "model/lookup_table.h"
#include "model/pretrained.h"
#include "pretrained_fixture.h"
#include "quant_blocks.h"
#include "quant_reference.h"

namespace {

using attn::WeightFormat;
using quant_test::Layout;

// Rows kept in a byte vector "outside" the model, counting what is copied.
class VectorRows : public attn::TableRows {
 public:
  VectorRows(std::vector<std::uint8_t> bytes, std::size_t row_bytes)
      : bytes_(std::move(bytes)), row_(row_bytes) {}
  void copy_row(int r, void* dst, std::size_t bytes) const override {
    REQUIRE(bytes == row_);
    std::memcpy(dst, bytes_.data() + static_cast<std::size_t>(r) * row_, bytes);
    ++copies;
    last = r;
  }
  mutable int copies = 0, last = -1;

 private:
  std::vector<std::uint8_t> bytes_;
  std::size_t row_;
};

WeightFormat format_of(const Layout& t) {
  for (int f = 0; f < attn::kWeightFormatCount; ++f)
    if (attn::format_ggml_type(static_cast<WeightFormat>(f)) == t.id) return static_cast<WeightFormat>(f);
  FAIL("no WeightFormat for ggml type " << t.name);
  return WeightFormat::kF32;
}

}  // namespace

TEST_CASE("lookup tables: rows from outside widen as the reference and as in memory", "[lookup_table]") {
  for (const Layout& t : quant_test::layouts()) {
    INFO(t.name);
    const int rows = 5, cols = 2 * t.elements;
    const auto blocks = quant_test::make_blocks(t, rows, cols, 300 + t.id);
    const std::vector<double> ref = quant_test::reference_matrix(t, rows, cols, blocks);
    attn::StoredWeight w;
    REQUIRE(attn::StoredWeight::allocate({rows, cols}, format_of(t), "test", w).ok());
    std::memcpy(w.bytes(), blocks.data(), blocks.size());
    const attn::LookupTable inside(w.view());
    auto source = std::make_shared<VectorRows>(blocks, blocks.size() / rows);
    const attn::LookupTable outside = attn::LookupTable::outside(format_of(t), rows, cols, source);
    REQUIRE(outside.outside_memory());
    REQUIRE(!inside.outside_memory());
    REQUIRE(outside.byte_size() == blocks.size());
    REQUIRE(outside.check_finite("test").ok());
    source->copies = 0;
    std::vector<float> a(cols), b(cols);
    for (const int r : {3, 0, 4, 3}) {
      outside.widen_row(r, a.data());
      inside.widen_row(r, b.data());
      REQUIRE(source->last == r);
      for (int c = 0; c < cols; ++c) {
        REQUIRE(static_cast<double>(a[c]) == ref[static_cast<std::size_t>(r) * cols + c]);
        REQUIRE(std::memcmp(&a[c], &b[c], sizeof(float)) == 0);
      }
    }
    REQUIRE(source->copies == 4);  // one row copied per lookup, nothing more
  }
}

TEST_CASE("lookup tables: a non-finite scale or value outside memory is found where StoredWeight finds it",
          "[lookup_table]") {
  for (const Layout& t : quant_test::layouts()) {
    INFO(t.name);
    const int rows = 3, cols = 2 * t.elements;
    auto blocks = quant_test::make_blocks(t, rows, cols, 500 + t.id);
    const std::size_t at = blocks.size() / rows * 2 + t.bytes + t.halves[0];  // row 2, second block
    blocks[at] = 0x00;
    blocks[at + 1] = 0x7c;  // +inf
    const auto table = attn::LookupTable::outside(format_of(t), rows, cols,
                                                  std::make_shared<VectorRows>(blocks, blocks.size() / rows));
    const attn::Status st = table.check_finite("per_layer_token_embd.weight");
    REQUIRE(st.code == attn::StatusCode::kNonFinite);
    CHECK(st.message.find("per_layer_token_embd.weight") != std::string::npos);
    CHECK(st.message.find("flat index " + std::to_string(2 * cols + t.elements)) != std::string::npos);
  }
  for (const WeightFormat f : {WeightFormat::kF32, WeightFormat::kF16, WeightFormat::kBF16}) {
    const int rows = 4, cols = 6, width = attn::format_bytes(f);
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(rows) * cols * width, 0);
    const std::size_t bad = 2 * cols + 5;
    if (f == WeightFormat::kF32) {
      const float nan = std::numeric_limits<float>::quiet_NaN();
      std::memcpy(&bytes[bad * 4], &nan, 4);
    } else {
      bytes[bad * 2 + 1] = f == WeightFormat::kF16 ? 0x7c : 0x7f;  // all exponent bits: inf
      bytes[bad * 2] = f == WeightFormat::kF16 ? 0x00 : 0x80;
    }
    const auto table =
        attn::LookupTable::outside(f, rows, cols, std::make_shared<VectorRows>(bytes, bytes.size() / rows));
    const attn::Status st = table.check_finite("embed");
    INFO(attn::format_name(f));
    REQUIRE(st.code == attn::StatusCode::kNonFinite);
    CHECK(st.message.find("flat index " + std::to_string(bad)) != std::string::npos);
  }
}

namespace {

// The greedy ids of `steps` decoding steps through the caches after ids (1, T), and the prompt's logits.
std::vector<float> decode(attn::PretrainedModel& model, const std::vector<std::int32_t>& ids, int steps,
                          std::vector<std::int32_t>& out) {
  attn::PretrainedForwardResult whole;
  REQUIRE(model.forward(1, static_cast<int>(ids.size()), ids, {}, whole).ok());
  attn::DecodeCaches caches;
  REQUIRE(model.create_caches(static_cast<int>(ids.size()) + steps, 1, caches).ok());
  attn::PretrainedForwardResult r;
  REQUIRE(model.forward(1, static_cast<int>(ids.size()), ids, {}, r, &caches).ok());
  for (int s = 0; s < steps; ++s) {
    const std::vector<float>& logits = r.logits.data;
    const std::size_t v = static_cast<std::size_t>(model.config().vocab_size), last = logits.size() - v;
    std::int32_t best = 0;
    for (std::size_t j = 1; j < v; ++j)
      if (logits[last + j] > logits[last + static_cast<std::size_t>(best)])
        best = static_cast<std::int32_t>(j);
    out.push_back(best);
    REQUIRE(model.forward(1, 1, {best}, {}, r, &caches).ok());
  }
  return whole.logits.data;
}

}  // namespace

TEST_CASE("lookup tables: a fixture's tables attached from outside give the in-memory model's bits",
          "[lookup_table][pretrained]") {
  namespace pf = pretrained_fixture;
  const std::vector<std::int32_t> ids = {5, 17, 42, 88, 3, 61, 29};
  int tested = 0;
  for (const std::string& fixture : pf::list_fixtures()) {
    for (const char* weights : {"model.safetensors", "model.f16.safetensors", "model.bf16.safetensors"}) {
      INFO(fixture << " " << weights);
      attn::PretrainedModel inside, outside;
      pf::load_model(fixture, weights, inside);
      pf::load_model(fixture, weights, outside);
      const pf::Safetensors file = pf::read_safetensors(pf::path(fixture, weights));
      const auto roles = pf::tensor_roles(testjson::parse_file(pf::path(fixture, "tensor-roles.json")));
      std::uint64_t table_bytes = 0;
      for (const pf::TensorFile& t : roles) {
        const auto it = file.entries.find(t.names.front());
        if (it == file.entries.end() || t.transposed) continue;
        const pf::Safetensors::Entry& e = it->second;
        auto rows = std::make_shared<VectorRows>(
            std::vector<std::uint8_t>(file.bytes.begin() + e.begin, file.bytes.begin() + e.end),
            (e.end - e.begin) / static_cast<std::size_t>(e.shape[0]));
        const attn::Status st = outside.attach_table(t.key, e.shape, e.format, it->first, rows);
        if (!attn::PretrainedModel::lookup_only(outside.config(), t.key.role)) {
          REQUIRE(st.code == attn::StatusCode::kInvalidArgument);  // the head's rows: in memory only
          continue;
        }
        INFO(st.message);
        REQUIRE(st.ok());
        table_bytes += e.end - e.begin;
      }
      if (table_bytes == 0) continue;  // a tied embedding and no per-layer table: nothing outside
      ++tested;
      REQUIRE(outside.off_heap_bytes() == table_bytes);
      REQUIRE(inside.off_heap_bytes() == 0);
      REQUIRE(outside.weight_bytes() + table_bytes == inside.weight_bytes());
      std::vector<std::int32_t> a, b;
      const std::vector<float> la = decode(outside, ids, 3, a), lb = decode(inside, ids, 3, b);
      REQUIRE(la.size() == lb.size());
      REQUIRE(std::memcmp(la.data(), lb.data(), la.size() * sizeof(float)) == 0);
      REQUIRE(a == b);
    }
  }
  REQUIRE(tested >= 3);  // llama-tiny (untied) and gemma4-tiny (per-layer) among them
}
