#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The training answer against published cluster-scale throughput (issue 42 part 6): for each row
of bench/data/published/training-layouts.csv that trains a dense model in bf16 with its layout
stated (Narayanan et al. 2021 on A100s, NVIDIA's Megatron-LM H100 table, the Llama 3 405B runs),
`roofline-advise train CONFIG --cluster dgx-a100|dgx-h100 --gpus N --global-batch B --seq-len S`
with the row's TP, PP, DP, CP and (where stated) micro-batch, virtual stages and recomputation
pinned, the rest searched; the TFLOP/s per GPU of its fastest such layout beside the published
one, both counted by the publisher's formula over the tool's step time (`flop_basis`; each counts
attention's full s × s scores, where the tool's own count keeps a causal mask's half):
  Narayanan et al. 2021, eq. 3 (with the recomputed forward): 96·s·l·h²·(1 + s/6h + V/16lh)
  Megatron-LM's num_floating_point_operations (megatron/training/training.py of its Megatron-Core
  0.8 era; the README does not state it): 12·s·l·h²·(1 + f/h + 1 + s/h + V/2lh), f = 4h for GPT
  PaLM's (Chowdhery et al. 2022, appendix B), which Llama 3 names: 6N + 12·l·h·s per token
a sequence each. `--own-flops` scores with the tool's own count instead (its
`model_tflop_per_s_per_gpu`). GPT rows are built as GPT-2-style configs of the row's shape
(learned positions, a 4h GELU MLP). Nothing is fitted on these figures.

    python3 bench/training_score.py --tool build-nocuda/roofline-advise
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def gpt_config(row, folder):
    path = os.path.join(folder, row["id"] + ".json")
    with open(path, "w") as f:
        json.dump({"model_type": "gpt2", "n_embd": int(row["hidden"]), "n_layer": int(row["layers"]),
                   "n_head": int(row["heads"]), "n_positions": int(row["seq_len"]),
                   "vocab_size": int(row["vocab"]), "torch_dtype": "bfloat16"}, f)
    return path


def publisher_flops(row, seq):
    """FLOPs a sequence of `seq` tokens takes by the formula the row's figure was counted with."""
    rid = row["id"]
    l, h, v = int(row["layers"]), int(row["hidden"]), int(row["vocab"])
    if rid.startswith("narayanan21-t1"):
        return 96 * seq * l * h * h * (1 + seq / (6 * h) + v / (16 * l * h))
    if rid.startswith("megatronlm-h100"):
        f = int(row["ffn"]) if row["ffn"] else 4 * h
        return 12 * seq * l * h * h * (1 + f / h + 1 + seq / h + v / (2 * l * h))
    if rid.startswith("llama3-405b"):
        return seq * (6 * float(row["params_b"]) * 1e9 + 12 * l * h * seq)
    raise ValueError(rid)


def scored(row):
    """(config kind, cluster, pins, published TFLOP/s, own-count scale) or None for rows not
    scored. The scale: Narayanan counts the recomputed forward pass (4/3 of the model's FLOPs)."""
    rid = row["id"]
    if rid.startswith("narayanan21-t1"):
        return "gpt", "dgx-a100", {"--recompute": "full", "--zero": "0"}, float(row["tflops_per_gpu"]), 4 / 3
    if rid.startswith("megatronlm-h100") and row["tp"]:
        return "gpt", "dgx-h100", {"--zero": "1"}, float(row["tflops_per_gpu"]), 1.0
    if rid.startswith("llama3-405b"):
        return "llama405", "dgx-h100", {}, float(row["tflops_per_gpu"]), 1.0
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tool", default="build/roofline-advise")
    ap.add_argument("--own-flops", action="store_true",
                    help="the tool's own FLOP count (a causal mask's half of attention)")
    ap.add_argument("--published", default=os.path.join(HERE, "data", "published",
                                                        "training-layouts.csv"))
    args = ap.parse_args()
    with open(args.published, newline="") as f:
        rows = list(csv.DictReader(f))
    print("| row | GPUs | layout pinned | tool's layout | published TFLOP/s/GPU | tool | ratio |")
    print("| --- | ---: | --- | --- | ---: | ---: | ---: |")
    ratios = []
    with tempfile.TemporaryDirectory() as folder:
        for row in rows:
            how = scored(row)
            if not how:
                continue
            kind, cluster, pins, published, scale = how
            config = (gpt_config(row, folder) if kind == "gpt" else
                      os.path.join(HERE, "..", "examples", "configs", "llama-3.1-405b.json"))
            gpus, seq = int(row["num_gpus"]), int(row["seq_len"])
            tp, pp = int(row["tp"] or 1), int(row["pp"] or 1)
            cp = int(row["cp"] or 1)
            batch = int(row["gbs_seqs"]) if row["gbs_seqs"] else 16 * 1024 * 1024 // seq
            cmd = [args.tool, "train", config, "--cluster", cluster, "--gpus", str(gpus),
                   "--global-batch", str(batch), "--seq-len", str(seq), "--tp", str(tp),
                   "--pp", str(pp), "--cp", str(cp), "--format", "json"]
            for key, col in (("--micro-batch", "mbs"), ("--virtual-stages", "vpp")):
                if row[col]:
                    cmd += [key, row[col]]
            for key, value in pins.items():
                cmd += [key, value]
            out = subprocess.run(cmd, capture_output=True, text=True)
            if out.returncode != 0:
                print(f"| {row['id']} | {gpus} | TP {tp} PP {pp} CP {cp} | "
                      f"{out.stderr.strip()[:90]} | {published:g} | — | — |")
                continue
            best = json.loads(out.stdout)["answers"][0]["ranked"][0]
            tool = (best["model_tflop_per_s_per_gpu"] * scale if args.own_flops else
                    publisher_flops(row, seq) * batch / best["step_s"] / gpus / 1e12)
            ratios.append(tool / published)
            l = best["layout"]
            shown = (f"DP {l['dp']} mb {l['micro_batch']} v {l['virtual_stages']} "
                     f"ZeRO-{l['zero_stage']} rc {l['recompute']}"
                     + ("" if best["memory"]["fits"] else " (does not fit)"))
            print(f"| {row['id']} | {gpus} | TP {tp} PP {pp} CP {cp} | {shown} | {published:g} | "
                  f"{tool:.0f} | {tool / published:.2f} |")
    within = sum(abs(r - 1) <= 0.15 for r in ratios)
    print(f"\nmedian tool/published {statistics.median(ratios):.2f} "
          f"({min(ratios):.2f}-{max(ratios):.2f}), {within} of {len(ratios)} within 15%")


if __name__ == "__main__":
    main()
