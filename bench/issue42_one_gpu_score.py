#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Holds bench/issue42_one_gpu.sh's measurements against the tool (run here, no GPU needed):

  expert GEMMs  bench/moe_ep_check.py's gate, up and down GEMMs of one GPU of a Mixtral layer at
                TP 4 and at EP 4, against the tool's `decoder_layer/moe/experts/*` device times
                of `roofline-advise mixtral-8x7b.json --gpu h200 --tp 4 [--ep 4]` at as many
                tokens (a decode step of that batch, or a prefill of that many tokens)
  GPT 1.7B      bench/megatron_step_check.py's forward + backward against the tool's training
                step of bench/data/training/configs/gpt-1.7b.json (its optimizer left out)

    python3 bench/issue42_one_gpu_score.py [--tool build-nocuda/roofline-advise] [--data DIR]

DIR holds moe_ep.json and megatron_steps.json (default: bench/data/training's H200 run 1, whose
files are h200-moe-ep-run1.json and h200-megatron-steps-run1.json).
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


sys.path.insert(0, HERE)
from tool_report import tool_json  # noqa: E402


def device_ms(report, keep):
    return sum(o["device_time_us"] * o["count"] for o in report["ops"] if keep(o)) / 1e3


MIXTRAL = "examples/configs/mixtral-8x7b.json"


def expert_gemms(tool, tokens, ep):
    step = (["--phase", "decode", "--batch", str(tokens), "--kv-len", "128"] if tokens < 1024
            else ["--seq-len", str(tokens)])
    report = tool_json(tool, MIXTRAL, "--gpu", "h200", "--tp", "4", *(["--ep", "4"] if ep else []),
                       *step, cwd=ROOT)
    with open(os.path.join(ROOT, MIXTRAL)) as f:
        layers = json.load(f)["num_hidden_layers"]
    # One layer's (the ops of a repeat block count every layer).
    return device_ms(report, lambda o: o["layer"].startswith("decoder_layer/moe/experts/")
                     and o["kind"] == "gemm") / layers


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", default=os.path.join(ROOT, "build-nocuda", "roofline-advise"))
    parser.add_argument("--data", default=os.path.join(HERE, "data", "training"))
    a = parser.parse_args()
    moe_file = "moe_ep.json" if os.path.exists(os.path.join(a.data, "moe_ep.json")) \
        else "h200-moe-ep-run1.json"
    gpt_file = "megatron_steps.json" if os.path.exists(os.path.join(a.data, "megatron_steps.json")) \
        else "h200-megatron-steps-run1.json"
    with open(os.path.join(a.data, moe_file)) as f:
        moe = json.load(f)
    print(f"expert GEMMs of one Mixtral layer, one GPU of 4 ({moe['gpu']}, torch {moe['torch']})")
    print("| tokens | TP 4 bmm | tool | EP 4 bmm | tool | EP/TP measured | EP/TP tool | "
          "grouped TP 4 | grouped EP 4 |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    rows = {(r["layout"], r["tokens"]): r for r in moe["results"] if "error" not in r}
    for tokens in sorted({t for _, t in rows}):
        tp, ep = rows.get(("tp4", tokens)), rows.get(("ep4", tokens))
        if not tp or not ep:
            continue
        tool_tp, tool_ep = expert_gemms(a.tool, tokens, False), expert_gemms(a.tool, tokens, True)
        grouped = [r["grouped_ms"] for r in (tp, ep)]
        print(f"| {tokens} | {tp['bmm_ms']:.3f} ms | {tool_tp:.3f} | {ep['bmm_ms']:.3f} | "
              f"{tool_ep:.3f} | {ep['bmm_ms'] / tp['bmm_ms']:.2f} | {tool_ep / tool_tp:.2f} | "
              + " | ".join(f"{g:.3f}" if g else "—" for g in grouped) + " |")
    with open(os.path.join(a.data, gpt_file)) as f:
        gpt = json.load(f)
    print(f"\nGPT 1.7B forward + backward, 4096 tokens ({gpt['gpu']}, torch {gpt['torch']})")
    print("| micro-batch | eager | compiled | tool | tool / compiled |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    for batch in (1, 4):
        measured = {r["compiled"]: r["forward_backward_ms"] for r in gpt["results"]
                    if r.get("batch") == batch and "error" not in r}
        report = tool_json(a.tool, "bench/data/training/configs/gpt-1.7b.json", "--mode",
                           "training", "--seq-len", "4096", "--batch", str(batch), "--gpu", "h200",
                           cwd=ROOT)
        tool = device_ms(report, lambda o: o["pass"] != "optimizer")
        if True in measured and False in measured:
            print(f"| {batch} | {measured[False]:.1f} ms | {measured[True]:.1f} ms | {tool:.1f} ms "
                  f"| {tool / measured[True]:.2f} |")


if __name__ == "__main__":
    main()
