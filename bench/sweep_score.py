#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The simulated load against published concurrency sweeps (issue 41 part 5): for each row of
bench/data/published/serving-sweeps.csv with fixed input and output lengths and a concurrency
(NVIDIA NIM's Llama-3.3-70B fp8 table), the tool's closed loop at that concurrency
(`compare CONFIG --gpus GPU --tp N --quantization fp8 --prompt-tokens ISL --output-tokens OSL
--concurrency C --num-requests R`) beside the published TTFT, inter-token latency and output
throughput. NIM measures with genai-perf, whose inter-token latency is a request's (latency −
TTFT) / (output tokens − 1): the tool's TPOT, not the gap between two steps (its ITL); the page
does not say whether its figures are medians or means, and the tool's p50 is held against them.
Nothing is fitted on these figures. Rows of a length spread (ShareGPT) are skipped: the dataset
is not here.

    python3 bench/sweep_score.py --tool build-nocuda/roofline-advise
"""
import argparse
import csv
import json
import os
import statistics
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIGS = {"meta-llama/Llama-3.3-70B-Instruct": "llama-3.3-70b.json",
           "meta-llama/Llama-3.1-8B-Instruct": "llama-3.1-8b.json"}
GPUS = {"H100-80GB": "h100-sxm5", "H200": "h200-sxm"}


def simulated(tool, row):
    config = os.path.join(HERE, "..", "examples", "configs", CONFIGS[row["model"]])
    concurrency = int(row["concurrency"])
    args = [tool, "compare", config, "--gpus", GPUS[row["gpu"]], "--tp", row["tp"],
            "--prompt-tokens", row["isl"], "--output-tokens", row["osl"],
            "--concurrency", str(concurrency), "--num-requests", str(max(8 * concurrency, 200)),
            "--format", "json"]
    if row["precision"].startswith("fp8"):
        args += ["--quantization", "fp8"]
    out = subprocess.run(args, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["setups"][0]["simulation"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tool", default="build/roofline-advise")
    ap.add_argument("--published", default=os.path.join(HERE, "data", "published",
                                                        "serving-sweeps.csv"))
    args = ap.parse_args()
    with open(args.published, newline="") as f:
        rows = [r for r in csv.DictReader(f)
                if r["isl"] and r["osl"] and r["concurrency"] and r["model"] in CONFIGS
                and r["gpu"] in GPUS]
    print("| model | GPU ×TP | ISL/OSL | concurrency | TTFT pub. / tool (ms) | ratio | "
          "ITL pub. / tool TPOT p50 (ms) | ratio | out tok/s pub. / tool | ratio |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    ratios = {"ttft": [], "itl": [], "tokens": []}
    for row in rows:
        s = simulated(args.tool, row)
        ttft, itl = s["ttft_ms"]["p50"], s["tpot_ms"]["p50"]
        tokens = s["output_tokens_per_s"]
        pub = {"ttft": float(row["ttft_p50_ms"]), "itl": float(row["itl_p50_ms"]),
               "tokens": float(row["output_tok_per_s"])}
        tool = {"ttft": ttft, "itl": itl, "tokens": tokens}
        for k in ratios:
            ratios[k].append(tool[k] / pub[k])
        print(f"| {row['model'].split('/')[1]} | {row['gpu']} ×{row['tp']} | "
              f"{row['isl']}/{row['osl']} | {row['concurrency']} | "
              f"{pub['ttft']:.0f} / {ttft:.0f} | {ttft / pub['ttft']:.2f} | "
              f"{pub['itl']:.1f} / {itl:.1f} | {itl / pub['itl']:.2f} | "
              f"{pub['tokens']:.0f} / {tokens:.0f} | {tokens / pub['tokens']:.2f} |")
    for k, v in ratios.items():
        within = sum(abs(r - 1) <= 0.15 for r in v)
        print(f"\n{k}: median tool/published {statistics.median(v):.2f} "
              f"({min(v):.2f}-{max(v):.2f}), {within} of {len(v)} within 15%")


if __name__ == "__main__":
    main()
