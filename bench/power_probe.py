#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Burst and sustained: what a GPU does from idle and what it holds under its power cap, with the
energy each costs (issue 39). NVML is read through ctypes from the driver's libnvidia-ml.so.1
(energy counter, power, SM and memory clocks, throttle reasons, the enforced power limit).

For each workload, a callable that issues GPU work:
  burst      after 1.5 s idle, the first ~25 ms of back-to-back calls: time per call (CUDA events)
             and the SM clock read right after;
  sustained  back-to-back for `--warm-s`, then a window of `--window-s`: time per call (events),
             energy per call and average power (NVML's energy counter across the window), the SM
             and memory clocks and board power sampled every chunk, and every throttle reason seen.
Workloads: idle; GEMMs (bf16, fp16, fp8, tf32, fp32 on CUDA cores) of compute-bound shapes; a
1 GiB device copy (DRAM) and a 16 MiB one (L2-resident); whole model steps from
bench/step_check.py (prefills, decodes, BERT, ResNet-50, a GPT-2 training step).
Each record is flushed to power.json as it is made; a workload that fails records its error.

    python3 bench/power_probe.py --out "$OUT" [--only gemm,copy] [--steps]
"""
import argparse
import ctypes
import json
import os
import sys
import threading
import time
import traceback

import torch

NVML_CLOCK_SM, NVML_CLOCK_MEM = 0, 2
REASONS = {  # nvmlClocksEventReasons (nvml.h)
    0x1: "gpu_idle", 0x2: "applications_clocks", 0x4: "sw_power_cap", 0x8: "hw_slowdown",
    0x10: "sync_boost", 0x20: "sw_thermal", 0x40: "hw_thermal", 0x80: "hw_power_brake",
    0x100: "display_clocks"}


class Nvml:
    """The few NVML calls this needs, on GPU `index`."""

    def __init__(self, index=0):
        self.lib = ctypes.CDLL("libnvidia-ml.so.1")
        self.check(self.lib.nvmlInit_v2())
        self.handle = ctypes.c_void_p()
        self.check(self.lib.nvmlDeviceGetHandleByIndex_v2(index, ctypes.byref(self.handle)))

    def check(self, status):
        if status != 0:
            self.lib.nvmlErrorString.restype = ctypes.c_char_p
            raise RuntimeError(f"NVML error {status}: {self.lib.nvmlErrorString(status).decode()}")

    def _uint(self, name, *args):
        value = ctypes.c_uint()
        self.check(getattr(self.lib, name)(self.handle, *args, ctypes.byref(value)))
        return value.value

    def energy_mj(self):
        value = ctypes.c_ulonglong()
        self.check(self.lib.nvmlDeviceGetTotalEnergyConsumption(self.handle, ctypes.byref(value)))
        return value.value

    def power_w(self):
        return self._uint("nvmlDeviceGetPowerUsage") / 1000.0

    def clock_mhz(self, kind):
        return self._uint("nvmlDeviceGetClockInfo", ctypes.c_int(kind))

    def max_clock_mhz(self, kind):
        return self._uint("nvmlDeviceGetMaxClockInfo", ctypes.c_int(kind))

    def reasons(self):
        value = ctypes.c_ulonglong()
        self.check(self.lib.nvmlDeviceGetCurrentClocksEventReasons(self.handle,
                                                                    ctypes.byref(value)))
        return [name for bit, name in REASONS.items() if value.value & bit]

    def limit_w(self):
        return self._uint("nvmlDeviceGetEnforcedPowerLimit") / 1000.0

    def temperature_c(self):
        return self._uint("nvmlDeviceGetTemperature", ctypes.c_int(0))


def sync():
    torch.cuda.synchronize()


def timed_calls(fn, calls):
    """Seconds per call of `calls` back-to-back calls, between CUDA events."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(calls):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / 1e3 / calls


def burst(nvml, fn, idle_s):
    """From `idle_s` of idle: the first ~25 ms of calls."""
    fn()
    sync()
    time.sleep(idle_s)
    idle_clock = nvml.clock_mhz(NVML_CLOCK_SM)
    one = timed_calls(fn, 1)
    calls = max(1, min(200, int(0.025 / max(one, 1e-6))))
    per_call = timed_calls(fn, calls)
    return dict(burst_s=per_call, burst_calls=calls, first_call_s=one,
                clock_after_burst_mhz=nvml.clock_mhz(NVML_CLOCK_SM),
                clock_at_idle_mhz=idle_clock)


class Sampler:
    """NVML read every `period_s` on a thread of its own while the work runs, so that the host
    thread issuing the work never waits on NVML (ctypes lets go of the GIL in each call)."""

    def __init__(self, nvml, period_s=0.05):
        self.nvml, self.period_s = nvml, period_s
        self.clocks, self.mem_clocks, self.powers, self.temps, self.reasons = [], [], [], [], set()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        self.times, start = [], time.perf_counter()
        while not self.stop.wait(self.period_s):
            self.times.append(time.perf_counter() - start)
            self.clocks.append(self.nvml.clock_mhz(NVML_CLOCK_SM))
            self.mem_clocks.append(self.nvml.clock_mhz(NVML_CLOCK_MEM))
            self.powers.append(self.nvml.power_w())
            self.temps.append(self.nvml.temperature_c())
            self.reasons.update(self.nvml.reasons())

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


def sustained(nvml, fn, warm_s, window_s, per_call_guess):
    """Back-to-back for warm_s, then a measured window of window_s (chunks of ~20 ms, the host
    kept at most two chunks ahead of the GPU; NVML sampled on its own thread)."""
    chunk = max(1, int(0.02 / max(per_call_guess, 1e-6)))
    end = time.perf_counter() + warm_s
    while time.perf_counter() < end:
        for _ in range(chunk):
            fn()
        sync()
    start_event, end_event = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    sync()
    with Sampler(nvml) as s:
        e0, t0 = nvml.energy_mj(), time.perf_counter()
        start_event.record()
        calls, pending = 0, []
        while time.perf_counter() - t0 < window_s:
            for _ in range(chunk):
                fn()
            calls += chunk
            marker = torch.cuda.Event()
            marker.record()
            pending.append(marker)
            if len(pending) > 2:
                pending.pop(0).synchronize()
        end_event.record()
        end_event.synchronize()
        e1, t1 = nvml.energy_mj(), time.perf_counter()
    gpu_s = start_event.elapsed_time(end_event) / 1e3
    mean = lambda xs: sum(xs) / len(xs) if xs else None
    return dict(sustained_s=gpu_s / calls, calls=calls, window_s=t1 - t0, gpu_window_s=gpu_s,
                energy_j_per_call=(e1 - e0) / 1e3 / calls, power_w=(e1 - e0) / 1e3 / (t1 - t0),
                sampled_power_w=mean(s.powers), sm_clock_mhz=mean(s.clocks),
                sm_clock_min_mhz=min(s.clocks) if s.clocks else None,
                mem_clock_mhz=mean(s.mem_clocks), temperature_c=mean(s.temps),
                throttle_reasons=sorted(s.reasons))


def ramp(nvml, fn, idle_s, seconds=0.8):
    """From idle, every call's time for `seconds` (an event after each), and the SM clock and
    power every 10 ms: how long a burst lasts before the power controller lowers the clock."""
    fn()
    sync()
    time.sleep(idle_s)
    events = [torch.cuda.Event(enable_timing=True)]
    with Sampler(nvml, period_s=0.01) as s:
        events[0].record()
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            fn()
            e = torch.cuda.Event(enable_timing=True)
            e.record()
            events.append(e)
            if len(events) > 4:
                events[-4].synchronize()
        sync()
    ends = [events[0].elapsed_time(e) / 1e3 for e in events[1:]]
    return dict(ramp_call_end_s=ends, ramp_sample_s=s.times, ramp_clock_mhz=s.clocks,
                ramp_power_w=s.powers)


def gemm(m, n, k, dtype, tf32=False):
    def make():
        torch.backends.cuda.matmul.allow_tf32 = tf32
        if dtype == "fp8":
            a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
            b = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn).t()
            one = torch.tensor(1.0, device="cuda")
            return lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one,
                                            out_dtype=torch.bfloat16)
        t = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[dtype]
        a = torch.randn(m, k, device="cuda", dtype=t)
        b = torch.randn(k, n, device="cuda", dtype=t)
        c = torch.empty(m, n, device="cuda", dtype=t)
        return lambda: torch.matmul(a, b, out=c)
    precision = "tf32" if tf32 else dtype
    return dict(kind="gemm", precision=precision, m=m, n=n, k=k, flops=2.0 * m * n * k), make


def copy(nbytes):
    def make():
        x = torch.empty(nbytes // 4, device="cuda", dtype=torch.float32).uniform_()
        y = torch.empty_like(x)
        return lambda: y.copy_(x)
    return dict(kind="copy", bytes_moved=2.0 * nbytes, size_bytes=nbytes), make


MICRO = [
    ("idle", None),
    ("gemm bf16 8192^3", gemm(8192, 8192, 8192, "bf16")),
    ("gemm bf16 4096x13824x5120", gemm(4096, 13824, 5120, "bf16")),
    ("gemm bf16 2048x11008x4096", gemm(2048, 11008, 4096, "bf16")),
    ("gemm fp16 8192^3", gemm(8192, 8192, 8192, "fp16")),
    ("gemm fp8 8192^3", gemm(8192, 8192, 8192, "fp8")),
    ("gemm tf32 8192^3", gemm(8192, 8192, 8192, "fp32", tf32=True)),
    ("gemm fp32 4096^3 (CUDA cores)", gemm(4096, 4096, 4096, "fp32")),
    ("copy 1 GiB (DRAM)", copy(1 << 30)),
    ("copy 16 MiB (L2)", copy(16 << 20)),
]


def step_workloads(names):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import step_check
    step_check.ARGS = argparse.Namespace(out=None)
    chosen = [(n, b) for n, b in step_check.STEPS if not names or any(s in n for s in names)]
    result = []
    for name, builder in chosen:
        def make(builder=builder):
            info, notes = {}, []
            fn = builder(info, notes)
            info["notes"] = notes
            return fn, info
        result.append((name, (dict(kind="step"), make)))
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.environ.get("OUT", "power_out"))
    ap.add_argument("--only", default="", help="substrings of micro workload names")
    ap.add_argument("--steps", default="", help="substrings of bench/step_check.py step names "
                    "(all: '*'; none: empty)")
    ap.add_argument("--idle-s", type=float, default=1.5)
    ap.add_argument("--warm-s", type=float, default=1.5)
    ap.add_argument("--window-s", type=float, default=2.0)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    nvml = Nvml()
    meta = dict(gpu=torch.cuda.get_device_name(), torch=torch.__version__,
                power_limit_w=nvml.limit_w(), max_sm_clock_mhz=nvml.max_clock_mhz(NVML_CLOCK_SM),
                max_mem_clock_mhz=nvml.max_clock_mhz(NVML_CLOCK_MEM),
                date=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), args=vars(args))
    records = []

    def save():
        with open(os.path.join(args.out, "power.json"), "w") as f:
            json.dump(dict(meta=meta, records=records), f, indent=1)

    work = [(n, w) for n, w in MICRO if not args.only or any(s in n for s in args.only.split(","))]
    if args.steps:
        work += step_workloads([] if args.steps == "*" else args.steps.split(","))
    for name, workload in work:
        record = dict(name=name)
        t0 = time.time()
        try:
            if workload is None:  # idle: the energy counter over the window, nothing issued
                sync()
                time.sleep(args.idle_s)
                e0, s0 = nvml.energy_mj(), time.perf_counter()
                powers, clocks = [], []
                while time.perf_counter() - s0 < args.window_s:
                    time.sleep(0.05)
                    powers.append(nvml.power_w())
                    clocks.append(nvml.clock_mhz(NVML_CLOCK_SM))
                e1, s1 = nvml.energy_mj(), time.perf_counter()
                record.update(kind="idle", power_w=(e1 - e0) / 1e3 / (s1 - s0),
                              sampled_power_w=sum(powers) / len(powers),
                              sm_clock_mhz=sum(clocks) / len(clocks),
                              throttle_reasons=nvml.reasons())
            else:
                info, make = workload
                record.update(info)
                made = make()
                fn, described = made if isinstance(made, tuple) else (made, {})
                record.update(described)
                b = burst(nvml, fn, args.idle_s)
                record.update(b)
                record.update(sustained(nvml, fn, args.warm_s, args.window_s, b["burst_s"]))
                if name == "gemm bf16 8192^3":
                    record.update(ramp(nvml, fn, args.idle_s))
                if "flops" in info:
                    record["burst_tflops"] = info["flops"] / b["burst_s"] / 1e12
                    record["sustained_tflops"] = info["flops"] / record["sustained_s"] / 1e12
                    record["pj_per_flop"] = record["energy_j_per_call"] / info["flops"] * 1e12
                if "bytes_moved" in info:
                    record["burst_tb_per_s"] = info["bytes_moved"] / b["burst_s"] / 1e12
                    record["sustained_tb_per_s"] = info["bytes_moved"] / record["sustained_s"] / 1e12
                    record["pj_per_byte"] = record["energy_j_per_call"] / info["bytes_moved"] * 1e12
                del fn
        except Exception as e:  # one workload's failure costs that workload only
            record["error"] = f"{type(e).__name__}: {e}"
            record["traceback"] = traceback.format_exc()[-2000:]
        record["seconds"] = time.time() - t0
        records.append(record)
        save()
        print(json.dumps({k: v for k, v in record.items() if k != "traceback"}), flush=True)
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
