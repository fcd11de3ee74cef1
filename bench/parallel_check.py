#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Multi-GPU measurements to hold the tool's parallelism models against: NCCL collectives,
a pipeline-parallel (1F1B) training step and an expert-parallel MoE layer, with PyTorch. One
process per GPU (torchrun, or torch.multiprocessing.spawn when started without it).

Parts (--part, comma-separated; default all):

  collectives  all_reduce (in place), reduce_scatter_tensor, all_gather_into_tensor,
               all_to_all_single and send/recv (rank 0 -> rank 1) over every rank of the launch,
               bf16, 1/8/64/256 MiB per rank (all_to_all also 4 and 16 MiB). Each op is first
               checked once at the smallest size against the result computed locally from every
               rank's input (regenerated from its seed). Timing: 5 warm-ups, then 20 calls back
               to back, each between its own pair of CUDA events (the GPU queue is pre-filled
               behind a short sleep kernel so host launch time stays out), median per rank.
  pp           pipeline parallelism, PP = world size (the wrapper runs 2): a Llama-style decoder
               of 8 layers (hidden 4096, 32 heads, 8 KV heads, ffn 14336, vocab 32000, RMSNorm,
               SwiGLU, causal SDPA, no rotary; random bf16 weights), 8/PP layers a stage, the
               embedding on the first stage, final norm + LM head + cross-entropy on the last;
               sequence 2048, micro-batch 1, M in {1, 4, 8} micro-batches a step, scheduled 1F1B
               (Megatron's non-interleaved schedule: warm-up forwards, steady one forward / one
               backward, cool-down backwards) with batch_isend_irecv of the activations and their
               gradients. No optimizer step: each step accumulates the gradients into .grad
               (set to None before each step). First a check: the M = 1 pipelined loss and every
               stage's gradients against the unsplit model (the stages' weights gathered on rank
               0) on the same batch. Then each stage alone (its layers only, fed a random hidden
               state, backward of a random output gradient as the dummy loss; and its whole own
               stage) and the steps: 3 warm-ups, median of 10, per rank.
  moe          expert parallelism, EP = world size: a Mixtral-like MoE FFN (hidden 4096, ffn
               14336, 8 experts, top-2 of a softmax router with random weights, renormalised,
               bf16), 8/EP experts a rank, 4096 tokens a rank (batch 2 x seq 2048). Counts
               exchanged with an all_to_all_single, tokens dispatched with all_to_all_single,
               regrouped by local expert, one SwiGLU GEMM chain per local expert, sent back with a
               second all_to_all_single and combined with the gate weights. Forward alone (no
               grad) and forward + backward (torch.distributed.nn.functional.all_to_all_single
               carries the gradient), 3 warm-ups, median of 10; each part between CUDA events.
               First a check: the first 64 tokens of every rank against a reference computed
               without the all-to-alls (tokens all-gathered, each rank's experts applied densely,
               all-reduced).

Results: rank 0 appends one run ({"runs": [...]}, one entry per launch) to OUT/parallel.json and
rewrites the file (atomically) after every record, so a fault loses nothing already measured.
Every record has "part" and "status" ("ok", "failed", "unsupported": the backend lacks the op;
"error" says why); checks have "check" and "pass"; timings are seconds, bandwidths bytes/s.
Each timed quantity is reported for rank 0 and as the max over ranks (the slowest rank's
median), with the per-rank medians beside them.

    torchrun --standalone --nproc_per_node 2 bench/parallel_check.py --out DIR --part collectives
    python3 bench/parallel_check.py --out DIR --world 4            # spawns one process per GPU
    python3 bench/parallel_check.py --cpu --quick --out /tmp/pc    # CPU smoke test (gloo, fp32)
    python3 bench/parallel_check.py --summary --out DIR            # the records, one line each

--cpu uses gloo on the CPU, fp32 (gloo has no bf16 in older PyTorch) and time.perf_counter;
--quick shrinks every size so the logic runs in seconds. Exit status 1 when a check fails or a
measurement fails (an op the backend lacks is not a failure).
"""
import os

# The host's GPUs are shared: NVLink multicast can put them out of service, so it stays off (set
# before torch.distributed is imported; spawned children and torchrun's workers inherit it).
os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")

import argparse
import datetime
import json
import math
import platform
import socket
import statistics
import sys
import time
import traceback
from collections import deque
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F

MiB = 1 << 20
RESULTS_FILE = "parallel.json"
SLEEP_CYCLES = 10_000_000  # ~5 ms at 2 GHz: long enough for the host to queue 20 calls

FULL = {
    "collective_sizes": [1 * MiB, 8 * MiB, 64 * MiB, 256 * MiB],
    "all_to_all_extra_sizes": [4 * MiB, 16 * MiB],
    "collective_warmup": 5, "collective_iterations": 20,
    "llama": {"hidden": 4096, "heads": 32, "kv_heads": 8, "ffn": 14336, "vocab": 32000,
              "layers": 8, "seq": 2048, "micro_batch": 1, "eps": 1e-5},
    "pp_micro_batches": [1, 4, 8], "pp_warmup": 3, "pp_iterations": 10,
    "moe": {"hidden": 4096, "ffn": 14336, "experts": 8, "top_k": 2, "batch": 2, "seq": 2048},
    "moe_warmup": 3, "moe_iterations": 10, "moe_check_tokens": 64,
}
QUICK = {
    "collective_sizes": [4096, 65536],
    "all_to_all_extra_sizes": [16384],
    "collective_warmup": 1, "collective_iterations": 3,
    "llama": {"hidden": 64, "heads": 4, "kv_heads": 2, "ffn": 160, "vocab": 512,
              "layers": 4, "seq": 32, "micro_batch": 1, "eps": 1e-5},
    "pp_micro_batches": [1, 4, 8], "pp_warmup": 1, "pp_iterations": 2,
    "moe": {"hidden": 64, "ffn": 128, "experts": 8, "top_k": 2, "batch": 2, "seq": 32},
    "moe_warmup": 1, "moe_iterations": 2, "moe_check_tokens": 16,
}
PARTS = ("collectives", "pp", "moe")
ENV_RECORDED = ("NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST", "CUDA_VISIBLE_DEVICES",
                "NCCL_DEBUG", "NCCL_ALGO", "NCCL_PROTO")
COLLECTIVES = ("all_reduce", "reduce_scatter_tensor", "all_gather_into_tensor",
               "all_to_all_single", "send_recv")


class Unsupported(Exception):
    """The backend (or this PyTorch) lacks the operation."""


def classify(error):
    if isinstance(error, (Unsupported, NotImplementedError)):
        return "unsupported"
    text = str(error).lower()
    if "not support" in text or "no support" in text or "unsupported" in text:
        return "unsupported"
    return "failed"


def finite_or_none(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: finite_or_none(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_or_none(v) for v in value]
    return value


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def now_utc():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# ---- the results file -------------------------------------------------------------------------

class Writer:
    """Rank 0's record of this launch: one entry of OUT/parallel.json's runs, rewritten whole
    (to a temporary file, then renamed over) after each record."""

    def __init__(self, out_dir, meta):
        self.path = Path(out_dir) / RESULTS_FILE
        self.path.parent.mkdir(parents=True, exist_ok=True)
        doc = {"about": "bench/parallel_check.py: NCCL collectives, a 1F1B pipeline step and an "
                        "expert-parallel MoE layer measured with PyTorch", "runs": []}
        if self.path.exists():
            try:
                doc = json.loads(self.path.read_text(encoding="utf-8"))
                assert isinstance(doc.get("runs"), list)
            except (ValueError, AssertionError, AttributeError):
                self.path.rename(self.path.with_suffix(f".unreadable-{int(time.time())}.json"))
                doc = {"runs": []}
        self.run = dict(meta, results=[], finished=None)
        doc["runs"].append(self.run)
        self.doc = doc
        self.failures = 0
        self.flush()

    def add(self, record):
        record = finite_or_none(record)
        self.run["results"].append(record)
        if record.get("status") == "failed" or record.get("pass") is False:
            self.failures += 1
        self.flush()
        try:
            line = describe(record)
        except Exception as error:  # noqa: BLE001 - the record is saved; its line is a nicety
            line = f"[{record.get('part')}] (unprintable record: {error}) {json.dumps(record)}"[:400]
        print(line, flush=True)

    def finish(self):
        self.run["finished"] = now_utc()
        self.run["failures"] = self.failures
        self.flush()

    def flush(self):
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(json.dumps(self.doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        os.replace(tmp, self.path)


def fmt_s(value):
    return "-" if value is None else f"{value * 1e3:.3f} ms"


def fmt_bw(value):
    return "-" if value is None else f"{value / 1e9:.1f} GB/s"


def describe(r):
    """One line for a record."""
    head = f"[{r.get('part')}{'' if r.get('world') is None else ' w' + str(r['world'])}]"
    if r.get("status") != "ok":
        what = r.get("check") or r.get("op") or r.get("kind") or ""
        size = f" {r['bytes']} B" if r.get("bytes") else ""
        return f"{head} {what}{size}: {r.get('status')}: {r.get('error', '')}"[:400]
    if "check" in r:
        detail = {k: v for k, v in r.items()
                  if k not in ("part", "world", "check", "pass", "status", "model")}
        verdict = "PASS" if r["pass"] else "FAIL"
        return f"{head} check {r['check']}: {verdict} {json.dumps(detail)}"[:400]
    kind = r.get("kind")
    if kind == "collective":
        return (f"{head} {r['op']:<22} {r['bytes']:>10} B  rank0 {fmt_s(r['median_s_rank0'])} "
                f"max {fmt_s(r['median_s_max_over_ranks'])}  "
                f"algbw {fmt_bw(r['algbw_Bps_max_over_ranks'])}  "
                f"busbw {fmt_bw(r['busbw_Bps_max_over_ranks'])}")
    if kind == "stage_alone":
        return (f"{head} stage alone: layers only {fmt_s(r['layers_fwd_bwd_s_max_over_ranks'])} "
                f"(fwd {fmt_s(r['layers_fwd_s_max_over_ranks'])}), own stages "
                + ", ".join(fmt_s(v) for v in r["own_stage_fwd_bwd_s_per_rank"]))
    if kind == "pp_step":
        return (f"{head} 1F1B M={r['micro_batches']}: step {fmt_s(r['step_s'])}, predicted "
                f"{fmt_s(r['prediction_1f1b_s'])} ((M+PP-1) x {fmt_s(r['stage_s'])}), "
                f"ratio {r['measured_over_predicted']}")
    if kind == "moe_layer":
        parts = r.get("parts_s_max_over_ranks") or {}
        return (f"{head} EP={r['ep']} {r['mode']}: layer {fmt_s(r['layer_s'])}; "
                + ", ".join(f"{k} {fmt_s(v)}" for k, v in parts.items())
                + f"; imbalance {r['token_imbalance']:.3f}")
    if kind == "part_done":
        return f"{head} part done in {r['wall_s']:.1f} s"
    return f"{head} {json.dumps(r)}"[:400]


def print_summary(out_dir):
    path = Path(out_dir) / RESULTS_FILE
    doc = json.loads(path.read_text(encoding="utf-8"))
    failures = 0
    for run in doc["runs"]:
        print(f"# {run.get('started')} world {run.get('world')} {run.get('backend')} "
              f"parts {','.join(run.get('parts', []))}: {run.get('device_names')}, torch "
              f"{run.get('torch')}, NCCL {run.get('nccl')}, finished {run.get('finished')}")
        for r in run["results"]:
            try:
                print("  " + describe(r))
            except Exception:  # noqa: BLE001
                print("  " + json.dumps(r)[:400])
            failures += r.get("status") == "failed" or r.get("pass") is False
    print(f"# {failures} failed records or checks")
    return failures


# ---- the process group and timing -------------------------------------------------------------

class Ctx:
    def __init__(self, rank, world, device, cuda, cfg, writer):
        self.rank, self.world, self.device, self.cuda = rank, world, device, cuda
        self.cfg, self.writer = cfg, writer
        self.dtype = torch.bfloat16 if cuda else torch.float32

    @property
    def dtype_name(self):
        return str(self.dtype).replace("torch.", "")

    def sync(self):
        if self.cuda:
            torch.cuda.synchronize()

    def lockstep(self):
        """Every rank idle and released together (a tiny all-reduce as the barrier)."""
        self.sync()
        t = torch.zeros(1, device=self.device)
        dist.all_reduce(t)
        self.sync()

    def mark(self):
        if self.cuda:
            event = torch.cuda.Event(enable_timing=True)
            event.record()
            return event
        return time.perf_counter()

    def seconds(self, a, b):
        """Between two marks (after a sync, on CUDA)."""
        return a.elapsed_time(b) * 1e-3 if self.cuda else b - a

    def gather(self, obj):
        out = [None] * self.world
        dist.all_gather_object(out, obj)
        return out

    def record(self, record):
        if self.writer is not None:
            self.writer.add(record)

    def measure(self, base, local_fn, combine=None):
        """Runs local_fn() on every rank, gathers each rank's outcome, and on rank 0 records base
        plus combine(per-rank results) (by default rank 0's result), or the first rank's error.
        Returns the record on rank 0, None elsewhere (and on failure)."""
        try:
            outcome = ("ok", local_fn())
        except Exception as error:  # noqa: BLE001 - recorded; the other measurements go on
            message = f"{type(error).__name__}: {error}".strip()[:1500]
            if classify(error) == "failed":
                traceback.print_exc()
            outcome = (classify(error), message)
            if self.cuda:
                torch.cuda.empty_cache()
        outcomes = self.gather(outcome)
        if self.rank != 0:
            return None
        record = dict(base)
        bad = [(i, o) for i, o in enumerate(outcomes) if o[0] != "ok"]
        if bad:
            record["status"] = ("unsupported" if all(o[0] == "unsupported" for _, o in bad)
                                else "failed")
            prefix = ("unsupported on this backend (" + dist.get_backend() + "): "
                      if record["status"] == "unsupported" else "")
            record["error"] = prefix + "; ".join(f"rank {i}: {o[1]}" for i, o in bad[:2])
            self.record(record)
            return None
        try:
            results = [o[1] for o in outcomes]
            record.update(combine(results) if combine else results[0])
            record.setdefault("status", "ok")
        except Exception as error:  # noqa: BLE001
            traceback.print_exc()
            record["status"] = "failed"
            record["error"] = f"combining the ranks' results: {type(error).__name__}: {error}"
        self.record(record)
        return record


def back_to_back(ctx, run, warmup, iterations):
    """Seconds per call of run(), one per call: warm-ups, then `iterations` calls back to back,
    each between its own pair of marks. On CUDA a sleep kernel holds the stream while the host
    queues the calls, so the GPU runs them without waiting for the host."""
    for _ in range(warmup):
        run()
    ctx.lockstep()
    if ctx.cuda and hasattr(torch.cuda, "_sleep"):
        torch.cuda._sleep(SLEEP_CYCLES)
    marks = []
    for _ in range(iterations):
        a = ctx.mark()
        run()
        marks.append((a, ctx.mark()))
    ctx.sync()
    return [ctx.seconds(a, b) for a, b in marks]


def stepwise(ctx, run, warmup, iterations, before=None):
    """Seconds of each timed call of run(), every call started in lockstep with the other ranks
    (before() first, outside the timing: e.g. dropping gradients). run() may return a dict of
    extra marks {name: (mark_a, mark_b)} to time as well; returns (totals, {name: [seconds]})."""
    totals, parts = [], {}
    for i in range(warmup + iterations):
        if before:
            before()
        ctx.lockstep()
        a = ctx.mark()
        extra = run() or {}
        b = ctx.mark()
        ctx.sync()
        if i >= warmup:
            totals.append(ctx.seconds(a, b))
            for name, (x, y) in extra.items():
                parts.setdefault(name, []).append(ctx.seconds(x, y))
    return totals, parts


def over_ranks(per_rank, prefix):
    """{prefix_rank0, prefix_max_over_ranks, prefix_per_rank} from per-rank medians."""
    values = [v for v in per_rank if v is not None]
    return {f"{prefix}_rank0": per_rank[0],
            f"{prefix}_max_over_ranks": max(values) if values else None,
            f"{prefix}_per_rank": per_rank}


# ---- part 1: collectives ----------------------------------------------------------------------

def resolve(*names):
    for name in names:
        fn = getattr(dist, name, None)
        if fn is not None:
            return fn
    raise Unsupported(f"torch {torch.__version__} has no torch.distributed.{names[0]}")


def collective(ctx, op, numel, inp):
    """(run, output, input bytes, output bytes) of one op on this rank; run is None when this
    rank takes no part (send/recv beyond ranks 0 and 1)."""
    n, dev, dt = ctx.world, ctx.device, ctx.dtype
    size = inp.numel() * inp.element_size()
    if op == "all_reduce":
        return (lambda: dist.all_reduce(inp)), inp, size, size
    if op == "reduce_scatter_tensor":
        fn = resolve("reduce_scatter_tensor", "_reduce_scatter_base")
        out = torch.empty(numel // n, device=dev, dtype=dt)
        return (lambda: fn(out, inp)), out, size, size // n
    if op == "all_gather_into_tensor":
        fn = resolve("all_gather_into_tensor", "_all_gather_base")
        out = torch.empty(numel * n, device=dev, dtype=dt)
        return (lambda: fn(out, inp)), out, size, size * n
    if op == "all_to_all_single":
        out = torch.empty(numel, device=dev, dtype=dt)
        return (lambda: dist.all_to_all_single(out, inp)), out, size, size
    if op == "send_recv":
        if ctx.rank == 0:
            return (lambda: dist.send(inp, 1)), None, size, size
        if ctx.rank == 1:
            out = torch.empty(numel, device=dev, dtype=dt)
            return (lambda: dist.recv(out, 0)), out, size, size
        return None, None, size, size
    raise ValueError(op)


def check_input(op, rank, numel):
    """Rank `rank`'s check input for op: the same on every rank that regenerates it (CPU)."""
    g = torch.Generator()
    g.manual_seed(7919 * (COLLECTIVES.index(op) + 1) + rank)
    return torch.randn(numel, generator=g)


def check_collective(ctx, op, nbytes):
    n, r, dt = ctx.world, ctx.rank, ctx.dtype
    numel = nbytes // torch.tensor([], dtype=dt).element_size()

    def local():
        inputs = [check_input(op, j, numel).to(dt) for j in range(n)]  # every rank's, rounded
        inp = inputs[r].clone().to(ctx.device)  # all_reduce works in place
        run, out, _, _ = collective(ctx, op, numel, inp)
        if run is not None:
            run()
        ctx.sync()
        eps = torch.finfo(dt).eps
        if op in ("all_reduce", "reduce_scatter_tensor"):
            exact = torch.stack([x.float() for x in inputs]).sum(0)
            mags = torch.stack([x.float().abs() for x in inputs]).sum(0)
            if op == "reduce_scatter_tensor":
                exact, mags = exact.chunk(n)[r], mags.chunk(n)[r]
            # Each partial sum is rounded once per rank at most.
            error = (out.float().cpu() - exact).abs()
            ok = bool((error <= 4 * eps * exact.abs() + n * eps * mags).all())
            return {"pass": ok, "max_abs_error": error.max().item()}
        if op == "all_gather_into_tensor":
            expected = torch.cat(inputs)
        elif op == "all_to_all_single":
            expected = torch.cat([x.chunk(n)[r] for x in inputs])
        elif r == 1:  # send_recv
            expected = inputs[0]
        else:
            return {"pass": True}
        return {"pass": bool(torch.equal(out.cpu(), expected))}

    def combine(results):
        errors = [x.get("max_abs_error") for x in results]
        out = {"pass": all(x["pass"] for x in results),
               "pass_per_rank": [x["pass"] for x in results]}
        if any(e is not None for e in errors):
            out["max_abs_error"] = max(e for e in errors if e is not None)
        return out

    ctx.measure({"part": "collectives", "check": op, "world": n, "bytes": nbytes,
                 "dtype": ctx.dtype_name}, local, combine)


def time_collective(ctx, op, nbytes):
    n, cfg = ctx.world, ctx.cfg
    numel = nbytes // torch.tensor([], dtype=ctx.dtype).element_size()
    sizes = {}

    def local():
        inp = torch.randn(numel, device=ctx.device, dtype=ctx.dtype)
        run, out, in_bytes, out_bytes = collective(ctx, op, numel, inp)
        sizes.update(input_bytes=in_bytes, output_bytes=out_bytes)
        if run is None:
            ctx.lockstep()  # the participants' lockstep
            return None
        times = back_to_back(ctx, run, cfg["collective_warmup"], cfg["collective_iterations"])
        del inp, out
        return {"median": median(times), "min": min(times), "input_bytes": in_bytes,
                "output_bytes": out_bytes}

    def combine(results):
        meds = [x["median"] if x else None for x in results]
        ranks = [i for i, x in enumerate(results) if x]
        first = results[ranks[0]]
        in_b, out_b = first["input_bytes"], first["output_bytes"]
        # nccl-tests' bus bandwidth: the bytes each link carries, as a fraction of the algorithm's.
        factor = {"all_reduce": 2 * (n - 1) / n, "reduce_scatter_tensor": (n - 1) / n,
                  "all_gather_into_tensor": (n - 1) / n, "all_to_all_single": (n - 1) / n,
                  "send_recv": 1.0}[op]
        total = max(in_b, out_b)  # nccl-tests' size: the larger buffer
        slow = max(m for m in meds if m is not None)
        rec = {"input_bytes": in_b, "output_bytes": out_b, "ranks_taking_part": ranks,
               **over_ranks(meds, "median_s"),
               "min_s_rank0": results[ranks[0]]["min"],
               "algbw_Bps_rank0": in_b / meds[0] if meds[0] else None,
               "algbw_Bps_max_over_ranks": in_b / slow if slow else None,
               "busbw_Bps_max_over_ranks": total * factor / slow if slow else None}
        return rec

    ctx.measure({"part": "collectives", "kind": "collective", "op": op, "world": n,
                 "bytes": nbytes, "dtype": ctx.dtype_name,
                 "warmup": cfg["collective_warmup"], "iterations": cfg["collective_iterations"],
                 "timing": "back-to-back calls, CUDA events around each, median" if ctx.cuda
                 else "perf_counter around each call, median"},
                local, combine)


def part_collectives(ctx):
    cfg = ctx.cfg
    sizes = cfg["collective_sizes"]
    for op in COLLECTIVES:
        check_collective(ctx, op, sizes[0])
    for op in COLLECTIVES:
        op_sizes = sizes
        if op == "all_to_all_single":
            op_sizes = sorted(sizes + cfg["all_to_all_extra_sizes"])
        for nbytes in op_sizes:
            time_collective(ctx, op, nbytes)
            if ctx.cuda:
                torch.cuda.empty_cache()


# ---- part 2: pipeline parallelism -------------------------------------------------------------

def rmsnorm(x, weight, eps):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype) * weight


def causal_attention(q, k, v):
    sdpa = getattr(F, "scaled_dot_product_attention", None)
    if sdpa is not None:
        return sdpa(q, k, v, is_causal=True)
    # PyTorch before 2.0: the same, unfused (CPU smoke tests only).
    s = q.shape[-2]
    scores = (q @ k.transpose(-1, -2)).float() / math.sqrt(q.shape[-1])
    mask = torch.ones(s, s, dtype=torch.bool, device=q.device).triu(1)
    return torch.softmax(scores.masked_fill(mask, float("-inf")), -1).to(q.dtype) @ v


class Layer(nn.Module):
    """A Llama decoder layer without rotary: RMSNorm, GQA attention (KV heads repeated as
    Hugging Face's repeat_kv does), causal SDPA, o_proj, residual; RMSNorm, SwiGLU, residual."""

    def __init__(self, c, param, gain):
        super().__init__()
        h, hd = c["hidden"], c["hidden"] // c["heads"]
        self.c = c
        self.norm1, self.norm2 = gain(h), gain(h)
        self.wq, self.wo = param(h, h), param(h, h)
        self.wk, self.wv = param(c["kv_heads"] * hd, h), param(c["kv_heads"] * hd, h)
        self.wg, self.wu, self.wd = param(c["ffn"], h), param(c["ffn"], h), param(h, c["ffn"])

    def forward(self, x):
        c = self.c
        b, s, h = x.shape
        nh, nkv, hd = c["heads"], c["kv_heads"], h // c["heads"]
        y = rmsnorm(x, self.norm1, c["eps"])
        q = F.linear(y, self.wq).view(b, s, nh, hd).transpose(1, 2)
        k = F.linear(y, self.wk).view(b, s, nkv, hd).transpose(1, 2)
        v = F.linear(y, self.wv).view(b, s, nkv, hd).transpose(1, 2)
        k, v = (t.repeat_interleave(nh // nkv, dim=1) for t in (k, v))
        a = causal_attention(q, k, v).transpose(1, 2).reshape(b, s, h)
        x = x + F.linear(a, self.wo)
        y = rmsnorm(x, self.norm2, c["eps"])
        return x + F.linear(F.silu(F.linear(y, self.wg)) * F.linear(y, self.wu), self.wd)


class Stage(nn.Module):
    """Stage `index` of `stages`: its share of the layers; the embedding on the first, the final
    norm and LM head on the last (which returns logits)."""

    def __init__(self, c, index, stages, device, dtype, seed=1234):
        super().__init__()
        g = torch.Generator(device=device)
        g.manual_seed(seed + 101 * index)

        def param(*shape):
            with torch.no_grad():
                return nn.Parameter(torch.empty(*shape, device=device, dtype=dtype)
                                    .normal_(0, 0.02, generator=g))

        def gain(n):
            p = param(n)
            with torch.no_grad():
                p.add_(1)
            return p

        self.c, self.first, self.last = c, index == 0, index == stages - 1
        per = c["layers"] // stages
        self.embed = param(c["vocab"], c["hidden"]) if self.first else None
        self.layers = nn.ModuleList(Layer(c, param, gain) for _ in range(per))
        self.norm = gain(c["hidden"]) if self.last else None
        self.head = param(c["vocab"], c["hidden"]) if self.last else None

    def run_layers(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

    def forward(self, inp):
        x = F.embedding(inp, self.embed) if self.first else inp
        x = self.run_layers(x)
        if self.last:
            x = F.linear(rmsnorm(x, self.norm, self.c["eps"]), self.head)
        return x


def cross_entropy(logits, labels):
    return F.cross_entropy(logits.float().flatten(0, 1), labels.flatten())


def p2p(sends=(), recvs=()):
    """The sends and receives as one batch (NCCL group): a send and a receive between the same
    two ranks in opposite directions then cannot wait on each other."""
    ops = ([dist.P2POp(dist.isend, t, peer) for t, peer in sends]
           + [dist.P2POp(dist.irecv, t, peer) for t, peer in recvs])
    if ops:
        for request in dist.batch_isend_irecv(ops):
            request.wait()


def pp_step(stage, rank, stages, ids, labels, act_shape, dtype, device):
    """One 1F1B step over ids.shape[0] micro-batches (Megatron's non-interleaved schedule).
    Returns the step's loss (mean over micro-batches) on the last stage, else None."""
    m = ids.shape[0]
    first, last = rank == 0, rank == stages - 1
    prev, nxt = rank - 1, rank + 1
    warm = min(stages - rank - 1, m)
    remaining = m - warm
    pending = deque()
    losses = []
    counter = [0]

    def buffer():
        return torch.empty(act_shape, dtype=dtype, device=device)

    def recv_forward():
        if first:
            return None
        x = buffer()
        p2p(recvs=[(x, prev)])
        return x.requires_grad_()

    def send_forward(y):
        if not last:
            p2p(sends=[(y.detach(), nxt)])

    def recv_backward():
        if last:
            return None
        g = buffer()
        p2p(recvs=[(g, nxt)])
        return g

    def send_backward(g):
        if not first:
            p2p(sends=[(g, prev)])

    def send_forward_recv_backward(y):
        if last:
            return None
        g = buffer()
        p2p(sends=[(y.detach(), nxt)], recvs=[(g, nxt)])
        return g

    def send_backward_recv_forward(g):
        if first:
            return None
        x = buffer()
        p2p(sends=[(g, prev)], recvs=[(x, prev)])
        return x.requires_grad_()

    def forward(x):
        i = counter[0]
        counter[0] += 1
        y = stage(ids[i] if first else x)
        if last:
            y = cross_entropy(y, labels[i]) / m
            losses.append(y.detach())
        pending.append((x, y))
        return y

    def backward(g):
        x, y = pending.popleft()
        if last:
            y.backward()
        else:
            y.backward(g)
        return None if first else x.grad

    for _ in range(warm):
        send_forward(forward(recv_forward()))
    x = recv_forward() if remaining > 0 else None
    for i in range(remaining):
        y = forward(x)
        g = send_forward_recv_backward(y)
        grad_in = backward(g)
        if i == remaining - 1:
            send_backward(grad_in)
            x = None
        else:
            x = send_backward_recv_forward(grad_in)
    for _ in range(warm):
        send_backward(backward(recv_backward()))
    return torch.stack(losses).sum() if last else None


def drop_grads(module):
    for p in module.parameters():
        p.grad = None


def pp_batch(c, m, device):
    """m micro-batches of token ids and labels, the same on every rank."""
    g = torch.Generator()
    g.manual_seed(4242 + m)
    shape = (m, c["micro_batch"], c["seq"])
    ids = torch.randint(c["vocab"], shape, generator=g)
    labels = torch.randint(c["vocab"], shape, generator=g)
    return ids.to(device), labels.to(device)


def pp_check(ctx, stage, stages, act_shape):
    """The M = 1 step against the unsplit model: every stage's weights and gradients sent to
    rank 0, which chains the stages itself on the same batch."""
    c, rank = ctx.cfg["llama"], ctx.rank
    ids, labels = pp_batch(c, 1, ctx.device)
    drop_grads(stage)
    loss = pp_step(stage, rank, stages, ids, labels, act_shape, ctx.dtype, ctx.device)
    total = torch.tensor([loss.item() if loss is not None else 0.0], device=ctx.device,
                         dtype=torch.float64)
    dist.all_reduce(total)  # the last stage's loss, on every rank
    pipelined = total.item()
    params = list(stage.parameters())
    if rank != 0:
        for p in params:
            dist.send(p.detach().contiguous(), 0)
            dist.send(p.grad.contiguous(), 0)
        return None
    ref_stages, pp_grads = [], []
    for s in range(stages):
        ref = Stage(c, s, stages, ctx.device, ctx.dtype, seed=99)  # weights replaced below
        if s == 0:
            ref.load_state_dict(stage.state_dict())
            pp_grads.append([p.grad.clone() for p in params])
        else:
            grads = []
            for p in ref.parameters():
                dist.recv(p.data, s)
                g = torch.empty_like(p)
                dist.recv(g, s)
                grads.append(g)
            pp_grads.append(grads)
        ref_stages.append(ref)
    x = ids[0]
    for ref in ref_stages:
        x = ref(x)
    reference = cross_entropy(x, labels[0])
    reference.backward()
    worst = []
    for ref, grads in zip(ref_stages, pp_grads):
        errors = [((g.float() - p.grad.float()).norm()
                   / p.grad.float().norm().clamp_min(1e-30)).item()
                  for p, g in zip(ref.parameters(), grads)]
        worst.append(max(errors))
    ref_loss = reference.item()
    loss_error = abs(pipelined - ref_loss) / abs(ref_loss)
    loose = ctx.dtype == torch.bfloat16
    ok = (math.isfinite(pipelined) and loss_error <= (1e-2 if loose else 1e-4)
          and all(e <= (5e-2 if loose else 1e-3) for e in worst))
    del ref_stages, pp_grads, x, reference
    return {"pass": bool(ok), "loss_pipelined": pipelined, "loss_unsplit": ref_loss,
            "loss_rel_error": loss_error, "grad_rel_error_max_per_stage": worst}


def time_stage_alone(ctx, stage, act_shape):
    """This stage alone on its GPU: its layers only (a random hidden state in, backward of a
    random output gradient as the dummy loss), and its whole own stage."""
    c, cfg = ctx.cfg["llama"], ctx.cfg
    x0 = torch.randn(act_shape, device=ctx.device, dtype=ctx.dtype)
    g0 = torch.randn(act_shape, device=ctx.device, dtype=ctx.dtype)
    ids, labels = pp_batch(c, 1, ctx.device)

    def layers_only():
        x = x0.detach().requires_grad_()
        a = ctx.mark()
        y = stage.run_layers(x)
        b = ctx.mark()
        y.backward(g0)
        return {"fwd": (a, b), "bwd": (b, ctx.mark())}

    def own_stage():
        x = ids[0] if stage.first else x0.detach().requires_grad_()
        a = ctx.mark()
        y = stage(x)
        if stage.last:
            y = cross_entropy(y, labels[0])
            b = ctx.mark()
            y.backward()
        else:
            b = ctx.mark()
            y.backward(g0)
        return {"fwd": (a, b), "bwd": (b, ctx.mark())}

    before = lambda: drop_grads(stage)
    w, n = cfg["pp_warmup"], cfg["pp_iterations"]
    layers_total, layers_parts = stepwise(ctx, layers_only, w, n, before)
    own_total, own_parts = stepwise(ctx, own_stage, w, n, before)
    drop_grads(stage)
    return {"layers_fwd_bwd": median(layers_total), "layers_fwd": median(layers_parts["fwd"]),
            "layers_bwd": median(layers_parts["bwd"]), "own_fwd_bwd": median(own_total),
            "own_fwd": median(own_parts["fwd"]), "own_bwd": median(own_parts["bwd"])}


def part_pp(ctx):
    c, cfg, rank, stages = ctx.cfg["llama"], ctx.cfg, ctx.rank, ctx.world
    base = {"part": "pp", "world": stages, "pp": stages, "dtype": ctx.dtype_name}
    if c["layers"] % stages:
        ctx.record(dict(base, kind="setup", status="failed",
                        error=f"{c['layers']} layers do not split over {stages} stages"))
        return
    act_shape = (c["micro_batch"], c["seq"], c["hidden"])
    model = {k: v for k, v in c.items()}
    model.update(layers_per_stage=c["layers"] // stages,
                 attention="causal SDPA" if hasattr(F, "scaled_dot_product_attention")
                 else "causal attention, unfused (no SDPA in this PyTorch)")
    stage = Stage(c, rank, stages, ctx.device, ctx.dtype)
    ctx.measure(dict(base, check="pp_m1_loss_and_grads_vs_unsplit", model=model),
                lambda: pp_check(ctx, stage, stages, act_shape))
    drop_grads(stage)
    if ctx.cuda:
        torch.cuda.empty_cache()

    def combine_alone(results):
        out = {}
        for key, name in (("layers_fwd_bwd", "layers_fwd_bwd_s"), ("layers_fwd", "layers_fwd_s"),
                          ("layers_bwd", "layers_bwd_s"), ("own_fwd_bwd", "own_stage_fwd_bwd_s"),
                          ("own_fwd", "own_stage_fwd_s"), ("own_bwd", "own_stage_bwd_s")):
            out.update(over_ranks([x[key] for x in results], name))
        return out

    alone = ctx.measure(dict(base, kind="stage_alone", layers=c["layers"] // stages,
                             micro_batch=c["micro_batch"], seq=c["seq"],
                             warmup=cfg["pp_warmup"], iterations=cfg["pp_iterations"],
                             dummy_loss="layers only: backward of a fixed random output gradient; "
                                        "own stage: the same, or the cross-entropy on the last"),
                        lambda: time_stage_alone(ctx, stage, act_shape), combine_alone)
    # Every rank needs the stage time only for the record on rank 0.
    stage_s = alone["layers_fwd_bwd_s_max_over_ranks"] if alone else None
    own_s = max(alone["own_stage_fwd_bwd_s_per_rank"]) if alone else None

    for m in cfg["pp_micro_batches"]:
        ids, labels = pp_batch(c, m, ctx.device)

        def local(ids=ids, labels=labels):
            def run():  # returns nothing: the loss stays on the GPU (no sync in the timing)
                pp_step(stage, rank, stages, ids, labels, act_shape, ctx.dtype, ctx.device)
            totals, _ = stepwise(ctx, run, cfg["pp_warmup"], cfg["pp_iterations"],
                                 lambda: drop_grads(stage))
            return {"median": median(totals), "max_memory": torch.cuda.max_memory_allocated()
                    if ctx.cuda else None}

        def combine(results, m=m):
            meds = [x["median"] for x in results]
            step = max(meds)
            factor = m + stages - 1
            return {"step_s": step, **over_ranks(meds, "step_s"),
                    "stage_s": stage_s,
                    "prediction_1f1b_s": factor * stage_s if stage_s else None,
                    "measured_over_predicted":
                        round(step / (factor * stage_s), 4) if stage_s else None,
                    "own_stage_s_max": own_s,
                    "prediction_1f1b_own_stages_s": factor * own_s if own_s else None,
                    "max_memory_allocated_bytes_per_rank": [x["max_memory"] for x in results]}

        ctx.measure(dict(base, kind="pp_step", micro_batches=m, schedule="1F1B",
                         p2p="batch_isend_irecv", optimizer="none (gradients accumulated in "
                         ".grad, set to None before each step)", warmup=cfg["pp_warmup"],
                         iterations=cfg["pp_iterations"],
                         prediction="(M + PP - 1) x stage_s; stage_s = the layers-only stage "
                                    "forward+backward, slowest rank"),
                    local, combine)
        drop_grads(stage)


# ---- part 4: expert parallelism ---------------------------------------------------------------

class MoE:
    """This rank's share of a Mixtral-like MoE FFN: the router (the same on every rank) and
    experts/EP local experts."""

    def __init__(self, ctx):
        c = ctx.cfg["moe"]
        self.c, self.ctx = c, ctx
        self.ep, self.local = ctx.world, c["experts"] // ctx.world
        h, f = c["hidden"], c["ffn"]
        g = torch.Generator()
        g.manual_seed(31337)
        self.router = nn.Parameter(
            (torch.randn(c["experts"], h, generator=g) * 0.02).to(ctx.device, ctx.dtype))
        gd = torch.Generator(device=ctx.device)
        gd.manual_seed(555 + ctx.rank)

        def param(*shape):
            with torch.no_grad():
                return nn.Parameter(torch.empty(*shape, device=ctx.device, dtype=ctx.dtype)
                                    .normal_(0, 0.02, generator=gd))

        self.wg = [param(f, h) for _ in range(self.local)]
        self.wu = [param(f, h) for _ in range(self.local)]
        self.wd = [param(h, f) for _ in range(self.local)]

    def parameters(self):
        return [self.router, *self.wg, *self.wu, *self.wd]

    def expert(self, j, x):
        return F.linear(F.silu(F.linear(x, self.wg[j])) * F.linear(x, self.wu[j]), self.wd[j])

    def forward(self, x, a2a, mark):
        """x: [tokens, hidden]. a2a(input, output_splits, input_splits) -> output. mark(name)
        records a timing mark. Returns the output and the routing."""
        c, ep, nl, dev = self.c, self.ep, self.local, x.device
        k, e = c["top_k"], c["experts"]
        mark("start")
        probs = torch.softmax(F.linear(x, self.router).float(), -1)
        top_w, top_i = probs.topk(k, -1)
        top_w = (top_w / top_w.sum(-1, keepdim=True)).to(x.dtype)
        flat = top_i.reshape(-1)
        order = torch.sort(flat, stable=True).indices     # slots grouped by expert, so by rank
        token_of_slot = torch.div(order, k, rounding_mode="floor")
        send_counts = torch.bincount(flat, minlength=e)    # per global expert
        xs = x.index_select(0, token_of_slot)
        mark("routed")
        recv_counts = torch.empty_like(send_counts)
        dist.all_to_all_single(recv_counts, send_counts)   # [source rank, local expert]
        counts = torch.cat([send_counts, recv_counts]).cpu()
        send_c, recv_c = counts[:e], counts[e:]
        in_splits = send_c.view(ep, nl).sum(1).tolist()
        out_splits = recv_c.view(ep, nl).sum(1).tolist()
        per_expert = recv_c.view(ep, nl).sum(0).tolist()
        # Received rows come by source rank, then local expert: regroup them by local expert.
        local_of_row = torch.arange(nl).repeat(ep).repeat_interleave(recv_c)
        perm = torch.sort(local_of_row, stable=True).indices
        inv_perm = torch.empty_like(perm)
        inv_perm[perm] = torch.arange(perm.numel())
        perm, inv_perm = perm.to(dev), inv_perm.to(dev)
        mark("counts_exchanged")
        received = a2a(xs, out_splits, in_splits)
        mark("dispatched")
        grouped = received.index_select(0, perm)
        mark("permuted")
        y = torch.cat([self.expert(j, chunk) for j, chunk in enumerate(grouped.split(per_expert))])
        mark("experts_done")
        y = y.index_select(0, inv_perm)
        mark("unpermuted")
        back = a2a(y, in_splits, out_splits)
        mark("combined")
        inv_order = torch.empty_like(order)
        inv_order[order] = torch.arange(order.numel(), device=dev)
        slots = back.index_select(0, inv_order).view(x.shape[0], k, -1)
        out = (slots * top_w.unsqueeze(-1)).sum(1)
        mark("end")
        return out, {"top_i": top_i, "top_w": top_w, "received": sum(out_splits),
                     "per_expert": per_expert, "send_counts": send_c}


MOE_PARTS = [  # (part, from mark, to mark)
    ("route", "start", "routed"), ("counts_a2a", "routed", "counts_exchanged"),
    ("dispatch_a2a", "counts_exchanged", "dispatched"), ("permute", "dispatched", "permuted"),
    ("expert_gemm", "permuted", "experts_done"), ("unpermute", "experts_done", "unpermuted"),
    ("combine_a2a", "unpermuted", "combined"), ("combine", "combined", "end")]


def a2a_plain(inp, out_splits, in_splits):
    out = inp.new_empty((sum(out_splits),) + tuple(inp.shape[1:]))
    dist.all_to_all_single(out, inp.contiguous(), out_splits, in_splits)
    return out


def a2a_autograd_fn():
    try:
        from torch.distributed.nn.functional import all_to_all_single
    except Exception as error:  # noqa: BLE001
        raise Unsupported(f"torch.distributed.nn.functional.all_to_all_single: {error}")

    def a2a(inp, out_splits, in_splits):
        out = inp.new_empty((sum(out_splits),) + tuple(inp.shape[1:]))
        return all_to_all_single(out, inp.contiguous(), out_splits, in_splits)
    return a2a


def moe_check(ctx, moe, x):
    """The first S tokens of every rank against a reference without all-to-alls: the tokens and
    their routing all-gathered, each rank's experts applied to the rows routed to them, the
    contributions summed with an all-reduce (fp32)."""
    c, n, rank = ctx.cfg["moe"], ctx.world, ctx.rank
    s = min(ctx.cfg["moe_check_tokens"], x.shape[0])
    with torch.no_grad():
        out, route = moe.forward(x, a2a_plain, lambda name: None)

        def gathered(t):
            parts = [torch.empty_like(t) for _ in range(n)]
            dist.all_gather(parts, t.contiguous())
            return torch.cat(parts)

        xs, ti, tw = gathered(x[:s]), gathered(route["top_i"][:s]), gathered(route["top_w"][:s])
        contrib = torch.zeros(xs.shape[0], c["hidden"], device=ctx.device, dtype=torch.float32)
        for j in range(moe.local):
            rows, slot = (ti == rank * moe.local + j).nonzero(as_tuple=True)
            if rows.numel():
                y = moe.expert(j, xs[rows]).float() * tw[rows, slot].float().unsqueeze(-1)
                contrib.index_add_(0, rows, y)
        dist.all_reduce(contrib)
        ref = contrib[rank * s:(rank + 1) * s]
        err = ((out[:s].float() - ref).abs().max() / ref.abs().max().clamp_min(1e-30)).item()
    tol = 3e-2 if ctx.dtype == torch.bfloat16 else 1e-4
    return {"pass": bool(math.isfinite(err) and err <= tol), "max_rel_error": err, "tokens": s}


def time_moe(ctx, moe, x, backward):
    cfg = ctx.cfg
    a2a = a2a_autograd_fn() if backward else a2a_plain
    grad_out = torch.randn_like(x)
    info = {}

    def run():
        marks = {}
        xi = x.detach().requires_grad_(backward)
        with torch.set_grad_enabled(backward):
            out, route = moe.forward(xi, a2a, lambda name: marks.__setitem__(name, ctx.mark()))
            if backward:
                out.backward(grad_out)
                marks["backward_done"] = ctx.mark()
        info.update(received=route["received"], per_expert=route["per_expert"],
                    send_counts=route["send_counts"].tolist())
        spans = {name: (marks[a], marks[b]) for name, a, b in MOE_PARTS}
        spans["forward"] = (marks["start"], marks["end"])
        if backward:
            spans["backward"] = (marks["end"], marks["backward_done"])
        return spans

    before = lambda: [setattr(p, "grad", None) for p in moe.parameters()]
    totals, parts = stepwise(ctx, run, cfg["moe_warmup"], cfg["moe_iterations"], before)
    before()
    return {"total": median(totals), "parts": {k: median(v) for k, v in parts.items()},
            "received": info["received"], "send_counts": info["send_counts"]}


def part_moe(ctx):
    c, cfg, n = ctx.cfg["moe"], ctx.cfg, ctx.world
    tokens = c["batch"] * c["seq"]
    base = {"part": "moe", "world": n, "ep": n, "dtype": ctx.dtype_name}
    if c["experts"] % n:
        ctx.record(dict(base, kind="setup", status="failed",
                        error=f"{c['experts']} experts do not split over {n} ranks"))
        return
    moe = MoE(ctx)
    g = torch.Generator()
    g.manual_seed(2024 + ctx.rank)
    x = torch.randn(tokens, c["hidden"], generator=g).to(ctx.device, ctx.dtype)
    model = dict(c, tokens_per_rank=tokens, experts_per_rank=moe.local,
                 router="softmax over a random linear router, top-2, renormalised")
    ctx.measure(dict(base, check="moe_vs_dense_reference", model=model),
                lambda: moe_check(ctx, moe, x))

    def combine(results):
        received = [x["received"] for x in results]
        mean = sum(received) / len(received)
        per_expert = [sum(col) for col in zip(*[x["send_counts"] for x in results])]
        names = list(results[0]["parts"])
        out = {"layer_s": max(x["total"] for x in results),
               **over_ranks([x["total"] for x in results], "layer_s"),
               "parts_s_rank0": results[0]["parts"],
               "parts_s_max_over_ranks": {k: max(x["parts"][k] for x in results) for k in names},
               "parts_s_per_rank": [x["parts"] for x in results],
               "tokens_received_per_rank": received,
               "token_imbalance": max(received) / mean if mean else None,
               "tokens_per_expert": per_expert,
               "expert_imbalance": max(per_expert) / (sum(per_expert) / len(per_expert))}
        return out

    for mode, backward in (("forward", False), ("forward_backward", True)):
        ctx.measure(dict(base, kind="moe_layer", mode=mode, tokens_per_rank=tokens,
                         warmup=cfg["moe_warmup"], iterations=cfg["moe_iterations"],
                         a2a=("torch.distributed.nn.functional.all_to_all_single (autograd)"
                              if backward else "torch.distributed.all_to_all_single"),
                         note="layer_s: start to end of the layer (and its backward), slowest "
                              "rank's median; parts between CUDA events on the compute stream "
                              "(an all-to-all's time includes waiting for the slowest rank); "
                              "counts_a2a includes the host reading the split sizes"),
                    lambda backward=backward: time_moe(ctx, moe, x, backward), combine)
        if ctx.cuda:
            torch.cuda.empty_cache()


# ---- the worker and the launch ----------------------------------------------------------------

def meta(ctx, args, parts, backend):
    cuda = torch.cuda.is_available() and not args.cpu
    nccl = None
    if cuda:
        try:
            version = torch.cuda.nccl.version()
            nccl = ".".join(map(str, version)) if isinstance(version, tuple) else str(version)
        except Exception as error:  # noqa: BLE001
            nccl = f"unknown ({error})"
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    return {"started": now_utc(), "host": socket.gethostname(), "world": ctx.world,
            "backend": backend, "parts": parts, "quick": args.quick, "argv": sys.argv,
            "torch": torch.__version__, "cuda": torch.version.cuda, "nccl": nccl,
            "gpu_count": count,
            "device_names": [torch.cuda.get_device_name(i) for i in range(count)] if cuda
            else [platform.processor() or platform.machine()],
            "dtype": ctx.dtype_name,
            "env": {k: os.environ[k] for k in ENV_RECORDED if k in os.environ},
            "config": ctx.cfg}


def worker(rank, world, init_method, args):
    cuda = not args.cpu
    local_rank = int(os.environ.get("LOCAL_RANK", rank))
    if cuda:
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
    else:
        device = torch.device("cpu")
        torch.set_num_threads(max(1, (os.cpu_count() or 2) // world))
    backend = "nccl" if cuda else "gloo"
    kwargs = {"backend": backend, "init_method": init_method, "rank": rank, "world_size": world,
              "timeout": datetime.timedelta(seconds=args.pg_timeout)}
    if cuda:
        try:
            dist.init_process_group(device_id=device, **kwargs)
        except TypeError:  # PyTorch before 2.3: no eager initialisation
            dist.init_process_group(**kwargs)
    else:
        dist.init_process_group(**kwargs)
    parts = [p for p in PARTS if p in args.parts]
    ctx = Ctx(rank, world, device, cuda, QUICK if args.quick else FULL, None)
    if rank == 0:
        ctx.writer = Writer(args.out, meta(ctx, args, parts, backend))
    failed = False
    try:
        # A first collective of every rank (NCCL: before any batch_isend_irecv, whose first use
        # in a group must involve all its ranks).
        ctx.lockstep()
        torch.manual_seed(1 + rank)
        for part in parts:
            began = time.time()
            try:
                {"collectives": part_collectives, "pp": part_pp, "moe": part_moe}[part](ctx)
            except Exception as error:  # noqa: BLE001 - the next part still runs
                traceback.print_exc()
                ctx.record({"part": part, "world": world, "kind": "part", "status": "failed",
                            "error": f"{type(error).__name__}: {error}"[:1500]})
            if cuda:
                torch.cuda.empty_cache()  # the part's tensors went with its frame
            ctx.record({"part": part, "world": world, "kind": "part_done", "status": "ok",
                        "wall_s": time.time() - began})
        if ctx.writer:
            failed = ctx.writer.failures > 0
    finally:
        if ctx.writer:
            ctx.writer.finish()
        try:
            dist.barrier()
            dist.destroy_process_group()
        except Exception:  # noqa: BLE001
            pass
    return 1 if failed else 0


def spawned(rank, world, port, args):
    rc = worker(rank, world, f"tcp://127.0.0.1:{port}", args)
    if rc:
        sys.exit(rc)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="directory for parallel.json")
    parser.add_argument("--part", dest="parts", default="all",
                        help="comma-separated: collectives, pp, moe, or all (default)")
    parser.add_argument("--cpu", action="store_true", help="gloo on the CPU, fp32 (smoke test)")
    parser.add_argument("--quick", action="store_true", help="tiny sizes (smoke test)")
    parser.add_argument("--world", type=int, default=0,
                        help="processes to spawn when not under torchrun (default: every GPU, "
                             "or 2 with --cpu)")
    parser.add_argument("--pg-timeout", type=int, default=60,
                        help="seconds a collective may hang before the process group gives up")
    parser.add_argument("--summary", action="store_true",
                        help="print OUT/parallel.json's records, one line each, and exit")
    args = parser.parse_args()
    if args.summary:
        sys.exit(1 if print_summary(args.out) else 0)
    args.parts = list(PARTS) if args.parts == "all" else args.parts.split(",")
    unknown = set(args.parts) - set(PARTS)
    if unknown:
        parser.error(f"unknown parts: {', '.join(sorted(unknown))}")
    if not args.cpu and not torch.cuda.is_available():
        parser.error("no CUDA device: use --cpu")
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:  # under torchrun
        sys.exit(worker(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), "env://", args))
    world = args.world or (2 if args.cpu else torch.cuda.device_count())
    if world < 2:
        sys.exit(f"needs two or more processes; world size {world}")
    try:
        mp.spawn(spawned, args=(world, free_port(), args), nprocs=world)
    except Exception as error:  # noqa: BLE001 - a rank exited non-zero or raised
        print(f"parallel_check: {type(error).__name__}: {error}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
