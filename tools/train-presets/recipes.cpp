#include "recipes.h"

namespace presets {
namespace {

attn::TinyConfig shape(int d, int heads, int layers, bool mlp, int mlp_hidden = 0) {
  attn::TinyConfig c;
  c.d_model = d;
  c.num_heads = heads;
  c.num_layers = layers;
  c.mlp = mlp;
  c.mlp_hidden = mlp_hidden;
  c.seed = 1;
  return c;
}

// The reverse task: one head mirrors the input by position.
Recipe reverse_recipe() {
  return {
      "reverse",
      "Reverse a sequence",
      "Reads L symbols, then a separator, and writes them back in reverse order. One layer is enough: "
      "each answer position looks up, by position alone, the input it must repeat.",
      "reverse",
      6,
      10,
      shape(32, 1, 1, true),
      1e-2f,
      1500,
      32,
      {{"mirror", 0, 0.9,
        "The mirror head, the model's only one. At the k-th answer position it puts almost all its weight "
        "on the k-th input from "
        "the end, the symbol to write next: the anti-diagonal in the lower half of the heatmap. It goes by "
        "position, not by content (learned position embeddings); ablate it and the model cannot answer."}}};
}

// The copy task: one head looks a fixed {L} positions back.
Recipe copy_recipe() {
  return {"copy",
          "Copy a sequence",
          "Reads L symbols, then a separator, and writes them again in order.",
          "copy",
          6,
          10,
          shape(32, 2, 1, true),
          1e-2f,
          1500,
          32,
          {{"offset", 0, 0.9,
            "The copy head. Every answer position looks exactly {L} positions back, at the input it "
            "must repeat: "
            "a diagonal line parallel to the main one."}}};
}

// The sort task: a head looks up inputs by content.
Recipe sort_recipe() {
  return {
      "sort",
      "Sort a sequence",
      "Reads L symbols, then a separator, and writes them in ascending order.",
      "sort",
      5,
      10,
      shape(32, 2, 2, true, 64),
      3e-3f,
      4000,
      32,
      {{"same-value", -1, 0.6,
        "The lookup head. At each answer position it attends to an input holding the symbol the model is "
        "about to write: the smallest input not yet written. It searches by content: its bright cells jump "
        "around the input with the values."}}};
}

// Induction heads: a previous-token head (layer 0) and an induction head (layer 1).
Recipe induction_recipe() {
  return {
      "induction",
      "Induction heads",
      "Random symbols in which a segment of 6 to 11 distinct symbols is immediately repeated. Inside the "
      "repeat, each next symbol is predictable only by finding where the current one occurred before and "
      "copying what followed it; the segment's length varies, so no fixed offset works. Two attention-only "
      "layers.",
      "repeat",
      24,
      16,
      shape(32, 2, 2, false),
      3e-3f,
      6000,
      32,
      {{"previous-token-in-segment", 0, 0.9,
        "The previous-token head (layer 0). In the first segment every position attends to the one just "
        "before it, so each position there carries \"which symbol preceded me\": the line just below the "
        "diagonal. That is what the induction head looks up later."},
       {"induction", 1, 0.8,
        "The induction head (layer 1). In the repeat each position attends to the position right after the "
        "earlier occurrence of its own symbol, found through what the previous-token head wrote there, and "
        "copies that symbol: a diagonal band one step past the repeat's offset."}}};
}

// The character-level language model of the project's documentation.
Recipe text_recipe() {
  return {
      "text",
      "A character-level language model",
      "Two layers trained to predict the next character of this project's own documentation (MIT licensed). "
      "Type English into the demo: it shows which earlier characters each position reads to guess the next.",
      "text",
      64,
      0,
      shape(40, 4, 2, true, 80),
      3e-3f,
      4000,
      16,
      {{"previous-token", 0, 0.4,
        "A previous-character head (layer 0): at close to half of all positions its strongest weight is on "
        "the character just before, which "
        "the next layer combines into bigrams and word pieces."}}};
}

}  // namespace

// Every preset, in the order the demo lists them; each recipe is its own function above.
std::vector<Recipe> all_recipes() {
  return {reverse_recipe(), copy_recipe(), sort_recipe(), induction_recipe(), text_recipe()};
}

}  // namespace presets
