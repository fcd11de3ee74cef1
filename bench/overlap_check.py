#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Can communication hide behind cuBLAS GEMMs on one GPU? A stand-in for a collective's kernel (a
Triton kernel of P programs streaming a buffer through HBM in a grid-stride loop, as NCCL's
channels hold a few SMs for a collective's length) runs on a side stream beside a chain of bf16
GEMMs, in both launch orders, against each alone. Data parallelism's overlap (the gradients'
all-reduce behind the backward pass) assumes they run at once; a GEMM whose waves fill every SM
may leave the collective's kernel waiting, and both share HBM and the power limit.

Per P (8, 16, 32 programs) and order: the GEMM chain alone, the streamer alone, both at once
(from one event to the later end), and
  hidden = (gemms + streamer − both) / min(gemms, streamer)   (1: fully overlapped, 0: serial)
Times are medians of 7 after warm-ups, CUDA events, eager (the streamer and the chain are single
launches a stream, so the host adds nothing). Writes OUT/overlap.json after each case.

    python3 bench/overlap_check.py OUT
"""
import datetime
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_timing import record_each  # noqa: E402

GEMMS, SIZE = 24, 8192          # 24 GEMMs of 8192³, about 1.2 ms each on an H200
STREAM_BYTES = 2 << 30          # 2 GiB read and 2 GiB written: a large bucket's traffic


def streamer():
    import triton
    import triton.language as tl

    @triton.jit
    def copy(src, dst, n, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        step = tl.num_programs(0) * BLOCK
        for start in range(pid * BLOCK, n, step):
            offs = start + tl.arange(0, BLOCK)
            mask = offs < n
            tl.store(dst + offs, tl.load(src + offs, mask=mask), mask=mask)

    src = torch.randn(STREAM_BYTES // 2, device="cuda", dtype=torch.bfloat16)
    dst = torch.empty_like(src)

    def run(programs):
        copy[(programs,)](src, dst, src.numel(), BLOCK=4096)
    run(8)
    torch.cuda.synchronize()
    assert torch.equal(src, dst), "the streamer copied wrongly"
    return run


def timed_pair(first, second, same_stream=False, steps=7, warmup=2):
    """Median ms from one event to the later of the two ends, each on its own stream."""
    a, b = torch.cuda.Stream(), torch.cuda.Stream()
    times = []
    for i in range(warmup + steps):
        start = torch.cuda.Event(enable_timing=True)
        start.record()
        ends = []
        for fn, s in ((first, a), (second, a if same_stream else b)):
            if fn is None:
                continue
            s.wait_event(start)
            with torch.cuda.stream(s):
                fn()
            e = torch.cuda.Event(enable_timing=True)
            e.record(s)
            ends.append(e)
        torch.cuda.synchronize()
        if i >= warmup:
            times.append(max(start.elapsed_time(e) for e in ends))
    return statistics.median(times)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    x = torch.randn(SIZE, SIZE, device="cuda", dtype=torch.bfloat16)
    ws = [torch.randn(SIZE, SIZE, device="cuda", dtype=torch.bfloat16) / SIZE ** 0.5
          for _ in range(2)]

    def gemms():
        y = x
        for i in range(GEMMS):
            y = y @ ws[i % 2]
    doc = {"about": "bench/overlap_check.py: a collective's stand-in beside cuBLAS GEMMs",
           "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "device": torch.cuda.get_device_name(), "torch": torch.__version__,
           "gemms": f"{GEMMS} × bf16 {SIZE}³", "stream_bytes": STREAM_BYTES, "results": []}
    state = {}

    def prepare():
        state["run"] = streamer()
        state["gemms_ms"] = timed_pair(gemms, None)
        return {"name": "gemms alone", "ms": state["gemms_ms"],
                "tflop_per_s": 2 * SIZE ** 3 * GEMMS / state["gemms_ms"] / 1e9}

    def case(programs, order):
        run = state["run"]
        stream = lambda: run(programs)  # noqa: E731
        alone = timed_pair(stream, None)
        pair = (stream, gemms) if order == "streamer first" else (gemms, stream)
        both = timed_pair(*pair)
        serial = timed_pair(*pair, same_stream=True)
        g = state["gemms_ms"]
        return {"name": f"{programs} programs, {order}", "programs": programs, "order": order,
                "gemms_ms": g, "streamer_ms": alone,
                "streamer_gb_per_s": 2 * STREAM_BYTES / alone / 1e6,
                "both_ms": both, "serial_ms": serial,
                "hidden": (g + alone - both) / min(g, alone)}
    cases = [("prepare", prepare)]
    for programs in (8, 16, 32):
        for order in ("streamer first", "gemms first"):
            cases.append((f"{programs}-{order}",
                          lambda p=programs, o=order: case(p, o)))
    ok = record_each(os.path.join(out, "overlap.json"), doc, cases)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
