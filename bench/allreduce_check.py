#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The independent measurement allreduce_probe is compared with: PyTorch's all_reduce (NCCL, bf16
sum) over every GPU of this host, one process per GPU, for the same ten sizes (4 KiB to 1 GiB per
GPU). For each size: one all_reduce of a clone checked against the sum of every rank's input
(gathered, summed in fp32), then a timed warm-up, then the median of 15 runs of back-to-back
all_reduces between CUDA events (enough per run to last 1 ms or more), each run's time the slowest
rank's. PyTorch's all_reduce works in place (allreduce_probe's is out-of-place, as nccl-tests'
default): the timed tensor's values grow, which does not change the time. Rank 0 prints one line
per size and writes the table as JSON (allreduce_probe's keys) to OUT.json when given.

    python3 bench/allreduce_check.py [OUT.json]      # on the GPU machine (PyTorch with CUDA)
"""
import datetime
import json
import math
import os
import socket
import statistics
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

SIZES = [4096 * 4**i for i in range(10)]  # bytes per GPU
WARMUP = 5
RUNS = 15
TARGET_RUN_S = 2e-3  # the estimates run high for small sizes: runs last 1 ms or more
MAX_ITERATIONS = 1000


def max_over_ranks(values, device):
    t = torch.tensor(values, dtype=torch.float64, device=device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.tolist()


def iterations_for(estimate_s):
    """All_reduces per timed run: enough for TARGET_RUN_S, at most MAX_ITERATIONS."""
    if not estimate_s > 0:
        return MAX_ITERATIONS
    return min(MAX_ITERATIONS, max(1, math.ceil(TARGET_RUN_S / estimate_s)))


def timed(x, iterations):
    """Seconds per all_reduce of `iterations` back to back, on this rank (events on the current
    stream: PyTorch's NCCL stream waits for it before and is waited for after each call)."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iterations):
        dist.all_reduce(x)
    end.record()
    end.synchronize()
    return start.elapsed_time(end) * 1e-3 / iterations


def timed_graph(x, iterations, device):
    """Seconds per all_reduce of `iterations` captured in one CUDA graph and replayed: the GPU's
    time without PyTorch's per-call host path (what the C++ probe's back-to-back calls see).
    None on every rank when any rank's capture fails."""
    try:
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            dist.all_reduce(x)
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(iterations):
                dist.all_reduce(x)
        ok = 1.0
    except Exception as error:  # noqa: BLE001 - recorded, the eager figures stand
        print(f"graph capture failed: {error}", file=sys.stderr)
        ok = 0.0
    if min(-v for v in max_over_ranks([-ok], device)) < 1:  # some rank failed
        return None
    graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(RUNS):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e-3 / iterations)
    return statistics.median(max_over_ranks(times, device))


def check(x, world, device, size):
    """One all_reduce of a clone against the sum of every rank's input; raises on every rank if a
    rank's result is wrong, so that none waits for the others at the next collective."""
    result = x.clone()
    dist.all_reduce(result)
    inputs = torch.empty(world * x.numel(), dtype=x.dtype, device=device)
    dist.all_gather_into_tensor(inputs, x)
    inputs = inputs.view(world, -1).float()
    expected = inputs.sum(0)
    # bf16 rounds each partial sum (at most sum|x|) to 8 significant bits, once per rank at most.
    tolerance = 2**-6 * expected.abs() + world * 2**-9 * inputs.abs().sum(0)
    error = (result.float() - expected).abs()
    bad = ~(error <= tolerance)  # NaN counts as wrong
    wrong = int(bad.sum())
    first = int(bad.nonzero()[0]) if wrong else -1
    del result, inputs, expected, tolerance, error, bad
    counts = max_over_ranks([wrong], device)
    if counts[0]:
        where = f" (this rank: {wrong}, first at element {first})" if wrong else ""
        raise RuntimeError(f"all_reduce of {size} bytes per GPU is wrong on some rank{where}")


def worker(rank, world, port, out_path):
    torch.cuda.set_device(rank)
    device = torch.device("cuda", rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world)
    try:
        rows = []
        for size in SIZES:
            count = size // 2
            generator = torch.Generator(device=device)
            generator.manual_seed(1000 * (rank + 1) + size)
            x = (torch.rand(count, generator=generator, device=device) * 2 - 1).to(torch.bfloat16)
            check(x, world, device, size)
            # The warm-up, timed, then one run sized on it; the smaller estimate sizes the timed
            # runs (the slowest rank's: the same count on every rank, or the collectives would not
            # match).
            first = max_over_ranks([timed(x, WARMUP)], device)[0]
            second = max_over_ranks([timed(x, iterations_for(first))], device)[0]
            iterations = iterations_for(min(first, second))
            runs = max_over_ranks([timed(x, iterations) for _ in range(RUNS)], device)
            graph_s = timed_graph(x, min(iterations, 100), device)
            rows.append((size, statistics.median(runs), iterations, graph_s))
            if rank == 0:
                print(f"{size} bytes: sum checked, {iterations} all_reduces a run",
                      file=sys.stderr)
            del x
            dist.barrier(device_ids=[rank])
        if rank == 0:
            report(rows, world, out_path)
    finally:
        dist.destroy_process_group()


def report(rows, world, out_path):
    version = torch.cuda.nccl.version()
    nccl = ".".join(map(str, version)) if isinstance(version, tuple) else str(version)
    names = {torch.cuda.get_device_name(i) for i in range(world)}
    gpus = (f"{world} × {names.pop()}" if len(names) == 1
            else " + ".join(torch.cuda.get_device_name(i) for i in range(world)))
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    table = {
        "gpus": world,
        "precision": "bf16",
        "library": f"NCCL {nccl}",
        "origin": f"PyTorch {torch.__version__} all_reduce, in-place, bf16 sum, {gpus} "
                  f"(one process per GPU), median of {RUNS} runs, {now}",
        "samples": [{"bytes": size, "time_s": time_s} for size, time_s, _, _ in rows],
        "graph_samples": [{"bytes": size, "time_s": graph_s} for size, _, _, graph_s in rows
                          if graph_s is not None],
    }
    print(f"# torch {torch.__version__}, NCCL {nccl}, {world} GPUs, bf16\n# {table['origin']}")
    print(f"{'bytes':>12} {'time_us':>12} {'algbw_GB/s':>14} {'busbw_GB/s':>14} {'graph_us':>10}")
    for size, time_s, _, graph_s in rows:
        algbw = size / time_s
        busbw = algbw * 2 * (world - 1) / world
        graph = f"{graph_s * 1e6:10.2f}" if graph_s is not None else f"{'—':>10}"
        print(f"{size:12d} {time_s * 1e6:12.2f} {algbw * 1e-9:14.2f} {busbw * 1e-9:14.2f} {graph}")
    if out_path:
        with open(out_path, "w", encoding="utf-8") as f:
            json.dump(table, f, indent=2, ensure_ascii=False)
            f.write("\n")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    if len(sys.argv) > 2:
        sys.exit("usage: allreduce_check.py [OUT.json]")
    # The host's GPUs are shared: NVLink multicast can put them out of service, so it stays off
    # (the children inherit this environment).
    os.environ["NCCL_NVLS_ENABLE"] = "0"
    os.environ["TORCH_SYMM_MEM_DISABLE_MULTICAST"] = "1"
    world = torch.cuda.device_count()
    if world < 2:
        sys.exit(f"an all-reduce needs two or more GPUs; torch sees {world}")
    mp.spawn(worker, args=(world, free_port(), sys.argv[1] if len(sys.argv) == 2 else None),
             nprocs=world)


if __name__ == "__main__":
    main()
