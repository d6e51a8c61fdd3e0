// The presets `npm run train-presets` writes (web/presets/): what each trains, with which model and
// budget, and what its notable heads are claimed to do (claims.h). Everything is seeded: the same
// build gives the same bytes.
#pragma once
#include <string>
#include <vector>

#include "model/tiny_transformer.h"

namespace presets {

struct HeadClaim {
  std::string kind;         // claims.h
  int layer = -1;           // the layer to look in; −1: any
  double min_fraction = 0;  // required (full budget) and written into the file
  std::string explanation;  // for readers; {L} is replaced by the task length
};

struct Recipe {
  std::string name, title, summary;
  std::string task;  // a toy task (train/tasks.h), or "text" (the character model)
  int length = 6, num_symbols = 10;
  attn::TinyConfig model;  // vocab_size and max_length are filled from the task
  float lr = 1e-2f;
  int steps = 1500, batch = 32;
  std::vector<HeadClaim> claims;
};

std::vector<Recipe> all_recipes();

}  // namespace presets
