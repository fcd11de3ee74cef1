#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The accuracy bands of specs/arch/*.yaml (`accuracy:`): per architecture and op class, the 10th
and 90th percentiles of measured / predicted device time over held-out rows only, read from the
fitting benches' --dump files (docs/benchmarks.md, "Prediction intervals"). The percentile is the
benches' own: the sorted ratios' element n/10 and min(n-1, 9n/10).

  bench/prediction_bands.py --hopper-gemm H.csv --gemm G.csv --attention A.csv --allreduce R.csv

--hopper-gemm: model_accuracy's dump (its `fresh` rows, column (b): the architecture's parameters);
the others: aic_gemm_fit's, aic_attention_fit's and aic_allreduce_fit's (each the `score` half
only). Hopper is not scored on the AIConfigurator rows (its parameters are our own cuBLAS and
cuDNN fits; TensorRT-LLM's ops are another program, docs/benchmarks.md says so); its attention,
memory-bound and conv bands come from attention_fit, memory_op_fit and conv_fit --score (their
`measured / predicted` lines), which read no dump.
"""
import argparse
import csv
import sys

ARCHITECTURE = {
    "a100_sxm": "ampere", "l40s": "ada", "h100_sxm": "hopper", "h200_sxm": "hopper",
    "b200_sxm": "blackwell", "b300_sxm": "blackwell", "gb200": "blackwell", "gb300": "blackwell",
    "rtx_pro_6000_server": "blackwell-sm120",
}


def band(ratios):
    r = sorted(ratios)
    return r[len(r) // 10], r[min(len(r) - 1, len(r) * 9 // 10)], len(r)


def read(path):
    with open(path, newline="") as f:
        yield from csv.DictReader(f)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hopper-gemm", required=True)
    parser.add_argument("--gemm", required=True)
    parser.add_argument("--attention", required=True)
    parser.add_argument("--allreduce", required=True)
    a = parser.parse_args()
    ratios = {}  # (architecture, class) -> [measured / predicted]

    def add(architecture, kind, measured, predicted):
        ratios.setdefault((architecture, kind), []).append(float(measured) / float(predicted))

    for row in read(a.hopper_gemm):
        if row["set"] == "fresh":
            add("hopper", "gemm", row["device_us"], row["architecture_us"])
    for kind, path in (("gemm", a.gemm), ("attention", a.attention), ("all_reduce", a.allreduce)):
        for row in read(path):
            architecture = ARCHITECTURE[row["gpu"]]
            if architecture != "hopper":
                add(architecture, kind, row["measured_us"], row["predicted_us"])
    print("| architecture | class | held-out rows | p10 | p90 |\n|---|---|---:|---:|---:|")
    for (architecture, kind), r in sorted(ratios.items()):
        p10, p90, n = band(r)
        print(f"| {architecture} | {kind} | {n} | {p10:.3f} | {p90:.3f} |")


if __name__ == "__main__":
    sys.exit(main())
