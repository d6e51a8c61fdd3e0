#!/usr/bin/env python3
"""Writes tests/golden/transformers-default-configs.json: for every architecture we load, the config.json
that transformers' save_pretrained writes for the config class's defaults ("saved") and the class's
full to_dict() ("full"). tests/js/pretrained-config-keys.test.mjs checks that our key tables accept both
(a checkpoint saved by that transformers version carries these keys) and that our class defaults
agree with transformers' where both are set. Needs transformers; never run by `npm test`:
    python3 tests/golden/dump_transformers_configs.py tests/golden/transformers-default-configs.json
"""
import json
import os
import sys
import tempfile

import transformers
from transformers import AutoConfig
out = {"transformers": transformers.__version__, "models": {}}
for mt in ["gpt2", "llama", "qwen2", "qwen3", "mistral", "smollm3", "olmo2", "gemma2", "gemma3_text", "phi3", "granite", "ministral3", "lfm2", "qwen3_5_text", "qwen3_5", "gemma4_text"]:
    try:
        cfg = AutoConfig.for_model(mt)
        d = tempfile.mkdtemp()
        cfg.save_pretrained(d)
        saved = json.load(open(os.path.join(d, "config.json")))
        full = cfg.to_dict()
        out["models"][mt] = {"class": type(cfg).__name__, "saved": saved, "full": {k: v for k, v in full.items() if k != "transformers_version"}}
    except Exception as e:
        out["models"][mt] = {"error": repr(e)}
json.dump(out, open(sys.argv[1], "w"), indent=1, default=str)
print("ok", len(out["models"]))
