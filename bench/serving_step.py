#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Times Llama-3-8B's steps as a serving engine runs them, written in plain PyTorch ops (no
Hugging Face modelling code, whose GQA decode copies every key and value four times): per layer
one fused RMSNorm (torch.nn.functional.rms_norm), one QKV GEMM, rotary embeddings on q and k,
the new keys and values written into a preallocated cache, fused attention reading the
grouped-query cache once (scaled_dot_product_attention with enable_gqa), the output GEMM, a
residual add, RMSNorm, one gate+up GEMM, SiLU times up, the down GEMM, a residual add; then the
final norm and the LM head for the last position. fp16, random weights.

Steps: the prefill of one 2048-token prompt, and decode steps at batches 1, 16, 64 and 128 with a
cache of 2176 (the mean of a 2048 + 256-token request). Each captured into a CUDA graph and
replayed: median of 7 samples of 5 back-to-back replays, between CUDA events. Each step is
checked finite. Results are written after every step to $OUT/serving_steps.json.

    python3 bench/serving_step.py --out "$OUT"
"""
import argparse
import json
import os
import statistics
import time

import torch
import torch.nn.functional as F

HIDDEN, FFN, LAYERS, HEADS, KV_HEADS, HEAD_DIM, VOCAB = 4096, 14336, 32, 32, 8, 128, 128256
DTYPE = torch.float16


def weights():
    g = torch.Generator(device="cuda").manual_seed(0)

    def w(*shape):
        return (torch.randn(*shape, device="cuda", dtype=DTYPE, generator=g) * 0.02)

    layers = [dict(qkv=w((HEADS + 2 * KV_HEADS) * HEAD_DIM, HIDDEN), o=w(HIDDEN, HIDDEN),
                   gate_up=w(2 * FFN, HIDDEN), down=w(HIDDEN, FFN),
                   n1=torch.ones(HIDDEN, device="cuda", dtype=DTYPE),
                   n2=torch.ones(HIDDEN, device="cuda", dtype=DTYPE)) for _ in range(LAYERS)]
    return layers, w(VOCAB, HIDDEN), torch.ones(HIDDEN, device="cuda", dtype=DTYPE)


def rotate(x, cos, sin):
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)


def step(model, tokens, caches, position, cos, sin, decode):
    """One step of `tokens` (batch, seq, hidden); caches: per layer (k, v) of (batch, kv_heads,
    length, head_dim); new keys and values written at `position`."""
    layers, head, final_norm = model
    x = tokens
    b, s, _ = x.shape
    for layer, (kc, vc) in zip(layers, caches):
        h = F.rms_norm(x, (HIDDEN,), layer["n1"], 1e-5)
        qkv = F.linear(h, layer["qkv"])
        q, k, v = qkv.split([HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM], dim=-1)
        q = rotate(q.view(b, s, HEADS, HEAD_DIM).transpose(1, 2), cos, sin)
        k = rotate(k.view(b, s, KV_HEADS, HEAD_DIM).transpose(1, 2), cos, sin)
        v = v.view(b, s, KV_HEADS, HEAD_DIM).transpose(1, 2)
        kc[:, :, position:position + s] = k
        vc[:, :, position:position + s] = v
        keys, values = (kc, vc) if decode else (k, v)
        a = F.scaled_dot_product_attention(q, keys, values, is_causal=not decode, enable_gqa=True)
        x = x + F.linear(a.transpose(1, 2).reshape(b, s, HIDDEN), layer["o"])
        h = F.rms_norm(x, (HIDDEN,), layer["n2"], 1e-5)
        gate, up = F.linear(h, layer["gate_up"]).chunk(2, dim=-1)
        x = x + F.linear(F.silu(gate) * up, layer["down"])
    return F.linear(F.rms_norm(x[:, -1:], (HIDDEN,), final_norm, 1e-5), head)


def timed(fn):
    fn()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        fn()
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    with torch.cuda.graph(graph):
        out = fn()
    graph.replay()
    torch.cuda.synchronize()
    samples = []
    for _ in range(7):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(5):
            graph.replay()
        stop.record()
        stop.synchronize()
        samples.append(start.elapsed_time(stop) / 5)
    finite = bool(torch.isfinite(out.float()).all())
    del graph
    return statistics.median(samples), finite


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.environ.get("OUT", "serving_step_out"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = True
    model = weights()
    results = dict(gpu=torch.cuda.get_device_name(), torch=torch.__version__,
                   cudnn=torch.backends.cudnn.version(), steps=[])

    def save():
        with open(os.path.join(args.out, "serving_steps.json"), "w") as f:
            json.dump(results, f, indent=1)

    runs = [("prefill 1x2048", 1, 2048, 2048, False)]
    runs += [(f"decode b{b} kv2176", b, 1, 2176, True) for b in (1, 16, 64, 128)]
    for name, batch, seq, length, decode in runs:
        t0 = time.time()
        try:
            caches = [(torch.randn(batch, KV_HEADS, length, HEAD_DIM, device="cuda", dtype=DTYPE),
                       torch.randn(batch, KV_HEADS, length, HEAD_DIM, device="cuda", dtype=DTYPE))
                      for _ in range(LAYERS)]
            tokens = torch.randn(batch, seq, HIDDEN, device="cuda", dtype=DTYPE)
            position = length - 1 if decode else 0
            angles = torch.rand(seq, HEAD_DIM // 2, device="cuda") * 3.14
            cos, sin = angles.cos().to(DTYPE), angles.sin().to(DTYPE)
            with torch.inference_mode():
                ms, finite = timed(lambda: step(model, tokens, caches, position, cos, sin, decode))
            results["steps"].append(dict(name=name, batch=batch, tokens=seq, kv_len=length,
                                         graph_ms=ms, finite=finite))
            print(f"{name}: {ms:.3f} ms, finite={finite} ({time.time() - t0:.0f} s)", flush=True)
        except Exception as e:  # one step's failure loses none of the others
            results["steps"].append(dict(name=name, error=f"{type(e).__name__}: {str(e)[:300]}"))
            print(f"{name}: {type(e).__name__}: {e}", flush=True)
        finally:
            caches = tokens = None
            torch.cuda.empty_cache()
        save()


if __name__ == "__main__":
    main()
