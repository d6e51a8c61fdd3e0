#include "train/evaluate.h"

#include "model/layers.h"

namespace attn {

namespace {

// Adds one batch's correct tokens and sequences; logits (B, T, V), targets (B, T).
void score_batch(const Tensor& logits, const IdBatch& targets, std::int64_t& tokens,
                 std::int64_t& right_tokens, std::int64_t& right_sequences) {
  const int v = logits.dim(-1);
  for (int b = 0; b < targets.b; ++b) {
    bool all = true;
    for (int t = 0; t < targets.t; ++t) {
      const std::int32_t want = targets.data[static_cast<std::size_t>(b) * targets.t + t];
      if (want == kIgnoreIndex) continue;
      const float* row = logits.data.data() + (static_cast<std::int64_t>(b) * targets.t + t) * v;
      int best = 0;
      for (int j = 1; j < v; ++j)
        if (row[j] > row[best]) best = j;
      ++tokens;
      right_tokens += best == want ? 1 : 0;
      all = all && best == want;
    }
    right_sequences += all ? 1 : 0;
  }
}

}  // namespace

Status evaluate(TinyTransformer& model, const Task& task, int batches, int batch_size, std::uint64_t seed,
                EvalResult& out) {
  if (batches < 1 || batch_size < 1) {
    return Status::Error(StatusCode::kInvalidArgument, "batches and batch size must be >= 1, got " +
                                                           std::to_string(batches) + " and " +
                                                           std::to_string(batch_size));
  }
  if (task.vocab_size() > model.config().vocab_size) {
    return Status::Error(StatusCode::kInvalidArgument, "the task has " + std::to_string(task.vocab_size()) +
                                                           " tokens but the model's vocabSize is " +
                                                           std::to_string(model.config().vocab_size));
  }
  std::int64_t tokens = 0, right_tokens = 0, right_sequences = 0;
  double loss_sum = 0.0;
  for (int i = 0; i < batches; ++i) {
    IdBatch ids{batch_size, task.sequence_length(), {}}, targets{batch_size, task.sequence_length(), {}};
    ATTN_RETURN_IF_ERROR(
        task.batch_at(seed, static_cast<std::uint64_t>(i), batch_size, ids.data, targets.data));
    TinyForwardResult r;
    ATTN_RETURN_IF_ERROR(model.forward(ids, {}, r));
    float loss = 0.0f;
    std::int64_t scored = 0;
    ATTN_RETURN_IF_ERROR(cross_entropy(static_cast<std::int64_t>(batch_size) * ids.t, r.logits.dim(-1),
                                       r.logits.data.data(), targets.data.data(), loss, nullptr, &scored));
    loss_sum += static_cast<double>(loss) * static_cast<double>(scored);
    score_batch(r.logits, targets, tokens, right_tokens, right_sequences);
  }
  out.loss = static_cast<float>(loss_sum / static_cast<double>(tokens));
  out.token_accuracy = static_cast<double>(right_tokens) / static_cast<double>(tokens);
  out.sequence_accuracy = static_cast<double>(right_sequences) / (static_cast<double>(batches) * batch_size);
  return Status::Ok();
}

}  // namespace attn
