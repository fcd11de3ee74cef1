#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""An independent measurement of one step of Llama-2-7B under tensor parallelism over two GPUs
(Megatron's split), to hold the tool's tensor-parallel prediction against. One process per GPU;
each holds its shard of 32 distinct layers (16 of the 32 heads, 5504 of the 11008 intermediate
columns, 16000 of the 32000 vocabulary rows of lm_head), fp16, random weights. A layer: rmsnorm,
q/k/v GEMMs, fused attention (scaled_dot_product_attention), o_proj, all-reduce, residual add,
rmsnorm, gate/up GEMMs, silu(gate) * up, down_proj, all-reduce, residual add; the step adds one
all-reduce for the vocabulary-parallel embedding, the final rmsnorm and lm_head (logits not
gathered): 65 all-reduces of [rows, 4096].

Two phases: prefill (batch 1, 2048 tokens, causal) and decode (batch 8, one token each against a
KV cache of 2048 tokens per sequence). First two small checks (an all-reduce against the sum of
both ranks' inputs; the sharded o_proj + all-reduce against the unsharded product). Then, per
phase: the step issued eagerly and as a CUDA graph, and its parts alone (the GEMMs, the
all-reduces, the attention, the rest), each graph-replayed where capture works, else eager. Each
time is the median of 15 measurements between CUDA events, each measurement the slower rank's
(both ranks start it together, after a barrier). Rank 0 writes OUT_DIR/tp_step.json and prints a
summary; the exit status is 1 when a check fails.

    python3 bench/tp_step_check.py OUT_DIR      # on a host with two NVIDIA GPUs (PyTorch, NCCL)
    ROOFLINE_TP=4 python3 bench/tp_step_check.py OUT_DIR   # over four
"""
import os

# The host's GPUs are shared: NVLink multicast can put them out of service, so it stays off (set
# before torch.distributed is imported; the spawned children inherit it).
os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")

import datetime
import json
import socket
import statistics
import sys
import time
from collections import namedtuple
from pathlib import Path
from types import SimpleNamespace

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F

CONFIG = Path(__file__).resolve().parents[1] / "examples" / "configs" / "llama-2-7b.json"
_config = json.loads(CONFIG.read_text(encoding="utf-8"))
HIDDEN = _config["hidden_size"]
LAYERS = _config["num_hidden_layers"]
HEADS = _config["num_attention_heads"]
HEAD_DIM = HIDDEN // HEADS
INTERMEDIATE = _config["intermediate_size"]
VOCAB = _config["vocab_size"]
EPS = _config["rms_norm_eps"]
assert _config["num_key_value_heads"] == HEADS, "the split below assumes multi-head attention"

TP = int(os.environ.get("ROOFLINE_TP", "2"))  # ROOFLINE_TP=4 on a host of four
LOCAL_HEADS = HEADS // TP                  # 16 at TP 2
LOCAL_QKV = LOCAL_HEADS * HEAD_DIM         # 2048
LOCAL_INTERMEDIATE = INTERMEDIATE // TP    # 5504
LOCAL_VOCAB = VOCAB // TP                  # 16000
ALL_REDUCES = 2 * LAYERS + 1               # two per layer and the embedding's
DTYPE = torch.float16

Phase = namedtuple("Phase", "name batch seq kv_len causal reps")
PHASES = [  # reps: steps (or part runs) per timed measurement
    Phase("prefill", 1, 2048, 2048, True, 1),
    Phase("decode", 8, 1, 2048, False, 5),
]
WARMUP = 2
MEASUREMENTS = 15
PARTS = ("gemm", "all_reduce", "attention", "other")

Layer = namedtuple("Layer", "norm1 wq wk wv wo norm2 wg wu wd")
OTHER_RANK_FAILED = "capture failed on the other rank"


# ---- the sharded model ------------------------------------------------------------------------

def rand(*shape):
    return torch.randn(*shape, device="cuda", dtype=DTYPE).mul_(0.02)


def linear_weight(inputs, outputs):
    """A linear layer's weight as nn.Linear stores it, [out, in], seen as [in, out]: x @ W then
    runs the same cuBLAS GEMM as F.linear (x @ Wᵀ), as serving frameworks call it."""
    return rand(outputs, inputs).t()


def make_weights():
    """This rank's shard: 32 distinct layers (so each step reads every weight from DRAM), stored
    [out, in] as nn.Linear keeps them (linear_weight). Norm gains are 1 + 0.02·randn, as a
    trained gain is near 1, which keeps the activations O(1) through 32 layers."""
    layers = [Layer(norm1=rand(HIDDEN).add_(1),
                    wq=linear_weight(HIDDEN, LOCAL_QKV), wk=linear_weight(HIDDEN, LOCAL_QKV),
                    wv=linear_weight(HIDDEN, LOCAL_QKV), wo=linear_weight(LOCAL_QKV, HIDDEN),
                    norm2=rand(HIDDEN).add_(1),
                    wg=linear_weight(HIDDEN, LOCAL_INTERMEDIATE),
                    wu=linear_weight(HIDDEN, LOCAL_INTERMEDIATE),
                    wd=linear_weight(LOCAL_INTERMEDIATE, HIDDEN))
              for _ in range(LAYERS)]
    return SimpleNamespace(layers=layers, final_norm=rand(HIDDEN).add_(1),
                           lm_head=linear_weight(HIDDEN, LOCAL_VOCAB))


def weight_bytes(w):
    tensors = [t for layer in w.layers for t in layer] + [w.final_norm, w.lm_head]
    return sum(t.numel() * t.element_size() for t in tensors)


def make_caches(phase):
    """Decode's KV cache: per layer, K and V of [batch, 16 heads, kv_len, 128], random."""
    if phase.causal:
        return None
    shape = (phase.batch, LOCAL_HEADS, phase.kv_len, HEAD_DIM)
    return [(torch.randn(shape, device="cuda", dtype=DTYPE),
             torch.randn(shape, device="cuda", dtype=DTYPE)) for _ in range(LAYERS)]


def rmsnorm(x, w):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * w


def attention(q, k, v, phase, cache):
    """q, k, v: [rows, 2048] GEMM outputs, viewed as [batch, 16, seq, 128] (no copy). Prefill
    attends causally to its own keys; decode writes its token's key and value into the cache's
    last slot and attends to all kv_len of them."""
    b, s = phase.batch, phase.seq
    q, k, v = (t.view(b, s, LOCAL_HEADS, HEAD_DIM).transpose(1, 2) for t in (q, k, v))
    if cache is None:
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    else:
        cache_k, cache_v = cache
        cache_k[:, :, -1:].copy_(k)
        cache_v[:, :, -1:].copy_(v)
        out = F.scaled_dot_product_attention(q, cache_k, cache_v)
    return out.transpose(1, 2).reshape(b * s, LOCAL_QKV)


def step(x0, w, phase, caches):
    """One step on this rank. x0 is left unchanged, so the step can be replayed."""
    x = x0.clone()       # stands in for the embedding lookup's output
    dist.all_reduce(x)   # vocabulary-parallel embedding: each rank holds half the rows
    for i, layer in enumerate(w.layers):
        h = rmsnorm(x, layer.norm1)
        a = attention(h @ layer.wq, h @ layer.wk, h @ layer.wv, phase,
                      caches[i] if caches else None)
        o = a @ layer.wo
        dist.all_reduce(o)   # row-parallel o_proj: each rank holds a partial sum
        x = x + o
        h = rmsnorm(x, layer.norm2)
        d = (F.silu(h @ layer.wg) * (h @ layer.wu)) @ layer.wd
        dist.all_reduce(d)   # row-parallel down_proj
        x = x + d
    return rmsnorm(x, w.final_norm) @ w.lm_head


# ---- the step's parts alone, the same ops in the same order on random operands -----------------

def make_operands(phase):
    rows = phase.batch * phase.seq
    return SimpleNamespace(
        x0=torch.randn(rows, HIDDEN, device="cuda", dtype=DTYPE),
        h=torch.randn(rows, HIDDEN, device="cuda", dtype=DTYPE),
        o=torch.randn(rows, HIDDEN, device="cuda", dtype=DTYPE),
        d=torch.randn(rows, HIDDEN, device="cuda", dtype=DTYPE),
        q=torch.randn(rows, LOCAL_QKV, device="cuda", dtype=DTYPE),
        k=torch.randn(rows, LOCAL_QKV, device="cuda", dtype=DTYPE),
        v=torch.randn(rows, LOCAL_QKV, device="cuda", dtype=DTYPE),
        a=torch.randn(rows, LOCAL_QKV, device="cuda", dtype=DTYPE),
        g=torch.randn(rows, LOCAL_INTERMEDIATE, device="cuda", dtype=DTYPE),
        u=torch.randn(rows, LOCAL_INTERMEDIATE, device="cuda", dtype=DTYPE),
        m=torch.randn(rows, LOCAL_INTERMEDIATE, device="cuda", dtype=DTYPE),
        r=torch.randn(rows, HIDDEN, device="cuda", dtype=DTYPE))


def gemms_alone(ops, w):
    for layer in w.layers:
        ops.h @ layer.wq
        ops.h @ layer.wk
        ops.h @ layer.wv
        ops.a @ layer.wo
        ops.h @ layer.wg
        ops.h @ layer.wu
        ops.m @ layer.wd
    return ops.h @ w.lm_head


def all_reduces_alone(ops):
    # In place on one buffer: its values grow (toward inf), which does not change NCCL's time.
    for _ in range(ALL_REDUCES):
        dist.all_reduce(ops.r)


def attention_alone(ops, phase, caches):
    for i in range(LAYERS):
        attention(ops.q, ops.k, ops.v, phase, caches[i] if caches else None)


def other_alone(ops, w):
    x = ops.x0.clone()
    for layer in w.layers:
        rmsnorm(x, layer.norm1)
        x = x + ops.o
        rmsnorm(x, layer.norm2)
        F.silu(ops.g) * ops.u
        x = x + ops.d
    return rmsnorm(x, w.final_norm)


# ---- timing -----------------------------------------------------------------------------------

def lockstep():
    """Both ranks idle and released together, so that a measurement holds no wait for the
    other rank's previous work."""
    torch.cuda.synchronize()
    dist.barrier(device_ids=[torch.cuda.current_device()])
    torch.cuda.synchronize()


def any_rank(flag):
    t = torch.tensor([1 if flag else 0], device="cuda")
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return bool(t.item())


def capture(fn):
    """A CUDA graph of fn, or None and the error. Warmed up on a side stream first, as
    torch.cuda.graph's documentation advises. Capture mode thread_local: NCCL's watchdog thread
    may query events of earlier collectives during the capture, which global mode would count
    against it. Both ranks keep their graphs only if both captured (else their collectives
    would not match)."""
    lockstep()
    graph, error = torch.cuda.CUDAGraph(), None
    try:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            fn()
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        with torch.cuda.graph(graph, capture_error_mode="thread_local"):
            fn()
        torch.cuda.synchronize()
    except Exception as e:  # recorded, and the part is timed eagerly instead
        graph, error = None, f"{type(e).__name__}: {e}".strip()[:2000]
    if any_rank(graph is None):
        return None, error or OTHER_RANK_FAILED
    return graph, None


def measure(run, reps):
    """Microseconds per call of run, one value per measurement (reps calls each), this rank."""
    for _ in range(WARMUP):
        lockstep()
        run()
    times = []
    for _ in range(MEASUREMENTS):
        lockstep()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(reps):
            run()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3 / reps)
    return times


def time_graphed(fn, reps):
    """fn timed as a replayed CUDA graph where capture works, else eagerly."""
    graph, error = capture(fn)
    times = measure(graph.replay if graph else fn, reps)
    del graph
    return {"times": times, "mode": "graph" if error is None else "eager", "capture_error": error}


def time_phase(phase, w):
    """This rank's times for one phase (lists of per-measurement µs) and its finite check."""
    caches = make_caches(phase)
    ops = make_operands(phase)
    run_step = lambda: step(ops.x0, w, phase, caches)
    result = {"step_eager": measure(run_step, phase.reps)}
    result["finite"] = bool(torch.isfinite(run_step()).all())
    graph, error = capture(run_step)
    result["step_graph"] = measure(graph.replay, phase.reps) if graph else None
    result["step_graph_error"] = error
    del graph
    parts = {"gemm": lambda: gemms_alone(ops, w),
             "all_reduce": lambda: all_reduces_alone(ops),
             "attention": lambda: attention_alone(ops, phase, caches),
             "other": lambda: other_alone(ops, w)}
    for name in PARTS:
        result[name] = time_graphed(parts[name], phase.reps)
    del caches, ops
    torch.cuda.empty_cache()
    return result


# ---- correctness checks -----------------------------------------------------------------------

def check_all_reduce(rows, rank, world):
    """One all-reduce of [rows, 4096] against the sum of both ranks' inputs (rank 0's verdict).
    With two ranks each element is one fp16 addition: at most half an ulp off the exact sum."""
    x = torch.randn(rows, HIDDEN, device="cuda", dtype=DTYPE)
    result = x.clone()
    dist.all_reduce(result)
    inputs = [torch.empty_like(x) for _ in range(world)]
    dist.all_gather(inputs, x)
    if rank != 0:
        return None
    expected = sum(t.float() for t in inputs)
    error = (result.float() - expected).abs()
    ok = bool((error <= 2**-10 * expected.abs() + 2**-20).all())  # NaN fails
    return {"pass": ok, "bytes": x.numel() * x.element_size(),
            "max_abs_error": error.max().item()}


def check_row_parallel(w, rank, world):
    """Layer 0's sharded o_proj (each rank: its 2048 input columns @ its [2048, 4096] rows) plus
    the all-reduce, against the unsharded [64, 4096] @ [4096, 4096] product on rank 0."""
    a = torch.randn(64, HIDDEN, device="cuda", dtype=DTYPE)
    dist.broadcast(a, src=0)  # the same input on both ranks
    wo = w.layers[0].wo.contiguous()  # NCCL gathers contiguous tensors
    partial = a[:, rank * LOCAL_QKV:(rank + 1) * LOCAL_QKV] @ wo
    dist.all_reduce(partial)
    shards = [torch.empty_like(wo) for _ in range(world)]
    dist.all_gather(shards, wo)
    if rank != 0:
        return None
    reference = (a @ torch.cat(shards)).float()
    # fp16 rounds each partial, their sum and the reference: ~1e-3 of the largest value; a wrong
    # split or a missing sum is off by O(1).
    error = (partial.float() - reference).abs().max().item() / reference.abs().max().item()
    return {"pass": error <= 1e-2, "max_rel_error": error}


def run_checks(w, rank, world):
    checks = {f"all_reduce_sum_{p.name}": check_all_reduce(p.batch * p.seq, rank, world)
              for p in PHASES}
    checks["row_parallel_o_proj"] = check_row_parallel(w, rank, world)
    ok = torch.tensor([1 if rank != 0 or all(c["pass"] for c in checks.values()) else 0],
                      device="cuda")
    dist.broadcast(ok, src=0)
    if rank == 0:
        for name, c in checks.items():
            print(f"{'PASS' if c['pass'] else 'FAIL'} {name}: {c}", flush=True)
    return checks, bool(ok.item())


# ---- the worker and the report ----------------------------------------------------------------

def worker(rank, world, port, out_dir):
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world, device_id=torch.device("cuda", rank),
                            timeout=datetime.timedelta(seconds=180))
    try:
        began = time.time()
        torch.manual_seed(1 + rank)  # different shards and inputs on each rank
        w = make_weights()
        checks, ok = run_checks(w, rank, world)
        results = {}
        if ok:
            for phase in PHASES:
                if rank == 0:
                    print(f"timing {phase.name} ...", file=sys.stderr, flush=True)
                results[phase.name] = time_phase(phase, w)
        gathered = [None] * world
        dist.all_gather_object(gathered, results)
        if rank == 0:
            report(gathered, checks, weight_bytes(w), world, out_dir, time.time() - began)
        del w
    finally:
        dist.destroy_process_group()


def slower(per_rank):
    """Median over measurements of the slower rank's time."""
    if any(t is None for t in per_rank):
        return None
    return statistics.median(max(ts) for ts in zip(*per_rank))


def capture_error(errors):
    """The rank's own capture error rather than the other's 'failed on the other rank'."""
    errors = [e for e in errors if e]
    own = [e for e in errors if e != OTHER_RANK_FAILED]
    return (own or errors or [None])[0]


def summarize(phase, per_rank):
    rows = phase.batch * phase.seq
    times = {"step_eager": [r["step_eager"] for r in per_rank],
             "step_graph": [r["step_graph"] for r in per_rank]}
    times.update({name: [r[name]["times"] for r in per_rank] for name in PARTS})
    out = {"batch": phase.batch, "seq": phase.seq, "kv_len": phase.kv_len, "rows": rows,
           "causal": phase.causal, "all_reduce_bytes": rows * HIDDEN * 2,
           "all_reduces_per_step": ALL_REDUCES, "steps_per_measurement": phase.reps,
           "measurements": MEASUREMENTS,
           "step_eager_us": slower(times["step_eager"]),
           "step_graph_us": slower(times["step_graph"]),
           "step_graph_error": capture_error(r["step_graph_error"] for r in per_rank)}
    for name in PARTS:
        out[f"{name}_us"] = slower(times[name])
    out["all_reduce_each_us"] = out["all_reduce_us"] / ALL_REDUCES
    out["parts_sum_us"] = sum(out[f"{name}_us"] for name in PARTS)
    out["parts_timed_as"] = {name: per_rank[0][name]["mode"] for name in PARTS}
    errors = {name: capture_error(r[name]["capture_error"] for r in per_rank) for name in PARTS}
    out["capture_errors"] = {name: e for name, e in errors.items() if e}
    out["per_rank_us"] = {key: [statistics.median(t) if t is not None else None for t in lists]
                          for key, lists in times.items()}
    return out


def report(gathered, checks, weights, world, out_dir, seconds):
    version = torch.cuda.nccl.version()
    nccl = ".".join(map(str, version)) if isinstance(version, tuple) else str(version)
    finite = {f"{p.name}_step_finite": {"pass": all(g[p.name]["finite"] for g in gathered)}
              for p in PHASES if p.name in gathered[0]}
    checks = {**checks, **finite}
    table = {
        "model": "Llama-2-7B", "config": str(CONFIG.relative_to(CONFIG.parents[2])),
        "dtype": "float16", "tensor_parallel": world,
        "torch": torch.__version__, "cuda": torch.version.cuda, "nccl": nccl,
        "gpu": torch.cuda.get_device_name(0),
        "gpus": [torch.cuda.get_device_name(i) for i in range(world)],
        "env": {k: os.environ.get(k) for k in ("NCCL_NVLS_ENABLE",
                                                "TORCH_SYMM_MEM_DISABLE_MULTICAST")},
        "shard": {"heads": LOCAL_HEADS, "head_dim": HEAD_DIM, "intermediate": LOCAL_INTERMEDIATE,
                  "vocab": LOCAL_VOCAB, "layers": LAYERS, "weight_bytes": weights},
        "timing": "µs; per measurement the slower rank's time, median of the measurements",
        "checks": checks,
        "passed": all(c["pass"] for c in checks.values()),
        "phases": {p.name: summarize(p, [g[p.name] for g in gathered])
                   for p in PHASES if p.name in gathered[0]},
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "run_seconds": round(seconds, 1),
    }
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "tp_step.json"), "w", encoding="utf-8") as f:
        json.dump(table, f, indent=2, ensure_ascii=False)
        f.write("\n")
    print_summary(table)


def print_summary(t):
    us = lambda v: "n/a" if v is None else f"{v:.1f} us"
    print(f"# Llama-2-7B, TP={t['tensor_parallel']} on {t['gpu']}, torch {t['torch']}, "
          f"NCCL {t['nccl']}, fp16; {t['timing']}")
    for name, c in t["checks"].items():
        print(f"check {name}: {'PASS' if c['pass'] else 'FAIL'}")
    for name, p in t["phases"].items():
        print(f"{name} (batch {p['batch']}, seq {p['seq']}, kv {p['kv_len']}):")
        print(f"  step eager {us(p['step_eager_us'])}, graph {us(p['step_graph_us'])}"
              + (f" (capture failed: {p['step_graph_error']})" if p["step_graph_error"] else ""))
        print(f"  parts alone: gemm {us(p['gemm_us'])}, all-reduce {us(p['all_reduce_us'])} "
              f"({p['all_reduces_per_step']} x {p['all_reduce_bytes']} B, "
              f"{us(p['all_reduce_each_us'])} each), attention {us(p['attention_us'])}, "
              f"other {us(p['other_us'])}; sum {us(p['parts_sum_us'])}")
        ranks = ", ".join(f"{key} " + "/".join("n/a" if v is None else f"{v:.1f}" for v in vs)
                          for key, vs in p["per_rank_us"].items())
        print(f"  per rank (us, rank 0/1): {ranks}")
        print(f"  parts timed as {p['parts_timed_as']}"
              + (f"; capture errors {p['capture_errors']}" if p["capture_errors"] else ""))
    print(f"{'PASS' if t['passed'] else 'FAIL'} ({t['run_seconds']} s)")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: tp_step_check.py OUT_DIR")
    # setdefault above keeps a value set outside: refuse to run with multicast on.
    if (os.environ["NCCL_NVLS_ENABLE"] != "0"
            or os.environ["TORCH_SYMM_MEM_DISABLE_MULTICAST"] != "1"):
        sys.exit("NCCL_NVLS_ENABLE must be 0 and TORCH_SYMM_MEM_DISABLE_MULTICAST 1")
    if torch.cuda.device_count() < TP:
        sys.exit(f"tensor parallelism over {TP} GPUs; torch sees {torch.cuda.device_count()}")
    out_dir = sys.argv[1]
    mp.spawn(worker, args=(TP, free_port(), out_dir), nprocs=TP)
    with open(os.path.join(out_dir, "tp_step.json"), encoding="utf-8") as f:
        sys.exit(0 if json.load(f)["passed"] else 1)


if __name__ == "__main__":
    main()
