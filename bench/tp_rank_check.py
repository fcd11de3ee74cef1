#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""One tensor-parallel rank of Llama-3.3-70B (examples/configs/llama-3.3-70b.json, the same shape
as issue 42's Llama-3.1-70B) on one GPU, its all-reduces left out: what the rank computes
between them, to split issue 42's TP 2 and TP 4 steps (measured with the all-reduces, on a host of
four) into computation and communication.

A rank holds Megatron's split of all 80 layers, bf16, random weights (normal, std 0.02): its share
of the query heads (64 / TP) and KV heads (8 / TP), of the MLP's 28672 columns and of the 128256
vocabulary rows (the embedding and the LM head). A layer: rmsnorm, the fused QKV GEMM, rotary
embedding of q and k (rotate-half, as transformers), the KV-cache write, causal fused attention
(scaled_dot_product_attention with enable_gqa), o_proj, [all-reduce], residual add, rmsnorm, the
fused gate/up GEMM, silu(gate) * up, down_proj, [all-reduce], residual add. The step: the
embedding, the layers, the final rmsnorm and the LM head at every position (logits not gathered).

Steps as the issue measured them: prefill of 1 × 4096 tokens, decode of batch 32 and of batch 1
against a 4096-token cache, each captured as a CUDA graph and replayed (median of CUDA-event
times after warm-ups). First a check: one layer's output against float32 math on the same random
inputs. Writes OUT/tp_rank.json after each case.

Then (--gap-cycles N ...) the prefill again with a kernel spinning N SM cycles on one SM where each
all-reduce goes: the SMs idle between the GEMMs as a collective leaves them, to see whether the
power cap's clock follows the step's average power or its compute's; and the prefill's and the
batch-32 decode's eager runs profiled by kernel class (torch.profiler).

    python3 bench/tp_rank_check.py OUT [--tp 2 4] [--layers 80] [--gap-cycles N ...]
"""
import argparse
import datetime
import json
import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_timing import record_each, timed  # noqa: E402

CONFIG = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples",
                      "configs", "llama-3.3-70b.json")
C = json.load(open(CONFIG, encoding="utf-8"))
HIDDEN, HEADS, KV_HEADS = C["hidden_size"], C["num_attention_heads"], C["num_key_value_heads"]
HEAD_DIM = HIDDEN // HEADS
FFN, VOCAB, EPS, THETA = C["intermediate_size"], C["vocab_size"], C["rms_norm_eps"], C["rope_theta"]
DT = torch.bfloat16


def rank_weights(tp, layers, dev):
    h, kv = HEADS // tp, KV_HEADS // tp
    w = lambda *s: torch.randn(*s, device=dev, dtype=DT) * 0.02  # noqa: E731
    ones = lambda: torch.ones(HIDDEN, device=dev, dtype=DT)  # noqa: E731
    return {"heads": h, "kv": kv, "ffn": FFN // tp,
            "embed": w(VOCAB // tp, HIDDEN), "norm": ones(), "lm_head": w(VOCAB // tp, HIDDEN),
            "layers": [{"in_norm": ones(), "qkv": w((h + 2 * kv) * HEAD_DIM, HIDDEN),
                        "o": w(HIDDEN, h * HEAD_DIM), "post_norm": ones(),
                        "gate_up": w(2 * (FFN // tp), HIDDEN), "down": w(HIDDEN, FFN // tp)}
                       for _ in range(layers)]}


def rope_tables(positions, dev):
    inv = 1.0 / (THETA ** (torch.arange(0, HEAD_DIM, 2, device=dev, dtype=torch.float32) / HEAD_DIM))
    f = torch.outer(positions.float(), inv)
    e = torch.cat((f, f), dim=-1)
    return e.cos().to(DT), e.sin().to(DT)


def rotate(x, cos, sin):
    x1, x2 = x[..., : HEAD_DIM // 2], x[..., HEAD_DIM // 2:]
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin


def layer(x, p, W, cache, start, cos, sin, gap=None):
    """One layer of the rank on x [batch, tokens, hidden]; writes k, v into cache at start."""
    b, t, _ = x.shape
    h, kv = W["heads"], W["kv"]
    y = F.rms_norm(x, (HIDDEN,), p["in_norm"], EPS)
    q, k, v = (y @ p["qkv"].t()).split([h * HEAD_DIM, kv * HEAD_DIM, kv * HEAD_DIM], dim=-1)
    q = rotate(q.view(b, t, h, HEAD_DIM).transpose(1, 2), cos, sin)
    k = rotate(k.view(b, t, kv, HEAD_DIM).transpose(1, 2), cos, sin)
    kc, vc = cache
    kc[:, :, start:start + t] = k
    vc[:, :, start:start + t] = v.view(b, t, kv, HEAD_DIM).transpose(1, 2)
    a = F.scaled_dot_product_attention(q, kc[:, :, :start + t], vc[:, :, :start + t],
                                       is_causal=t > 1, enable_gqa=True)
    o = a.transpose(1, 2).reshape(b, t, h * HEAD_DIM) @ p["o"].t()
    if gap:  # where the all-reduce goes
        gap()
    x = x + o
    y = F.rms_norm(x, (HIDDEN,), p["post_norm"], EPS)
    g, u = (y @ p["gate_up"].t()).chunk(2, dim=-1)
    d = (F.silu(g) * u) @ p["down"].t()
    if gap:
        gap()
    return x + d


def step(tokens, W, caches, start, cos, sin, gap=None):
    x = F.embedding(tokens, W["embed"])  # [all-reduce of the vocabulary-parallel embedding]
    if gap:
        gap()
    for p, cache in zip(W["layers"], caches):
        x = layer(x, p, W, cache, start, cos, sin, gap)
    return F.rms_norm(x, (HIDDEN,), W["norm"], EPS) @ W["lm_head"].t()


def check_layer(dev):
    """One layer of a TP 4 rank against float32 math on the same random inputs: what the layer adds
    to its input (the residual alone would hide an error)."""
    torch.manual_seed(1)
    W = rank_weights(4, 1, dev)
    x = torch.randn(2, 64, HIDDEN, device=dev, dtype=DT)
    cos, sin = rope_tables(torch.arange(64, device=dev), dev)
    cache = [torch.zeros(2, W["kv"], 64, HEAD_DIM, device=dev, dtype=DT) for _ in range(2)]
    got = layer(x, W["layers"][0], W, cache, 0, cos, sin).float() - x.float()
    p32 = {k: v.float() for k, v in W["layers"][0].items()}
    cache32 = [torch.zeros(2, W["kv"], 64, HEAD_DIM, device=dev) for _ in range(2)]
    ref = layer(x.float(), p32, W, cache32, 0, cos.float(), sin.float()) - x.float()
    err = ((got - ref).abs().max() / ref.abs().max()).item()
    return {"name": "check: one TP 4 layer's update against float32", "max_error_over_max": err,
            "pass": err < 3e-2}


def graph_of(run):
    """`run` captured as a CUDA graph (after a warm-up on a side stream, as PyTorch asks)."""
    run()
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        run()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        run()
    return g


def kernel_class(name):
    n = name.lower()
    if any(w in n for w in ("flash", "fmha", "attention", "sdpa", "cudnn")):
        return "attention"
    if any(w in n for w in ("gemm", "nvjet", "xmma", "cutlass", "cublas")):
        return "gemm"
    return "other"


def profiled(run):
    """Device time by kernel class of one eager run, and the costliest kernels."""
    from torch.profiler import ProfilerActivity, profile
    run()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        run()
        torch.cuda.synchronize()
    classes, kernels = {}, {}
    for e in prof.events():
        if e.device_type.name != "CUDA":
            continue
        us = e.time_range.elapsed_us()
        classes[kernel_class(e.name)] = classes.get(kernel_class(e.name), 0) + us
        k = kernels.setdefault(e.name[:120], [0, 0])
        k[0] += us
        k[1] += 1
    top = sorted(kernels.items(), key=lambda kv: -kv[1][0])[:25]
    return {"class_ms": {k: v / 1e3 for k, v in classes.items()},
            "top_kernels": [{"name": n, "ms": v[0] / 1e3, "calls": v[1]} for n, v in top]}


def measure(W, tp, phase, batch, dev, gap_cycles=0, profile_it=False):
    """One step of the rank, graph-replayed; gap_cycles: a spinning kernel of that many SM cycles
    where each all-reduce would be (the SMs idle, as a collective leaves them)."""
    layers = len(W["layers"])
    kv_len, tokens_each = (4096, 1) if phase == "decode" else (0, 4096)
    length = kv_len + tokens_each
    caches = [(torch.randn(batch, W["kv"], length, HEAD_DIM, device=dev, dtype=DT),
               torch.randn(batch, W["kv"], length, HEAD_DIM, device=dev, dtype=DT))
              for _ in range(layers)]
    tokens = torch.randint(0, VOCAB // tp, (batch, tokens_each), device=dev)
    cos, sin = rope_tables(torch.arange(kv_len, length, device=dev), dev)
    gap = (lambda: torch.cuda._sleep(gap_cycles)) if gap_cycles else None
    run = lambda: step(tokens, W, caches, kv_len, cos, sin, gap)  # noqa: E731
    result = {"name": f"TP {tp} rank, {phase} batch {batch}"
                      + (f", {gap_cycles}-cycle gaps" if gap_cycles else ""),
              "tp": tp, "layers": layers, "phase": phase, "batch": batch, "kv_len": kv_len,
              "tokens_each": tokens_each, "gap_cycles": gap_cycles}
    with torch.no_grad():
        g = graph_of(run)
        steps = 7 if phase == "prefill" else 30
        result["started_unix"] = time.time()
        result["graph_ms"], result["peak_bytes"] = timed(g.replay, steps=steps, warmup=3)
        result["ended_unix"] = time.time()
        result["timing"] = f"CUDA graph replay, median of {steps} after 3 warm-ups"
        if gap_cycles:
            gaps = graph_of(lambda: [gap() for _ in range(2 * layers + 1)])
            result["gaps_alone_ms"], _ = timed(gaps.replay, steps=steps, warmup=3)
        if profile_it:
            result["eager_profile"] = profiled(run)
    return result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--tp", type=int, nargs="+", default=[2, 4])
    ap.add_argument("--layers", type=int, default=80)
    ap.add_argument("--gap-cycles", type=int, nargs="*", default=[],
                    help="also the prefill with a spinning kernel of this many cycles where "
                         "each all-reduce goes (each value a run)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    dev = torch.device("cuda")
    held = {}

    def built(tp):
        held.pop("W", None)
        torch.cuda.empty_cache()
        torch.manual_seed(0)
        held["W"] = rank_weights(tp, a.layers, dev)
        return {"name": f"TP {tp} rank's weights", "bytes": torch.cuda.memory_allocated()}
    doc = {"about": "bench/tp_rank_check.py: one tensor-parallel rank of Llama-3.3-70B, its "
                    "all-reduces left out",
           "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "device": torch.cuda.get_device_name(), "torch": torch.__version__,
           "cuda": torch.version.cuda, "argv": sys.argv, "results": []}
    cases = [("check", lambda: check_layer(dev))]
    for tp in a.tp:
        cases.append((f"tp{tp}-weights", lambda tp=tp: built(tp)))
        for phase, batch in (("prefill", 1), ("decode", 32), ("decode", 1)):
            cases.append((f"tp{tp}-{phase}-{batch}",
                          lambda tp=tp, phase=phase, batch=batch:
                          measure(held["W"], tp, phase, batch, dev,
                                  profile_it=phase == "prefill" or batch == 32)))
        for cycles in a.gap_cycles:
            cases.append((f"tp{tp}-prefill-gaps-{cycles}", lambda tp=tp, cycles=cycles:
                          measure(held["W"], tp, "prefill", 1, dev, gap_cycles=cycles)))
    ok = record_each(os.path.join(a.out, "tp_rank.json"), doc, cases)
    ok = ok and doc["results"][0].get("pass", False)
    held.clear()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
