#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Issue 42 on one GPU: one GPU's expert GEMMs of a Mixtral-8x7B layer (8 experts, top 2, hidden
4096, each expert 14336 wide) split over 4 GPUs two ways, at T tokens a step:

  tp4  tensor parallelism: all 8 experts, each a quarter wide (gate and up 4096 -> 3584, down
       3584 -> 4096), T * 2 / 8 rows each
  ep4  expert parallelism over the same 4 GPUs (every GPU holds the step's tokens): 2 whole
       experts (4096 -> 14336, 14336 -> 4096), T * 2 / 8 rows each

The same FLOPs and weight bytes; the shapes differ. Each as a batched GEMM (torch.bmm, the tool's
model of a grouped GEMM: the reached experts, the rows split evenly) and as PyTorch's grouped GEMM
(torch._grouped_mm, where this PyTorch has it), bf16, the median of CUDA-event timings; the
grouped result checked against bmm on the same random data.

    python3 bench/moe_ep_check.py OUT_DIR

Writes OUT_DIR/moe_ep.json as it goes.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_timing import record_each, timed  # noqa: E402

HIDDEN, WIDTH, EXPERTS, TOP_K, SPLIT = 4096, 14336, 8, 2, 4
TOKENS = (16, 64, 256, 1024, 4096)


def median_ms(fn):
    return timed(fn, steps=50, warmup=5)[0]


def gemms(layout, tokens):
    """The (experts, rows, n, k) of the gate, up and down GEMMs one GPU runs."""
    experts = EXPERTS if layout == "tp4" else EXPERTS // SPLIT
    width = WIDTH // SPLIT if layout == "tp4" else WIDTH
    rows = -(-tokens * TOP_K // EXPERTS)
    return [(experts, rows, width, HIDDEN), (experts, rows, width, HIDDEN),
            (experts, rows, HIDDEN, width)]


def time_layout(layout, tokens):
    torch.manual_seed(tokens)
    result = {"layout": layout, "tokens": tokens, "bmm_ms": 0.0, "grouped_ms": 0.0,
              "gemms": gemms(layout, tokens)}
    grouped = hasattr(torch, "_grouped_mm")
    for experts, rows, n, k in result["gemms"]:
        a = torch.randn(experts, rows, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(experts, k, n, device="cuda", dtype=torch.bfloat16) / k ** 0.5
        result["bmm_ms"] += median_ms(lambda: torch.bmm(a, b))
        if not grouped:
            continue
        flat = a.reshape(experts * rows, k)
        bt = b.transpose(1, 2).contiguous().transpose(1, 2)  # column-major B, as it asks
        offs = torch.arange(1, experts + 1, device="cuda", dtype=torch.int32) * rows
        try:
            out = torch._grouped_mm(flat, bt, offs=offs)
            ref = torch.bmm(a, b).reshape(experts * rows, n)
            err = float((out.float() - ref.float()).abs().max() / ref.float().abs().max())
            result["grouped_max_rel_err"] = max(result.get("grouped_max_rel_err", 0.0), err)
            result["grouped_ms"] += median_ms(lambda: torch._grouped_mm(flat, bt, offs=offs))
        except Exception as e:  # noqa: BLE001 — a shape it refuses: recorded, bmm stands
            result["grouped_error"] = repr(e)[:300]
            grouped = False
    if not grouped:
        result["grouped_ms"] = None
    return result


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    doc = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "results": []}
    cases = [(f"{layout}-{tokens}", lambda layout=layout, tokens=tokens: time_layout(layout, tokens))
             for tokens in TOKENS for layout in ("tp4", "ep4")]
    sys.exit(0 if record_each(os.path.join(out, "moe_ep.json"), doc, cases) else 1)


if __name__ == "__main__":
    main()
