#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Holds the tool's training memory against bench/training_memory.py's measurement: the same
TinyLlama-1.1B architecture as a model config (bf16, as autocast runs its GEMMs), --mode training
at each measured micro-batch and sequence length, --recompute full where the step checkpointed.
PyTorch's peak (torch.cuda.max_memory_allocated over a step) against the tool's total; nothing
here is fitted.

    python3 bench/training_memory_score.py --tool build-dev/roofline-advise MEASURED.json
"""
import argparse
import json
import os
import subprocess
import tempfile


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("measured", help="training_memory.json of bench/training_memory.py")
    ap.add_argument("--tool", default="build-dev/roofline-advise")
    ap.add_argument("--gpu", default="h200-sxm")
    args = ap.parse_args()
    measured = json.load(open(args.measured))
    config = dict(measured["config"], model_type="llama", torch_dtype="bfloat16",
                  hidden_act="silu")
    fd, path = tempfile.mkstemp(suffix=".json", prefix="tinyllama-")
    with os.fdopen(fd, "w") as f:
        json.dump(config, f)
    print(f"# {measured['gpu']}, torch {measured['torch']}, transformers "
          f"{measured['transformers']}: {args.measured}; tool --gpu {args.gpu}; GB")
    print("| micro-batch × 2048 | recompute | measured: between steps | measured: peak | "
          "predicted: weights + gradients + optimizer | predicted: activations | "
          "predicted total / peak |")
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: |")
    for c in measured["cases"]:
        if "error" in c:
            print(f"| {c['batch']} | {'full' if c['checkpointing'] else 'none'} | {c['error']} |")
            continue
        tool = [args.tool, path, "--mode", "training", "--gpu", args.gpu, "--batch",
                str(c["batch"]), "--seq-len", str(c["seq_len"]), "--format", "json"]
        if c["checkpointing"]:
            tool += ["--recompute", "full"]
        m = json.loads(subprocess.run(tool, check=True, capture_output=True, text=True).stdout)[
            "memory"]
        states = m["weights_bytes"] + m["gradient_bytes"] + m["optimizer_bytes"]
        print(f"| {c['batch']} | {'full' if c['checkpointing'] else 'none'} | "
              f"{c['allocated_between_steps'] / 1e9:.2f} | {c['peak'] / 1e9:.2f} | "
              f"{states / 1e9:.2f} | {m['activation_bytes'] / 1e9:.2f} | "
              f"{m['total_bytes'] / 1e9:.2f} ({m['total_bytes'] / c['peak'] - 1:+.1%}) |")
    os.unlink(path)


if __name__ == "__main__":
    main()
