#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Holds bench/parallel_check.py's measurements (OUT/parallel.json) against the tool, run here
(no GPU needed; datasheet specs, nothing fitted on these):

  collectives  each op and size as a network of one collective layer over the run's GPUs, bf16
               (bytes as the tool counts them: an all-gather's output is the GPUs' inputs
               together), `roofline-advise NET --gpu h200`: the op's device time
  pp           the 1F1B step of M micro-batches at PP = the run's GPUs, as `roofline-advise train
               bench/data/parallel/pp-check-llama-8-layers.json --cluster dgx-h200` prices it with
               the layout pinned (TP 1, DP 1, micro-batch 1, no recomputation), its optimizer
               left out (the run has none)
  moe          one GPU's Mixtral-like MoE layer at EP = the run's GPUs, 4096 tokens a GPU, as a
               network of the dispatch all-to-all, the layer (expert_parallel, each GPU's own
               tokens) and the combine all-to-all: forward, and forward + backward (training,
               its optimizer left out)

    python3 bench/parallel_score.py bench/data/parallel/h200x2-run1.json [--tool PATH]
"""
import argparse
import json
import os
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from tool_report import tool_json  # noqa: E402

KINDS = {"all_reduce": "all_reduce", "reduce_scatter_tensor": "reduce_scatter",
         "all_gather_into_tensor": "all_gather", "all_to_all_single": "all_to_all",
         "send_recv": "send"}


def network_ms(tool, text, keep=lambda o: True, training=False):
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(text)
        path = f.name
    try:
        report = tool_json(tool, path, "--gpu", "h200", cwd=ROOT)
    finally:
        os.unlink(path)
    return sum(o["device_time_us"] * o["count"] for o in report["ops"]
               if keep(o) and o["pass"] != "optimizer") / 1e3


def collective_ms(tool, op, world, input_bytes):
    kind = KINDS[op]
    message = input_bytes * (world if kind == "all_gather" else 1)
    gpus = "" if kind == "send" else f", gpus: {world}"
    return network_ms(tool, f"name: c\nprecision: bf16\nlayers:\n  - {{name: c, type: {kind}"
                            f"{gpus}, features: {message // 2}}}\n")


def pp_ms(tool, world, micro_batches):
    report = tool_json(tool, "train", "bench/data/parallel/pp-check-llama-8-layers.json",
                      "--cluster", "dgx-h200", "--gpus", str(world), "--global-batch",
                      str(micro_batches), "--seq-len", "2048", "--tp", "1", "--pp", str(world),
                      "--dp", "1", "--cp", "1", "--micro-batch", "1", "--virtual-stages", "1",
                       "--zero", "0", "--recompute", "none", cwd=ROOT)
    e = report["answers"][0]["ranked"][0]
    return (e["step_s"] - e["optimizer_s"]) * 1e3


def moe_ms(tool, world, training):
    exchange = (f"  - {{name: a2a, type: all_to_all, gpus: {world}, features: 4096, "
                f"copies: 2}}\n")
    text = ("name: moe\nprecision: bf16\nbatch: 2\nseq_len: 2048\n"
            + ("mode: training\n" if training else "") + "layers:\n" + exchange
            + "  - {name: moe, type: moe, experts: 8, top_k: 2, in: 4096, intermediate: 14336, "
              f"expert_parallel: {world}}}\n" + exchange)
    return network_ms(tool, text)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("results")
    parser.add_argument("--tool", default=os.path.join(ROOT, "build-nocuda", "roofline-advise"))
    a = parser.parse_args()
    with open(a.results) as f:
        doc = json.load(f)
    ratios = []
    for run in doc["runs"]:
        world = run.get("world")
        print(f"\n{','.join(run['parts'])} on {world} × {run['device_names'][0]} "
              f"(torch {run.get('torch')}, NCCL {run.get('nccl')})")
        for r in run["results"]:
            if r.get("status") != "ok" or "check" in r:
                continue
            if r.get("kind") == "collective":
                measured = r["median_s_max_over_ranks"] * 1e3
                tool = collective_ms(a.tool, r["op"], world, r["input_bytes"])
                ratios.append(tool / measured)
                print(f"| {r['op']} | {r['input_bytes'] >> 20} MiB | {measured:.3f} ms | "
                      f"{tool:.3f} ms | {tool / measured:.2f} |")
            elif r.get("kind") == "pp_step":
                measured = r["step_s"] * 1e3
                tool = pp_ms(a.tool, world, r["micro_batches"])
                print(f"| 1F1B, PP {world}, {r['micro_batches']} micro-batches | {measured:.1f} ms "
                      f"| {tool:.1f} ms | {tool / measured:.2f} |")
            elif r.get("kind") == "moe_layer":
                measured = r["layer_s"] * 1e3
                tool = moe_ms(a.tool, world, r["mode"] != "forward")
                print(f"| MoE layer, EP {world}, {r['mode']} | {measured:.2f} ms | {tool:.2f} ms | "
                      f"{tool / measured:.2f} |")
    if ratios:
        ratios.sort()
        print(f"\ncollectives: median tool/measured {statistics.median(ratios):.2f} "
              f"({ratios[0]:.2f}-{ratios[-1]:.2f}), {len(ratios)} points")


if __name__ == "__main__":
    main()
