#!/usr/bin/env python3
"""Checks every tiny checkpoint in tests/golden/pretrained/ against the real Hugging Face
transformers forward (issue #25): our fixtures are computed by hand-written torch/numpy forwards
(make_pretrained_fixtures.py, no transformers on the build machine), so this is the independent
proof that they say what transformers says.

Needs transformers (5.x), tokenizers and torch; never run by `npm test`. Usage:
    python3 tests/golden/check_with_transformers.py [report.json]
For every folder, every config file (config.json and, where present, config.transformers5.json)
and every weight file (F32, F16, BF16 with expected.json / expected_f16.json / expected_bf16.json)
it loads the folder with AutoModelForCausalLM (eager attention, float64), runs each case of the
expected file with output_attentions / output_hidden_states, and compares logits, attention and
hidden states; it reruns the greedy generation by hand (argmax, no EOS stop, as the fixture) and
encodes the tokenizer cases with tokenizers. Exit status 1 on any mismatch or failure.
"""
import json
import os
import shutil
import sys
import tempfile
import traceback

import torch
import transformers
from tokenizers import Tokenizer
from transformers import AutoModelForCausalLM

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "pretrained")
# Expected numbers are printed with 7 significant digits: max|a - b| / max(1, max|b|).
REL_TOL = 2e-6
WEIGHTS = (("model.safetensors", "expected.json"),
           ("model.f16.safetensors", "expected_f16.json"),
           ("model.bf16.safetensors", "expected_bf16.json"))


def rel_diff(got, want):
    want_t = torch.tensor(want["data"], dtype=torch.float64).reshape(want["shape"])
    got = got.detach().to(torch.float64).reshape(want_t.shape)
    return float((got - want_t).abs().max() / max(1.0, float(want_t.abs().max())))


def staged_folder(folder, config_name, weights_name):
    """A temporary folder shaped like a Hugging Face checkpoint: the chosen config as
    config.json and the chosen weights as model.safetensors."""
    tmp = tempfile.mkdtemp(prefix="hfcheck-")
    shutil.copy(os.path.join(folder, config_name), os.path.join(tmp, "config.json"))
    shutil.copy(os.path.join(folder, weights_name), os.path.join(tmp, "model.safetensors"))
    for extra in ("tokenizer.json", "tokenizer_config.json", "generation_config.json"):
        if os.path.exists(os.path.join(folder, extra)):
            shutil.copy(os.path.join(folder, extra), os.path.join(tmp, extra))
    return tmp


def check_cases(model, expected):
    # attention[i] of a case is layer expected["attention_layers"][i] (the 16-bit files keep layer 0).
    layers = expected.get("attention_layers")
    worst = {"logits": 0.0, "attention": None, "hidden_states": None}  # None: not in the fixture
    for case in expected["cases"]:
        ids = torch.tensor(case["input_ids"]["data"]).reshape(case["input_ids"]["shape"])
        with torch.no_grad():
            out = model(input_ids=ids, output_attentions=True, output_hidden_states=True)
        worst["logits"] = max(worst["logits"], rel_diff(out.logits, case["logits"]))
        # The 16-bit expectations and some RoPE fixtures hold logits only: check what is there.
        for key, got_all in (("attention", out.attentions), ("hidden_states", out.hidden_states)):
            if key not in case:
                continue
            if key == "attention" and layers is not None:
                got_all = [got_all[layer] for layer in layers]
            if len(got_all) != len(case[key]):
                raise AssertionError(f"{len(got_all)} {key}, fixture has {len(case[key])}")
            for got, want in zip(got_all, case[key]):
                worst[key] = max(worst[key] or 0.0, rel_diff(got, want))
    return worst


def greedy(model, gen):
    ids = torch.tensor(gen["input_ids"])
    for _ in range(gen["max_new_tokens"]):
        with torch.no_grad():
            logits = model(input_ids=ids).logits[:, -1, :]
        ids = torch.cat([ids, logits.argmax(-1, keepdim=True)], dim=1)
    return ids[:, len(gen["input_ids"][0]):].tolist()


def check_one(folder, config_name, weights_name, expected_name):
    expected = json.load(open(os.path.join(folder, expected_name)))
    tmp = staged_folder(folder, config_name, weights_name)
    try:
        model = AutoModelForCausalLM.from_pretrained(tmp, attn_implementation="eager",
                                                     dtype=torch.float64)
        model.eval()
        row = {"class": type(model).__name__}
        row.update(check_cases(model, expected))
        row["generate_ok"] = None  # None: the fixture has no generation
        if "generate" in expected:
            new_ids = greedy(model, expected["generate"])
            row["generate_ok"] = new_ids == expected["generate"]["new_ids"]
            if not row["generate_ok"]:
                row["generate_got"] = new_ids
        row["ok"] = row["generate_ok"] is not False and all(
            row[k] is None or row[k] <= REL_TOL for k in ("logits", "attention", "hidden_states"))
        return row
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def check_tokenizer(folder):
    expected = json.load(open(os.path.join(folder, "expected.json")))
    tok = Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
    bad = []
    for case in expected.get("tokenizer_cases", []):
        # With the special tokens the tokenizer.json's post-processor adds (Llama's BOS), as
        # transformers' tokenizer(text) and our encode do.
        ids = tok.encode(case["text"]).ids
        if ids != case["ids"]:
            bad.append({"text": case["text"], "got": ids, "want": case["ids"]})
    return {"ok": not bad, "cases": len(expected.get("tokenizer_cases", [])), "mismatches": bad}


def main():
    report = {"transformers": transformers.__version__, "torch": torch.__version__,
              "rel_tol": REL_TOL, "rows": []}
    failed = 0
    for name in sorted(os.listdir(FIXTURES)):
        folder = os.path.join(FIXTURES, name)
        configs = [c for c in ("config.json", "config.transformers5.json")
                   if os.path.exists(os.path.join(folder, c))]
        for config_name in configs:
            for weights_name, expected_name in WEIGHTS:
                key = {"fixture": name, "config": config_name, "weights": weights_name}
                try:
                    key.update(check_one(folder, config_name, weights_name, expected_name))
                except Exception as err:  # a load or forward failure is a result too
                    key.update({"ok": False, "error": f"{type(err).__name__}: {err}",
                                "trace": traceback.format_exc()[-1500:]})
                failed += not key["ok"]
                report["rows"].append(key)
                print(json.dumps({k: v for k, v in key.items() if k != "trace"}), flush=True)
        tok = {"fixture": name, "tokenizer": check_tokenizer(folder)}
        tok["ok"] = tok["tokenizer"]["ok"]
        failed += not tok["ok"]
        report["rows"].append(tok)
        print(json.dumps(tok), flush=True)
    report["failed"] = failed
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            json.dump(report, f, indent=1)
    print(f"{len(report['rows'])} checks, {failed} failed (transformers {transformers.__version__})")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
