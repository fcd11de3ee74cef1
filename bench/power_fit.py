#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The power model's parameters (power_model.hpp) from bench/power_probe.py's NVML readings, and
the tool scored against runs not fitted on (issue 39).

fit:   one run's micro workloads: idle power; DRAM's energy per byte from the 1 GiB copy (beyond
       idle, over the bytes it moved); each precision's energy per FLOP from its compute-bound
       GEMMs held at the power limit (beyond idle and the GEMM's own DRAM bytes at DRAM's energy,
       over its FLOPs; a precision's GEMMs averaged); the burst's length from the bf16 GEMM's
       ramp (the first call past 8% slower than the burst's median). With --held (the JSON of
       `roofline-advise ... --measure`, each op held at the limit through NVML): the stall power,
       the draw while an op runs past its roofline time, fitted on a fixed half of those ops
       with the micro energies refitted beside it (each workload's stall energy taken out),
       scored on the other half.
score: the tool as built (`--tool`), given the parameters in specs/arch/, on other runs' GEMMs
       (`roofline-advise gemm`) and whole steps (bench/step_score.py's commands, --glue eager):
       sustained time and energy per call against NVML's.

    python3 bench/power_fit.py fit bench/data/power/h200-micro-run2.json \
        --held bench/data/power/held-h200-run2/*.json
    python3 bench/power_fit.py score --tool build-nocuda/roofline-advise --gpu h200 \\
        bench/data/power/h200-micro-run1.json bench/data/power/h200-steps-run2.json
"""
import argparse
import hashlib
import json
import os
import statistics
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


def micro_energies(path, stall_w, peaks):
    """(idle W, DRAM pJ/byte, {precision: pJ/FLOP}) of one run's micro workloads, each
    workload's energy beyond idle less its stall energy: stall_w over its burst time beyond its
    roofline time (`peaks`: the datasheet's FLOP/s by precision and DRAM bytes/s, as the tool's
    roofline)."""
    meta, rs = records(path)
    by = {r["name"]: r for r in rs}
    idle_w = by["idle"]["power_w"]
    copy = by["copy 1 GiB (DRAM)"]
    if not stall_w:  # no stall term: no roofs needed
        peaks = {"dram": float("inf"), **{p: float("inf") for p in ELEMENT_BYTES}}
    copy_stall_j = stall_w * max(0.0, copy["burst_s"] - copy["bytes_moved"] / peaks["dram"])
    dram_pj = ((copy["power_w"] - idle_w) * copy["sustained_s"] - copy_stall_j) \
        / copy["bytes_moved"] * 1e12
    per_precision = {}
    for r in rs:
        if r.get("kind") != "gemm":
            continue
        roof_s = max(r["flops"] / peaks[r["precision"]], gemm_bytes(r) / peaks["dram"])
        stall_j = stall_w * max(0.0, r["burst_s"] - roof_s)
        dynamic_j = (r["power_w"] - idle_w) * r["sustained_s"] - stall_j
        flop_j = dynamic_j - gemm_bytes(r) * dram_pj * 1e-12
        per_precision.setdefault(r["precision"], []).append(flop_j / r["flops"] * 1e12)
    return meta, idle_w, dram_pj, per_precision


def held_ops(paths):
    """The ops of `roofline-advise --measure --format json` runs that were held at the power
    limit: (layer, unit precision, FLOPs, bytes, burst s, roofline s, held s, held J)."""
    ops = []
    for path in paths:
        with open(path) as f:
            doc = json.load(f)
        for o in doc["ops"]:
            m = o.get("measured") or {}
            h = m.get("held")
            if not h or not m.get("device_time_us") or o["kind"] == "all_reduce":
                continue
            unit = o["precision"] if o["kind"] in ("gemm", "attention") else "fp32"
            ops.append(dict(layer=f"{os.path.basename(path)}:{o['layer']}:{o['pass']}",
                            unit=unit, flops=o["flops"], bytes=o["bytes"],
                            burst_s=m["device_time_us"] * 1e-6,
                            roof_s=o["roofline_time_us"] * 1e-6,
                            held_s=h["time_us"] * 1e-6, held_j=h["energy_j"]))
    return ops


def split_of(name):
    """A fixed coin per op: half fit the stall power, half score it."""
    return "fit" if int(hashlib.sha256(name.encode()).hexdigest(), 16) % 2 == 0 else "score"


def op_energy(o, idle_w, dram_pj, flop_pj, stall_w):
    pj = flop_pj.get(o["unit"], flop_pj.get("bf16"))
    return (idle_w * o["held_s"] + o["flops"] * pj * 1e-12 + o["bytes"] * dram_pj * 1e-12
            + stall_w * max(0.0, o["burst_s"] - o["roof_s"]))


def fit_stall(micro, held_paths, peaks):
    """The stall power (W while an op runs past its roofline time, beyond idle and its work's
    energy): least squares on relative errors over the `fit` half of the held ops, the micro
    energies refitted with it each round (they absorb what the stall term takes), to a fixed
    point."""
    ops = [o for o in held_ops(held_paths) if o["held_j"] > 0]
    fit_ops = [o for o in ops if split_of(o["layer"]) == "fit"]
    if not fit_ops or len(fit_ops) == len(ops):
        sys.exit("power_fit.py: the held ops need both halves (fit and score) to fit a stall power")
    stall_w = 0.0
    for _ in range(20):
        _, idle_w, dram_pj, per = micro_energies(micro, stall_w, peaks)
        flop_pj = {p: statistics.mean(v) for p, v in per.items()}
        # E_pred = base + stall_w * x, relative error (base + w x) / E - 1: linear in w.
        num = den = 0.0
        for o in fit_ops:
            x = max(0.0, o["burst_s"] - o["roof_s"]) / o["held_j"]
            base = op_energy(o, idle_w, dram_pj, flop_pj, 0.0) / o["held_j"] - 1
            num -= base * x
            den += x * x
        new = max(0.0, num / den) if den > 0 else 0.0
        if abs(new - stall_w) < 0.01:
            stall_w = new
            break
        stall_w = new
    meta, idle_w, dram_pj, per = micro_energies(micro, stall_w, peaks)
    flop_pj = {p: statistics.mean(v) for p, v in per.items()}
    for half in ("fit", "score"):
        for w in (0.0, stall_w):
            if w == 0.0:
                _, i0, d0, p0 = micro_energies(micro, 0.0, peaks)
                f0 = {p: statistics.mean(v) for p, v in p0.items()}
            errs = sorted(abs((op_energy(o, i0, d0, f0, 0.0) if w == 0.0 else
                               op_energy(o, idle_w, dram_pj, flop_pj, w)) / o["held_j"] - 1)
                          for o in ops if split_of(o["layer"]) == half)
            print(f"  held ops, {half} half ({len(errs)}), stall {w:.0f} W: median |error| "
                  f"{statistics.median(errs) * 100:.1f}%, p90 "
                  f"{errs[int(0.9 * (len(errs) - 1))] * 100:.1f}%")
    print(f"  stall {stall_w:.1f} W = {stall_w / meta['power_limit_w']:.4f} of the limit")
    return stall_w


def fit(path, held_paths=(), peaks=None):
    stall_w = fit_stall(path, held_paths, peaks) if held_paths else 0.0
    meta, idle_w, dram_pj, per_precision = micro_energies(path, stall_w, peaks)
    rs = records(path)[1]
    by = {r["name"]: r for r in rs}
    copy = by["copy 1 GiB (DRAM)"]
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
    if held_paths:
        print(f"  stall_power_share: {stall_w / meta['power_limit_w']:.4g}")
    if burst:
        print(f"  power_burst_s: {burst:.4g}")


def datasheet_roofs(path):
    """The datasheet roofs the tool held a --measure JSON's ops against: dense FLOP/s by
    precision, and DRAM bytes/s."""
    with open(path) as f:
        device = json.load(f)["device"]
    roofs = {p: v["dense_flop_per_s"] for p, v in device["peaks"].items()}
    roofs["dram"] = device["dram_bytes_per_s"]
    return roofs


def score_line(name, measured_s, predicted_s, measured_j, predicted_j, watts, pred_w):
    err = lambda p, m: f"{(p / m - 1) * 100:+.1f}%"
    return (f"| {name} | {measured_s * 1e3:.3g} | {predicted_s * 1e3:.3g} | "
            f"{err(predicted_s, measured_s)} | {measured_j:.3g} | {predicted_j:.3g} | "
            f"{err(predicted_j, measured_j)} | {watts:.0f} / {pred_w:.0f} |")


def score(tool, gpu, paths):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import step_score
    from tool_report import tool_json
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
            doc = tool_json(tool, *args)
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
    f.add_argument("--held", nargs="*", default=[],
                   help="--measure JSONs whose ops were held at the limit: fit the stall power")
    s = sub.add_parser("score")
    s.add_argument("--tool", default="build/roofline-advise")
    s.add_argument("--gpu", default="h200")
    s.add_argument("runs", nargs="+")
    args = ap.parse_args()
    if args.command == "fit":
        fit(args.run, args.held, datasheet_roofs(args.held[0]) if args.held else None)
    else:
        score(args.tool, args.gpu, args.runs)


if __name__ == "__main__":
    main()
