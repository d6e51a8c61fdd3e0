// The row and elementwise loops split by the pool (GELU forward and backward, the bias-gradient
// column sums, LayerNorm rows, AdamW's update) and a whole training run on them: the same bits at
// 1, 2, 3 and 4 threads (docs/threads.md). test_parallel.cpp covers the products and attention.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "kernels/parallel.h"
#include "model/layers.h"
#include "model/tiny_transformer.h"
#include "parallel_check.h"
#include "test_helpers.h"
#include "train/tasks.h"
#include "train/trainer.h"

namespace k = attn::kernels;
using testutil::randoms;
using testutil::require_same_at_every_count;

TEST_CASE("parallel GELU forward and backward: the same bits at every thread count", "[parallel]") {
  if (!k::threads_supported()) return;
  const std::int64_t n = 100'003;  // ragged: not a multiple of the SIMD width or of the parts
  const std::vector<float> x = randoms(static_cast<std::size_t>(n), 1),
                           dy = randoms(static_cast<std::size_t>(n), 2);
  require_same_at_every_count("gelu", [&] {
    std::vector<float> y(x.size()), cdf(x.size()), dx(x.size()), dx2(x.size());
    attn::gelu_forward(n, x.data(), y.data(), cdf.data());
    attn::gelu_backward(n, x.data(), dy.data(), dx.data());
    attn::gelu_backward_from_cdf(n, x.data(), cdf.data(), dy.data(), dx2.data());
    std::vector<float> all = y;
    all.insert(all.end(), cdf.begin(), cdf.end());
    all.insert(all.end(), dx.begin(), dx.end());
    all.insert(all.end(), dx2.begin(), dx2.end());
    return all;
  });
}

TEST_CASE("parallel linear backward (bias sums over columns): the same bits at every thread count",
          "[parallel]") {
  if (!k::threads_supported()) return;
  const int rows = 300, in = 64, out = 1031;
  const std::vector<float> x = randoms(static_cast<std::size_t>(rows) * in, 3);
  const std::vector<float> w = randoms(static_cast<std::size_t>(out) * in, 4);
  const std::vector<float> dy = randoms(static_cast<std::size_t>(rows) * out, 5);
  require_same_at_every_count("linear_backward", [&] {
    std::vector<float> dx(static_cast<std::size_t>(rows) * in), dw(static_cast<std::size_t>(out) * in, 0.5f),
        db(static_cast<std::size_t>(out), 0.25f);
    attn::linear_backward(rows, in, out, x.data(), in, w.data(), dy.data(), out, dx.data(), in, false,
                          dw.data(), db.data());
    std::vector<float> all = dx;
    all.insert(all.end(), dw.begin(), dw.end());
    all.insert(all.end(), db.begin(), db.end());
    return all;
  });
}

TEST_CASE("a TinyTransformer training run (LayerNorm rows, GELU, AdamW split): the same bits at every count",
          "[parallel]") {
  if (!k::threads_supported()) return;
  attn::TaskConfig tc;
  tc.name = "reverse";
  tc.length = 16;
  tc.seed = 3;
  attn::Task task;
  REQUIRE(attn::Task::create(tc, task).ok());
  require_same_at_every_count("training", [&] {
    attn::TinyConfig c;
    c.vocab_size = task.vocab_size();
    c.max_length = task.sequence_length();
    c.d_model = 128;
    c.num_heads = 4;
    c.num_layers = 2;
    c.mlp = true;
    c.seed = 7;
    attn::TinyTransformer m;
    REQUIRE(attn::TinyTransformer::create(c, m).ok());
    attn::Trainer trainer;
    REQUIRE(attn::Trainer::create(&m, attn::AdamWOptions{}, trainer).ok());
    attn::Task batches = task;  // the same batches at every count
    std::vector<float> out;
    for (int s = 0; s < 2; ++s) {
      attn::IdBatch ids{16, task.sequence_length(), {}}, targets{16, task.sequence_length(), {}};
      REQUIRE(batches.next_batch(16, ids.data, targets.data).ok());
      attn::TrainStepResult r;
      REQUIRE(trainer.step(ids, targets, r).ok());
      out.push_back(r.loss);
    }
    for (const attn::Tensor& p : m.parameters()) out.insert(out.end(), p.data.begin(), p.data.end());
    return out;
  });
}
