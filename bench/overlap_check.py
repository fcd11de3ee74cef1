#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Can communication hide behind cuBLAS GEMMs on one GPU? A stand-in for a collective's kernels (a
Triton kernel of P programs streaming a buffer through HBM in a grid-stride loop, as NCCL's
channels hold a few SMs for a collective's length) runs on a side stream beside a chain of 24
bf16 GEMMs, against both on one stream (serial) and each alone. The stand-in is either one
kernel over 2 GiB or 81 kernels of a 25 MiB bucket each (DDP's default bucket: one collective a
bucket), launched after the GEMMs (as data parallelism launches its reductions while the backward
pass runs) or before them.

Per case, in 3 rounds (each case's four timings taken together, the rounds interleaved):
  hidden = (serial − both) / min(gemms, streamer)   (1: fully overlapped, 0: serial)
Times are medians of 5 after warm-ups, CUDA events from one start to the later end. Writes
OUT/overlap.json after each case.

    python3 bench/overlap_check.py OUT
"""
import datetime
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_timing import record_each  # noqa: E402

GEMMS, SIZE = 24, 8192          # 24 GEMMs of 8192³, about 1.6 ms each on an H200
STREAM_BYTES = 2 << 30          # 2 GiB read and 2 GiB written: a step's gradients' traffic
BUCKET_BYTES = 25 << 20         # DDP's default bucket


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
    per_bucket = BUCKET_BYTES // 2

    def run(programs, buckets):
        if not buckets:
            copy[(programs,)](src, dst, src.numel(), BLOCK=4096)
            return
        for b in range(src.numel() // per_bucket):
            lo = b * per_bucket
            copy[(programs,)](src[lo:lo + per_bucket], dst[lo:lo + per_bucket], per_bucket,
                              BLOCK=4096)
    for buckets in (False, True):
        dst.zero_()
        run(8, buckets)
        torch.cuda.synchronize()
        assert torch.equal(src[:dst.numel() // per_bucket * per_bucket],
                           dst[:dst.numel() // per_bucket * per_bucket]), "the streamer copied wrongly"
    return run


def timed_pair(first, second, same_stream=False, steps=5, warmup=2):
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
           "gemms": f"{GEMMS} × bf16 {SIZE}³", "stream_bytes": STREAM_BYTES,
           "bucket_bytes": BUCKET_BYTES, "results": []}
    state = {}

    def prepare():
        state["run"] = streamer()
        timed_pair(gemms, None, steps=10)  # up from idle
        return {"name": "prepared"}

    def case(programs, buckets, order, round_):
        run = state["run"]
        stream = lambda: run(programs, buckets)  # noqa: E731
        pair = (stream, gemms) if order == "streamer first" else (gemms, stream)
        g = timed_pair(gemms, None)
        alone = timed_pair(stream, None)
        serial = timed_pair(*pair, same_stream=True)
        both = timed_pair(*pair)
        return {"name": f"{programs} programs, {'buckets' if buckets else 'one kernel'}, "
                        f"{order}, round {round_}",
                "programs": programs, "buckets": buckets, "order": order, "round": round_,
                "gemms_ms": g, "streamer_ms": alone, "serial_ms": serial, "both_ms": both,
                "streamer_gb_per_s": 2 * (STREAM_BYTES // BUCKET_BYTES * BUCKET_BYTES if buckets
                                          else STREAM_BYTES) / alone / 1e6,
                "hidden": (serial - both) / min(g, alone),
                "hidden_vs_alone_sum": (g + alone - both) / min(g, alone)}
    cases = [("prepare", prepare)]
    for round_ in range(3):
        for programs in (8, 16, 32):
            for buckets in (True, False):
                for order in ("gemms first", "streamer first"):
                    cases.append((f"{programs}-{buckets}-{order}-{round_}",
                                  lambda p=programs, b=buckets, o=order, r=round_:
                                  case(p, b, o, r)))
    ok = record_each(os.path.join(out, "overlap.json"), doc, cases)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
