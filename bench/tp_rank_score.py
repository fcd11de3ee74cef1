#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Reads bench/tp_rank_check.py's runs (one tensor-parallel rank of Llama-3.3-70B on one H200,
its all-reduces left out) with the clock nvidia-smi sampled beside them, and holds the tool
against them and against issue 42's TP 2 and TP 4 steps (no GPU needed):

  headroom  the run with idle gaps where the all-reduces go (--gap-cycles): how much of the gaps'
            headroom under the power limit the computation spent on a higher clock. The gaps
            last gap_cycles × (2 · layers + 1) cycles at the clock nvidia-smi measured during
            the run (the clock does not change between a 0.3 ms gap and the GEMMs around it);
            the share = (rank alone + gaps − rank with gaps) / gaps. This fits
            collective_headroom_share (specs/arch/hopper.yaml): the median of the runs' shares.
            Beside it, the share were the gaps as long as alone at the boost clock
            (gaps_alone_ms): a lower bound. nvidia-smi's timestamps are read as UTC, the device
            machine's zone (its windows' clocks and power match their phases).
  rank      the tool's rank with its collectives taken out (its network as --emit-yaml writes
            it, the collective layers dropped) against the rank measured, each run's card
  steps     the tool's whole TP step (`roofline-advise examples/configs/llama-3.3-70b.json --gpu
            h200 --tp N`: the prefill's predicted time, the decode's graph time) against issue
            42's measurements (the steering side's, 2026-11-28, a host of four H200s; third-party
            to the fit: no decision was made on them)

    python3 bench/tp_rank_score.py RUN.json[:SMI.csv] ... [--tool PATH]
"""
import argparse
import csv
import datetime
import os
import statistics
import subprocess
import sys
import tempfile

import json

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from tool_report import tool_json  # noqa: E402

CONFIG = "examples/configs/llama-3.3-70b.json"
STEPS = {("prefill", 1): ["--phase", "prefill", "--batch", "1", "--seq-len", "4096"],
         ("decode", 32): ["--phase", "decode", "--batch", "32", "--seq-len", "1", "--kv-len",
                          "4096"],
         ("decode", 1): ["--phase", "decode", "--batch", "1", "--seq-len", "1", "--kv-len",
                         "4096"]}
# Issue 42's table: Llama-3.1-70B, PyTorch 2.11, Megatron's split, NCCL all-reduces,
# graph-replayed, the slowest rank; ms.
ISSUE = {(2, "prefill", 1): 528, (2, "decode", 32): 29.6, (2, "decode", 1): 24.2,
         (4, "prefill", 1): 298, (4, "decode", 32): 19.7, (4, "decode", 1): 16.5}


def smi_clock(path, start, end):
    """Mean SM clock (MHz) nvidia-smi sampled in [start + 0.3 s, end] (Unix seconds, UTC)."""
    clocks = []
    with open(path, newline="") as f:
        for row in list(csv.reader(f))[1:]:
            try:
                t = datetime.datetime.strptime(row[0].strip(), "%Y/%m/%d %H:%M:%S.%f")
            except (ValueError, IndexError):
                continue
            t = t.replace(tzinfo=datetime.timezone.utc).timestamp()
            if start + 0.3 <= t <= end:
                clocks.append(float(row[1]))
    return statistics.mean(clocks) if clocks else None


def tool_ms(tool, tp, phase, batch, keep_collectives=True):
    args = ["--gpu", "h200", "--tp", str(tp)] + STEPS[(phase, batch)]
    if keep_collectives:
        report = tool_json(tool, CONFIG, *args, cwd=ROOT)
    else:
        with tempfile.TemporaryDirectory() as d:
            net = os.path.join(d, "rank.yaml")
            subprocess.run([tool, CONFIG, *args, "--emit-yaml", net, "-f", "json"], cwd=ROOT,
                           check=True, stdout=subprocess.DEVNULL)
            kept = [line for line in open(net, encoding="utf-8")
                    if "type: all_reduce" not in line]
            with open(net, "w", encoding="utf-8") as f:
                f.writelines(kept)
            report = tool_json(tool, net, "--gpu", "h200", cwd=ROOT)
    t = report["totals"]
    ms = (report["serving"]["graph_time_us"] if phase == "decode"
          else t["predicted_time_us"]) / 1e3
    return ms, report["power"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("runs", nargs="+", help="RUN.json[:SMI.csv]")
    ap.add_argument("--tool", default=os.path.join(ROOT, "build-nocuda", "roofline-advise"))
    a = ap.parse_args()
    shares, ranks = [], {}
    print("| run | step | rank alone | with gaps | gaps at the run's clock | won back | "
          "gaps alone at boost | won back (lower bound) |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for spec in a.runs:
        path, _, smi = spec.partition(":")
        doc = json.load(open(path, encoding="utf-8"))
        results = [r for r in doc["results"] if "graph_ms" in r]
        alone = {(r["tp"], r["phase"], r["batch"]): r for r in results if not r.get("gap_cycles")}
        for k, r in alone.items():
            ranks.setdefault(k, []).append((r["graph_ms"], os.path.basename(path)))
        for r in results:
            if not r.get("gap_cycles") or not smi:
                continue
            base = alone[(r["tp"], r["phase"], r["batch"])]
            clock = smi_clock(smi, r["started_unix"], r["ended_unix"])
            base_clock = smi_clock(smi, base["started_unix"], base["ended_unix"])
            if clock is None or base_clock is None:
                sys.exit(f"{smi}: no clock sampled during {r['name']} or its rank alone")
            gaps_ms = r["gap_cycles"] * (2 * r["layers"] + 1) / (clock * 1e6) * 1e3
            share = (base["graph_ms"] + gaps_ms - r["graph_ms"]) / gaps_ms
            at_boost = (base["graph_ms"] + r["gaps_alone_ms"] - r["graph_ms"]) / r["gaps_alone_ms"]
            shares.append(share)
            print(f"| {os.path.basename(path)} | TP {r['tp']} {r['phase']} | "
                  f"{base['graph_ms']:.1f} ms at {base_clock:.0f} MHz | "
                  f"{r['graph_ms']:.1f} ms at {clock:.0f} MHz | {gaps_ms:.1f} ms | {share:.2f} | "
                  f"{r['gaps_alone_ms']:.1f} ms | {at_boost:.2f} |")
    if shares:
        print(f"\ncollective_headroom_share: {statistics.median(shares):.3f} "
              f"(median of {len(shares)})\n")
    print("| rank | measured (card) | tool, no collectives | ratio | slowdown |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for (tp, phase, batch), measured in sorted(ranks.items()):
        ms, power = tool_ms(a.tool, tp, phase, batch, keep_collectives=False)
        for m, run in measured:
            print(f"| TP {tp} {phase} batch {batch} | {m:.1f} ms ({run}) | {ms:.1f} ms | "
                  f"{ms / m:.2f} | {power['clock_bound_slowdown']:.3f} |")
    print("\n| step | issue 42 measured | tool | ratio | capped | slowdown |")
    print("| --- | ---: | ---: | ---: | --- | ---: |")
    ratios = []
    for (tp, phase, batch), measured in sorted(ISSUE.items()):
        ms, power = tool_ms(a.tool, tp, phase, batch)
        ratios.append(ms / measured)
        print(f"| TP {tp} {phase} batch {batch} | {measured} ms | {ms:.1f} ms | "
              f"{ms / measured:.2f} | {power['capped']} | {power['clock_bound_slowdown']:.3f} |")


if __name__ == "__main__":
    main()
