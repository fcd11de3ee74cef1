#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Predicted against measured for a tensor-parallel step: reads bench/tp_check.sh's output folder
(tp_step.json from bench/tp_step_check.py, predict-{prefill,decode}-{auto,h200}.json from the
tool) and prints, per phase and prediction, the GEMMs, all-reduces, attention and the rest of the
step, graph-replayed (the tool's device time against PyTorch's replayed CUDA graph).
Usage: bench/tp_compare.py OUT_DIR"""
import json
import sys
from pathlib import Path


def parts_of(report):
    """Σ device time × count (µs) of the step's ops, by part."""
    parts = {"gemm": 0.0, "all_reduce": 0.0, "attention": 0.0, "other": 0.0}
    for op in report["ops"]:
        kind = op["kind"]
        part = kind if kind in ("gemm", "all_reduce", "attention") else "other"
        parts[part] += op["device_time_us"] * op["count"]
    parts["step"] = report["totals"]["device_time_us"]
    return parts


def main():
    out = Path(sys.argv[1])
    measured = json.loads((out / "tp_step.json").read_text())
    print(f"# measured: {measured['gpu']} × {measured['gpus']}, torch {measured['torch']}, "
          f"NCCL {measured['nccl']}; graph-replayed unless said")
    for phase in ("prefill", "decode"):
        m = measured["phases"][phase]
        steps = m.get("steps_per_measurement", 1)
        print(f"\n{phase}: batch {m['batch']}, seq {m['seq']}, kv {m['kv_len']} "
              f"(parts timed as {m.get('parts_timed_as')})")
        got = {"gemm": m["gemm_us"], "all_reduce": m["all_reduce_us"],
               "attention": m["attention_us"], "other": m["other_us"],
               "step": m["step_graph_us"] if m["step_graph_us"] is not None else m["step_eager_us"]}
        print(f"{'part':>12} {'measured µs':>12}" + "".join(
            f" {'predicted ' + g:>16} {'error':>8}" for g in ("auto", "h200")))
        predicted = {}
        for gpu in ("auto", "h200"):
            path = out / f"predict-{phase}-{gpu}.json"
            if path.exists():
                predicted[gpu] = parts_of(json.loads(path.read_text()))
        for part in ("gemm", "all_reduce", "attention", "other", "step"):
            value = got[part]
            line = f"{part:>12} {value:12.1f}" if value is not None else f"{part:>12} {'—':>12}"
            for gpu in ("auto", "h200"):
                if gpu in predicted and value:
                    p = predicted[gpu][part]
                    line += f" {p:16.1f} {100 * (p - value) / value:+7.1f}%"
            print(line)
        print(f"(measured per step; {steps} step(s) a measurement; eager step "
              f"{m['step_eager_us']:.1f} µs)")


if __name__ == "__main__":
    main()
