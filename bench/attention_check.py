#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Times PyTorch's fused attention (scaled_dot_product_attention: FlashAttention on an H100) on
Llama-3-8B's attention shapes, to hold the fused attention op's prediction against
(docs/benchmarks.md). Device time: the calls captured into a CUDA graph and replayed; median of
five replays of 20 calls each. Checks the output against the unfused product on random data.

    python3 bench/attention_check.py          # on the GPU machine (PyTorch with CUDA)
"""
import statistics
import torch
import torch.nn.functional as F

CASES = [  # name, batch, query heads, kv heads, queries, keys, head_dim, causal
    ("prefill b1 s2048", 1, 32, 8, 2048, 2048, 128, True),
    ("prefill b8 s2048", 8, 32, 8, 2048, 2048, 128, True),
    ("decode b1 kv4096", 1, 32, 8, 1, 4096, 128, False),
    ("decode b16 kv4096", 16, 32, 8, 1, 4096, 128, False),
    ("decode b64 kv4096", 64, 32, 8, 1, 4096, 128, False),
]


def main():
    torch.manual_seed(0)
    dtype = torch.bfloat16
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}")
    for name, b, h, kvh, s, l, d, causal in CASES:
        q = torch.randn(b, h, s, d, device="cuda", dtype=dtype)
        k = torch.randn(b, kvh, l, d, device="cuda", dtype=dtype)
        v = torch.randn(b, kvh, l, d, device="cuda", dtype=dtype)
        group = h // kvh
        kk, vv = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)
        # Grouped-query attention as the kernel runs it (K and V read once per kv head), where
        # this PyTorch has it; else K and V repeated per query head (4x the cache read).
        try:
            F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
            run = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal,
                                                         enable_gqa=True)
            how = "gqa"
        except TypeError:
            run = lambda: F.scaled_dot_product_attention(q, kk, vv, is_causal=causal)
            how = "repeated kv"
        out = run()
        ref = torch.softmax((q.float() @ kk.float().transpose(-1, -2)) / d ** 0.5 +
                            (torch.full((s, l), float("-inf"), device="cuda").triu(1)
                             if causal else 0), dim=-1) @ vv.float()
        error = ((out.float() - ref).abs().max() / ref.abs().max()).item()
        for _ in range(3):
            run()
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(20):
                run()
        times = []
        for _ in range(5):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            graph.replay()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end) * 1e3 / 20)
        t = statistics.median(times)
        pairs = s * (l - s) + s * (s + 1) // 2 if causal else s * l
        flops = 4 * b * h * pairs * d
        bytes_ = 2 * (2 * b * h * s * d + 2 * b * kvh * l * d)
        print(f"{name:20s} {t:9.1f} us  {flops / t / 1e6:8.1f} TFLOP/s  "
              f"{bytes_ / t / 1e3:7.0f} GB/s  max rel error {error:.1e}  ({how})")


if __name__ == "__main__":
    main()
