#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The tool's serving answer against published engine throughput (issue 41 part 5): for each row
of ../shared/data/published/trtllm-perf-overview.csv (NVIDIA's TensorRT-LLM performance overview:
ModelOpt FP8 checkpoints, offline maximum throughput, fixed input and output lengths), the tool's
full-load output tokens/s per GPU (`compare CONFIG --gpus GPU --tp N --prompt-tokens ISL
--output-tokens OSL --quantization fp8 [--kv-cache-dtype fp8]`, no latency target: the largest
batch that fits) over the published figure per GPU (TRT-a's totals divided by the GPUs). Nothing
is fitted on these figures.

    python3 bench/published_score.py --tool build-nocuda/roofline-advise [--kv-cache-dtype fp8]
"""
import argparse
import csv
import json
import os
import statistics
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIGS = {"Llama-3.1-8B-Instruct-FP8": "llama-3.1-8b.json",
           "Llama-3.3-70B-Instruct-FP8": "llama-3.3-70b.json"}
GPUS = {"H100": "h100-sxm5", "H200": "h200-sxm"}


def predicted(tool, row, kv_cache):
    config = os.path.join(HERE, "..", "examples", "configs", CONFIGS[row["model"]])
    args = [tool, "compare", config, "--gpus", GPUS[row["gpu"]], "--tp", row["tp"],
            "--prompt-tokens", row["isl"], "--output-tokens", row["osl"], "--quantization", "fp8",
            "--format", "json"]
    if kv_cache:
        args += ["--kv-cache-dtype", kv_cache]
    out = subprocess.run(args, capture_output=True, text=True)
    if out.returncode != 0:
        return None, out.stderr.strip().splitlines()[-1]
    setup = json.loads(out.stdout)["setups"][0]
    return setup["serving"]["output_tokens_per_s_per_gpu"], setup["serving"]["batch"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tool", default="build/roofline-advise")
    ap.add_argument("--published",
                    default=os.path.join(HERE, "..", "..", "shared", "data", "published",
                                         "trtllm-perf-overview.csv"))
    ap.add_argument("--kv-cache-dtype", default="", help="e.g. fp8; default: the layer's")
    args = ap.parse_args()
    with open(args.published, newline="") as f:
        rows = list(csv.DictReader(f))
    print("| source | model | GPU | TP | ISL/OSL | published tok/s/GPU | tool tok/s/GPU | batch | "
          "tool / published |")
    print("| --- | --- | --- | ---: | --- | ---: | ---: | ---: | ---: |")
    ratios = {}
    for row in rows:
        per_gpu = float(row["tokens_per_s"])
        if row["figure"].startswith("total"):
            per_gpu /= int(row["tp"])
        tool, batch = predicted(args.tool, row, args.kv_cache_dtype)
        model = row["model"].replace("-Instruct-FP8", "")
        if tool is None:
            print(f"| {row['source']} | {model} | {row['gpu']} | {row['tp']} | "
                  f"{row['isl']}/{row['osl']} | {per_gpu:.0f} | — | — | {batch} |")
            continue
        ratio = tool / per_gpu
        ratios.setdefault(f"{model} {row['gpu']}", []).append(ratio)
        print(f"| {row['source']} | {model} | {row['gpu']} | {row['tp']} | "
              f"{row['isl']}/{row['osl']} | {per_gpu:.0f} | {tool:.0f} | {batch} | {ratio:.2f} |")
    every = [r for rs in ratios.values() for r in rs]
    print(f"\nall {len(every)}: median ratio {statistics.median(every):.2f}, "
          f"{min(every):.2f}-{max(every):.2f}; within 10%: "
          f"{sum(abs(r - 1) <= 0.10 for r in every)}")
    for key, rs in sorted(ratios.items()):
        print(f"  {key}: {len(rs)} points, median {statistics.median(rs):.2f}")


if __name__ == "__main__":
    main()
