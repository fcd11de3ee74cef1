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


def record_each(path, doc, cases):
    """Runs each (name, measure) of `cases`, appending its result (or its error: the others still
    run) to doc["results"] and writing `doc` to `path` after each, so that a failure loses
    nothing measured before it. True when none failed."""
    import json
    import os
    import traceback
    for name, measure in cases:
        try:
            doc["results"].append(measure())
        except Exception as e:  # noqa: BLE001 — recorded, the others still run
            doc["results"].append({"name": name, "error": repr(e),
                                   "trace": traceback.format_exc()[-2000:]})
        torch.cuda.empty_cache()
        with open(path + ".tmp", "w") as f:
            json.dump(doc, f, indent=1)
        os.replace(path + ".tmp", path)
        print(json.dumps(doc["results"][-1])[:400], flush=True)
    return all("error" not in r for r in doc["results"])
