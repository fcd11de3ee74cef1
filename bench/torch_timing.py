# SPDX-License-Identifier: Apache-2.0
"""What the PyTorch benchmarks time a step with: CUDA events, the median after warm-ups, and the
peak memory of one steady-state step."""
import statistics

import torch


def timed(step, steps=10, warmup=3):
    """Median ms per step (CUDA events) and the peak bytes of one steady-state step."""
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    step()
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated()
    times = []
    for _ in range(steps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        step()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times), peak
