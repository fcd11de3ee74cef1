#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The power model's parameters (power_model.hpp) from bench/power_probe.py's NVML readings, and
the tool scored against runs not fitted on (issue 39).

fit:   one run's micro workloads: idle power; DRAM's energy per byte from the 1 GiB copy (beyond
       idle, over the bytes it moved); each precision's energy per FLOP from its compute-bound
       GEMMs held at the power limit (beyond idle and the GEMM's own DRAM bytes at DRAM's energy,
       over its FLOPs; a precision's GEMMs averaged); the burst's length from the bf16 GEMM's
       ramp (the first call past 8% slower than the burst's median).
score: the tool as built (`--tool`), given the parameters in specs/arch/, on other runs' GEMMs
       (`roofline-advise gemm`) and whole steps (bench/step_score.py's commands, --glue eager):
       sustained time and energy per call against NVML's.

    python3 bench/power_fit.py fit bench/data/power/h200-micro-run2.json
    python3 bench/power_fit.py score --tool build-nocuda/roofline-advise --gpu h200 \\
        bench/data/power/h200-micro-run1.json bench/data/power/h200-steps-run2.json
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

ELEMENT_BYTES = {"fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2, "fp8": 1}


def records(path):
    with open(path) as f:
        doc = json.load(f)
    return doc["meta"], [r for r in doc["records"] if "error" not in r]


def gemm_bytes(r):
    size = ELEMENT_BYTES[r["precision"]]
    out = 2 if r["precision"] == "fp8" else size  # fp8 writes bf16
    return (r["m"] * r["k"] + r["k"] * r["n"]) * size + r["m"] * r["n"] * out


def burst_length_s(r):
    ends = r.get("ramp_call_end_s")
    if not ends:
        return None
    calls = [b - a for a, b in zip([0.0] + ends[:-1], ends)]
    burst = statistics.median(calls[1:20])
    for end, call in list(zip(ends, calls))[1:]:  # the first call also pays for its start
        if call > 1.08 * burst:
            return end - call
    return None


def fit(path):
    meta, rs = records(path)
    by = {r["name"]: r for r in rs}
    idle_w = by["idle"]["power_w"]
    copy = by["copy 1 GiB (DRAM)"]
    dram_pj = (copy["power_w"] - idle_w) / (copy["bytes_moved"] / copy["sustained_s"]) * 1e12
    per_precision = {}
    for r in rs:
        if r.get("kind") != "gemm":
            continue
        dynamic_j = (r["power_w"] - idle_w) * r["sustained_s"]
        flop_j = dynamic_j - gemm_bytes(r) * dram_pj * 1e-12
        per_precision.setdefault(r["precision"], []).append(flop_j / r["flops"] * 1e12)
    burst = burst_length_s(by.get("gemm bf16 8192^3", {}))
    print(f"fitted on {path}: {meta['gpu']}, {meta['date']}, limit {meta['power_limit_w']:g} W")
    print(f"  idle {idle_w:.1f} W = {idle_w / meta['power_limit_w']:.4f} of the limit")
    print(f"  DRAM {dram_pj:.1f} pJ/byte (copy at {copy['sustained_tb_per_s']:.3f} TB/s, "
          f"{copy['power_w']:.0f} W)")
    for p, values in per_precision.items():
        print(f"  {p}: {statistics.mean(values):.4g} pJ/FLOP (from {len(values)} GEMMs: "
              f"{', '.join(f'{v:.4g}' for v in values)})")
    print(f"  burst: {burst * 1e3:.1f} ms" if burst else "  burst: no ramp recorded")
    energy = {p: round(statistics.mean(v), 4) for p, v in per_precision.items()}
    print("model:")
    listed = ", ".join(f"{p}: {v}" for p, v in energy.items())
    print(f"  energy_per_flop_pj: {{{listed}}}")
    print(f"  dram_energy_per_byte_pj: {dram_pj:.4g}")
    print(f"  idle_power_share: {idle_w / meta['power_limit_w']:.4g}")
    if burst:
        print(f"  power_burst_s: {burst:.4g}")


def tool_json(tool, args):
    out = subprocess.run([tool, *args, "--format", "json"], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)


def score_line(name, measured_s, predicted_s, measured_j, predicted_j, watts, pred_w):
    err = lambda p, m: f"{(p / m - 1) * 100:+.1f}%"
    return (f"| {name} | {measured_s * 1e3:.3g} | {predicted_s * 1e3:.3g} | "
            f"{err(predicted_s, measured_s)} | {measured_j:.3g} | {predicted_j:.3g} | "
            f"{err(predicted_j, measured_j)} | {watts:.0f} / {pred_w:.0f} |")


def score(tool, gpu, paths):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import step_score
    errors = {"time": [], "energy": []}
    print("| workload | measured ms | predicted ms | time | measured J | predicted J | energy | "
          "W measured / predicted |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for path in paths:
        meta, rs = records(path)
        for r in rs:
            if r.get("kind") == "gemm":
                args = ["gemm", str(r["m"]), str(r["n"]), str(r["k"]), "--precision",
                        r["precision"], "--gpu", gpu]
            elif r.get("kind") == "step":
                args = step_score.command(r, tool, "eager")
                if args is None:
                    continue
                if args[0].endswith(".json"):
                    args += ["--glue", "eager"]
                args += ["--gpu", gpu]
            else:
                continue
            doc = tool_json(tool, args)
            predicted_s = doc["totals"]["predicted_time_us"] / 1e6
            power = doc["power"]
            print(score_line(r["name"], r["sustained_s"], predicted_s, r["energy_j_per_call"],
                             power["energy_j"], r["power_w"], power["average_power_w"]))
            errors["time"].append(predicted_s / r["sustained_s"] - 1)
            errors["energy"].append(power["energy_j"] / r["energy_j_per_call"] - 1)
    for what, values in errors.items():
        if values:
            absolute = sorted(abs(v) for v in values)
            print(f"{what}: median |error| {statistics.median(absolute) * 100:.1f}%, "
                  f"largest {absolute[-1] * 100:.1f}% over {len(values)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    f = sub.add_parser("fit")
    f.add_argument("run")
    s = sub.add_parser("score")
    s.add_argument("--tool", default="build/roofline-advise")
    s.add_argument("--gpu", default="h200")
    s.add_argument("runs", nargs="+")
    args = ap.parse_args()
    if args.command == "fit":
        fit(args.run)
    else:
        score(args.tool, args.gpu, args.runs)


if __name__ == "__main__":
    main()
