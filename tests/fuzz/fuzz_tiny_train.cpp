// libFuzzer target: a TinyTransformer with a fuzzer-chosen config, a fuzzer-built state dict
// (set_parameters: right and wrong shapes, NaN, huge values), then forward, loss, gradients and
// AdamW Trainer steps on fuzzer-chosen ids and targets (out of range, -100, wrong shapes) with
// fuzzer-chosen optimiser options. Invariants: OK or a documented error; OK losses and logits are
// finite; a refused set_parameters or training step leaves every weight bit-identical.
#include <cstdint>
#include <vector>

#include "fuzz_input.h"
#include "model/tiny_transformer.h"
#include "train/trainer.h"

namespace {

attn::TinyConfig config_from(fuzz::Input& in) {
  attn::TinyConfig c;
  c.vocab_size = in.in(0, 9);
  c.max_length = in.in(0, 8);
  c.d_model = in.in(0, 8);
  c.num_heads = in.in(1, 3);
  c.num_layers = in.in(0, 2);
  c.mlp = in.flag();
  if (in.flag()) c.mlp_hidden = in.in(1, 6);
  c.positional = static_cast<attn::PositionalKind>(in.in(0, 3));  // 3: out of range
  c.norm = static_cast<attn::NormKind>(in.in(0, 2));
  c.causal = in.flag();
  c.seed = in.byte();
  return c;
}

attn::IdBatch ids_from(fuzz::Input& in, int b, int t, int vocab, bool targets) {
  attn::IdBatch ids{b, t, std::vector<std::int32_t>(static_cast<std::size_t>(b) * t)};
  for (auto& id : ids.data) {
    const int r = in.in(0, 15);
    id = r == 0                ? -1 - in.byte()
         : r == 1              ? vocab + in.byte()
         : (targets && r == 2) ? -100
                               : in.in(0, vocab > 0 ? vocab - 1 : 0);
  }
  return ids;
}

std::vector<std::vector<float>> weights_of(const attn::TinyTransformer& m) {
  std::vector<std::vector<float>> w;
  for (const auto& p : m.parameters()) w.push_back(p.data);
  return w;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Input in(data, size);
  attn::TinyTransformer model;
  const attn::Status created = attn::TinyTransformer::create(config_from(in), model);
  fuzz::check_error(created);
  if (!created.ok()) return 0;
  const attn::TinyConfig& c = model.config();

  if (in.flag()) {  // a whole state dict: the model's shapes, one perhaps wrong, fuzzer values
    std::vector<attn::Tensor> values;
    for (const auto& p : model.parameters()) values.push_back(in.in(0, 3) == 0 ? in.tensor(p.shape) : p);
    if (in.in(0, 7) == 0 && !values.empty()) values.back().shape.push_back(1);
    const auto before = weights_of(model);
    const attn::Status s = model.set_parameters(values);
    fuzz::check_error(s);
    if (!s.ok() && weights_of(model) != before) fuzz::fail("a refused set_parameters changed weights", s);
  }

  attn::AdamWOptions opt;
  if (in.flag()) opt.lr = in.value();
  if (in.flag()) opt.weight_decay = in.value();
  if (in.flag()) opt.clip_grad_norm = in.value();
  attn::Trainer trainer;
  const attn::Status ts = attn::Trainer::create(&model, opt, trainer);
  fuzz::check_error(ts);

  for (int step = in.in(1, 3); step > 0; --step) {
    const int b = in.in(1, 3), t = in.in(1, c.max_length + 1);
    const attn::IdBatch ids = ids_from(in, b, t, c.vocab_size, false);
    attn::IdBatch targets = ids_from(in, b, t, c.vocab_size, true);
    if (in.in(0, 15) == 0) targets.t += 1;  // a shape mismatch
    float loss = 0.0f;
    const attn::Status ls = model.loss(ids, targets, loss);
    fuzz::check_error(ls);
    if (ls.ok() && !std::isfinite(loss)) fuzz::fail("OK with a non-finite loss", ls);
    if (!ts.ok()) continue;
    const auto before = weights_of(model);
    attn::TrainStepResult r;
    const attn::Status ss = trainer.step(ids, targets, r);
    fuzz::check_error(ss);
    if (!ss.ok() && weights_of(model) != before) fuzz::fail("a refused step changed weights", ss);
    if (ss.ok() && !(std::isfinite(r.loss) && std::isfinite(r.grad_norm)))
      fuzz::fail("OK step, non-finite loss", ss);
    if (ss.ok())
      for (const auto& w : weights_of(model))
        if (!fuzz::all_finite(w)) fuzz::fail("OK step, non-finite weight", ss);
  }
  return 0;
}
