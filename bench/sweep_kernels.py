#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Issue 28's measurements: the device time of the non-GEMM kernels a real step runs (fused
attention, memory-bound ops and the glue around them, cuDNN convolutions, the gap between
graph-replayed kernels) on a seeded sweep of shapes, to fit a model on one half and score it on
the other (column `split`: a seeded coin per shape, "fit" or "score").

Device time: N calls captured into a CUDA graph (inputs allocated outside it, torch.randn data),
the graph replayed 7 times between CUDA events; the median replay / N, in µs. N is raised until a
replay takes ≥ 1 ms (at most 200 calls). Where capture fails the calls are timed eagerly with
synchronisation and `timing` says "eager". `bytes`: minimum DRAM traffic (inputs read and outputs
written once); `l2_resident` = 1 where that fits in L2, so the replayed calls may run from L2.
Causal attention counts the pairs it keeps, s·(s+1)/2 per head; its backward 2.5× the forward.

    python3 bench/sweep_kernels.py --out DIR [--budget-s 400] [--seed 28] [--sections a,b]
    python3 bench/sweep_kernels.py --plan     # rows planned per section (no torch, no GPU)
    bash bench/sweep_kernels.sh               # on the GPU machine, into $OUT

DIR receives (CSV rows flushed as measured: a kill loses nothing):
  attention.csv  scaled_dot_product_attention: PyTorch's default backend (`picked` names it),
                 forced cuDNN, forced FLASH ("unsupported" where refused); prefill causal and
                 full, decode; training shapes: fwd, and bwd = (fwd+bwd) − fwd (`fwd_bwd_us`)
  memops.csv     norms, activations, gated product, add, mul, softmax, batchnorm, pooling,
                 transposed copy, rotary embedding, embedding gather, KV-cache append
  conv.csv       F.conv2d via cuDNN (channels_last, cudnn.benchmark): ResNet-50's and ConvNeXt-T's
                 convolutions at batch 1-128, 40 seeded random ones; ResNet-50's dgrad and wgrad
                 (aten.convolution_backward) at batch 32
  gaps.csv       graphs of N tiny kernels: time per kernel, the floor every small kernel pays
  meta.json      GPU, versions, nvidia-smi clocks/power before and after each section, seconds
                 per section, checks against float32 (each SDPA backend, conv2d, rms_norm), errors
  kernels.json   per op kind at one shape: the kernels that ran and their share of device time
                 (profiled last, so the profiler cannot slow the timings)
Each section stops when its share of --budget-s (counted from the script's start) is spent.
"""
import time

T0 = time.time()
import argparse  # noqa: E402
import contextlib  # noqa: E402
import csv  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import random  # noqa: E402
import signal  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

try:  # --plan runs without torch
    import torch  # noqa: E402
    import torch.nn.functional as F  # noqa: E402
except ImportError:
    torch = F = None

DTYPES = ("float16", "bfloat16")
ES = 2  # bytes per element of both
HIDDENS = (768, 1024, 2048, 4096, 5120, 8192)
BATCHES = (1, 8, 32, 64, 128)
# Budget shares; deadlines are cumulative, so time a section leaves goes to the next.
SHARES = (("checks", 0.05), ("gaps", 0.05), ("attention", 0.33), ("memops", 0.22),
          ("conv", 0.30), ("kernels", 0.07))
# (q heads, kv heads, head dim, weight): LLM-realistic, GQA ratios 1, 4 and 8.
HEADS = ((32, 8, 128, 4), (32, 32, 128, 3), (64, 8, 128, 2), (40, 40, 128, 1), (32, 4, 128, 1),
         (16, 16, 64, 2), (12, 12, 64, 1), (32, 8, 64, 1), (16, 16, 256, 1), (8, 1, 256, 1),
         (16, 4, 256, 1))
# The steps: (phase, q heads, kv heads, head dim, batch, q len, kv len, causal).
ATTN_ANCHORS = (
    ("prefill", 32, 32, 128, 1, 2048, 2048, True), ("prefill", 32, 32, 128, 4, 4096, 4096, True),
    ("prefill", 32, 8, 128, 1, 1024, 1024, True), ("prefill", 32, 8, 128, 2, 4096, 4096, True),
    ("prefill", 32, 8, 128, 1, 32768, 32768, True), ("prefill", 12, 12, 64, 8, 512, 512, False),
    ("prefill", 12, 12, 64, 8, 1024, 1024, True), ("decode", 32, 8, 128, 1, 1, 4096, False),
    ("decode", 32, 8, 128, 32, 1, 4096, False), ("decode", 32, 8, 128, 128, 1, 4096, False),
    ("decode", 32, 32, 128, 1, 1, 2048, False), ("decode", 32, 32, 128, 32, 1, 2048, False))
BWD_ANCHORS = (
    ("prefill", 12, 12, 64, 8, 1024, 1024, True), ("prefill", 32, 8, 128, 1, 4096, 4096, True),
    ("prefill", 32, 32, 128, 2, 2048, 2048, True), ("prefill", 12, 12, 64, 8, 512, 512, False))
# Convolutions: (name, C, H = W, K, R = S, stride, pad, groups, how many the network has).
RESNET50 = (
    ("conv1", 3, 224, 64, 7, 2, 3, 1, 1), ("l1.1x1a", 64, 56, 64, 1, 1, 0, 1, 1),
    ("l1.1x1b", 256, 56, 64, 1, 1, 0, 1, 2), ("l1.3x3", 64, 56, 64, 3, 1, 1, 1, 3),
    ("l1.1x1c+down", 64, 56, 256, 1, 1, 0, 1, 4), ("l2.1x1a", 256, 56, 128, 1, 1, 0, 1, 1),
    ("l2.3x3s2", 128, 56, 128, 3, 2, 1, 1, 1), ("l2.down", 256, 56, 512, 1, 2, 0, 1, 1),
    ("l2.1x1c", 128, 28, 512, 1, 1, 0, 1, 4), ("l2.1x1b", 512, 28, 128, 1, 1, 0, 1, 3),
    ("l2.3x3", 128, 28, 128, 3, 1, 1, 1, 3), ("l3.1x1a", 512, 28, 256, 1, 1, 0, 1, 1),
    ("l3.3x3s2", 256, 28, 256, 3, 2, 1, 1, 1), ("l3.down", 512, 28, 1024, 1, 2, 0, 1, 1),
    ("l3.1x1c", 256, 14, 1024, 1, 1, 0, 1, 6), ("l3.1x1b", 1024, 14, 256, 1, 1, 0, 1, 5),
    ("l3.3x3", 256, 14, 256, 3, 1, 1, 1, 5), ("l4.1x1a", 1024, 14, 512, 1, 1, 0, 1, 1),
    ("l4.3x3s2", 512, 14, 512, 3, 2, 1, 1, 1), ("l4.down", 1024, 14, 2048, 1, 2, 0, 1, 1),
    ("l4.1x1c", 512, 7, 2048, 1, 1, 0, 1, 3), ("l4.1x1b", 2048, 7, 512, 1, 1, 0, 1, 2),
    ("l4.3x3", 512, 7, 512, 3, 1, 1, 1, 2))
CONVNEXT_T = (
    ("stem", 3, 224, 96, 4, 4, 0, 1, 1), ("dw1", 96, 56, 96, 7, 1, 3, 96, 3),
    ("down1", 96, 56, 192, 2, 2, 0, 1, 1), ("dw2", 192, 28, 192, 7, 1, 3, 192, 3),
    ("down2", 192, 28, 384, 2, 2, 0, 1, 1), ("dw3", 384, 14, 384, 7, 1, 3, 384, 9),
    ("down3", 384, 14, 768, 2, 2, 0, 1, 1), ("dw4", 768, 7, 768, 7, 1, 3, 768, 3))
RESNET_ACTS = ((64, 112), (64, 56), (256, 56), (128, 56), (128, 28), (512, 28), (256, 28),
               (256, 14), (1024, 14), (512, 14), (512, 7), (2048, 7))  # (C, H = W) batchnormed
FLAT_OPS = ("rms_norm", "layer_norm", "softmax", "silu", "gelu_tanh", "gelu", "relu", "relu_",
            "silu_mul", "add", "mul")
SDPA_NAMES = {0: "MATH", 1: "FLASH_ATTENTION", 2: "EFFICIENT_ATTENTION", 3: "CUDNN_ATTENTION"}


def split_of(seed, *key):
    return "fit" if random.Random(f"{seed}:{key}").random() < 0.5 else "score"


def log_uniform(rng, lo, hi):
    return math.exp(rng.uniform(math.log(lo), math.log(hi)))


# ------------------------------------------------------------------ plans (no torch)
def attn_shape(phase, hq, hkv, d, b, sq, skv, causal, dtype):
    return dict(phase=phase, hq=hq, hkv=hkv, d=d, b=b, sq=sq, skv=skv, causal=causal, dtype=dtype)


def attn_cost(s, train=False):
    """(FLOPs, minimum bytes) of the forward, or of the backward where train."""
    pairs = s["sq"] * (s["sq"] + 1) // 2 if s["causal"] else s["sq"] * s["skv"]
    flops = 4 * s["b"] * s["hq"] * pairs * s["d"]
    q, kv = s["b"] * s["hq"] * s["sq"] * s["d"], s["b"] * s["hkv"] * s["skv"] * s["d"]
    return (2.5 * flops, ES * 4 * (q + kv)) if train else (flops, ES * 2 * (q + kv))


def attention_plan(seed, n_fwd=150, n_bwd=40):
    """Forward shapes and training shapes: the anchors in both dtypes, then seeded random ones."""
    rng = random.Random(f"{seed}:attention")
    fwd = [attn_shape(*a, dtype=dt) for a in ATTN_ANCHORS for dt in DTYPES]
    bwd = [attn_shape(*a, dtype=dt) for a in BWD_ANCHORS for dt in DTYPES]

    def length(lo, hi):  # half powers of two, a quarter multiples of 128, a quarter anything
        x, u = log_uniform(rng, lo, hi), rng.random()
        return 2 ** round(math.log2(x)) if u < .5 else max(lo, round(x / 128) * 128) if u < .75 \
            else int(x)

    def draw(train):  # forward: 40% prefill causal, 20% prefill full, 40% decode
        hq, hkv, d, _ = rng.choices(HEADS, [h[3] for h in HEADS])[0]
        dtype = "bfloat16" if rng.random() < 0.6 else "float16"
        if train or rng.random() < 0.6:
            causal = rng.random() < (0.75 if train else 0.67)
            s = length(128, 8192 if train else 32768)
            b = min(round(log_uniform(rng, 1, 256)), max(1, (32768 if train else 65536) // s))
            return attn_shape("prefill", hq, hkv, d, b, s, s, causal, dtype)
        b, kv = round(log_uniform(rng, 1, 256)), length(128, 32768)
        return attn_shape("decode", hq, hkv, d, b, 1, kv, False, dtype)

    for shapes, n, train in ((fwd, n_fwd, False), (bwd, n_bwd, True)):
        keys = {tuple(s.values()) for s in shapes}
        while len(shapes) < n:  # memory under ~40 GB with gradients, a call under ~50 ms
            s = draw(train)
            flops, nbytes = attn_cost(s, train)
            if tuple(s.values()) not in keys and nbytes <= (8e9 if train else 16e9) \
                    and flops <= (40e12 if train else 20e12):
                keys.add(tuple(s.values()))
                shapes.append(s)
    return fwd, bwd


def memops_plan(seed):
    """(op, dtype, shape, layout): 25 log-spaced sizes of 4 Ki-512 Mi elements for the row and
    elementwise ops, ResNet-50 shapes for batchnorm and pooling, glue at realistic sizes."""
    sizes = [round(2 ** (12 + 17 * i / 24)) for i in range(25)]
    plan = []
    for op in FLAT_OPS + ("transpose_copy", "rope"):
        for size in sizes:
            for dt in DTYPES:
                rng = random.Random(f"{seed}:mem:{op}:{size}:{dt}")
                if op in FLAT_OPS:  # [rows, hidden]
                    h = rng.choice(HIDDENS)
                    plan.append((op, dt, (max(1, round(size / h)), h), "contiguous"))
                elif op == "transpose_copy":  # [b, s, h, d] -> [b, h, s, d]
                    h, d = rng.choice(((32, 128), (8, 128), (16, 64), (12, 64)))
                    plan.append((op, dt, (1, max(1, round(size / h / d)), h, d), "transpose(1,2)"))
                else:  # (b, s, q heads, kv heads, d) of Llama-3-8B; decode-like up to 256 tokens
                    t = max(1, round(size / (40 * 128)))
                    shape = (t, 1, 32, 8, 128) if t <= 256 else (1, t, 32, 8, 128)
                    plan.append((op, dt, shape, "q,k transposed views"))
    for dt in DTYPES:
        for n in BATCHES:
            for lay in ("nchw", "channels_last"):
                plan += [("batch_norm", dt, (n, c, hw, hw), lay) for c, hw in RESNET_ACTS]
                plan += [("max_pool2d", dt, (n, 64, 112, 112), lay),
                         ("adaptive_avg_pool2d", dt, (n, 2048, 7, 7), lay)]
        for vocab in (32000, 128256):  # tokens 1 .. 32 Ki, hidden 4096
            plan += [("embedding", dt, (2 ** i, vocab, 4096), "gather") for i in range(16)]
        for how in ("index_copy_", "slice_assign"):  # (b, kv heads, max len, d, new tokens)
            plan += [("kv_append", dt, (b, 8, 4096, 128, s), how)
                     for b in (1, 8, 32, 128) for s in (1, 16, 512)]
    random.Random(f"{seed}:memops-order").shuffle(plan)  # a budget cut drops a random subset
    return plan


def conv_plan(seed, n_random=40):
    """Forward specs (ResNet-50 and ConvNeXt-T shuffled, then random ones) and ResNet-50's at
    batch 32 for dgrad/wgrad. A spec: (net, name, C, H, K, R, stride, pad, groups, count, N, dtype)."""
    fwd = [("resnet50",) + c + (n, dt) for c in RESNET50 for n in BATCHES for dt in DTYPES]
    fwd += [("convnext_t",) + c + (n, dt) for c in CONVNEXT_T for n in BATCHES for dt in DTYPES]
    random.Random(f"{seed}:conv-order").shuffle(fwd)
    rng = random.Random(f"{seed}:conv")
    while n_random:
        dw = n_random % 5 == 0  # 8 of the 40 depthwise
        r = rng.choice((3, 7)) if dw else rng.choices((1, 3, 5, 7), (4, 4, 1, 1))[0]
        c = 8 * round(log_uniform(rng, 32, 1024) / 8)
        k = c if dw else 8 * round(log_uniform(rng, 32, 1024) / 8)
        hw = rng.choice((7, 14, 28, 56, 112, rng.randint(7, 112)))
        n, stride, dt = rng.choice(BATCHES), rng.choice((1, 1, 2)), rng.choice(DTYPES)
        flops = 2 * n * (hw // stride) ** 2 * k * (1 if dw else c) * r * r
        if flops <= 3e12 and ES * n * c * hw * hw <= 4e9:
            fwd.append(("random", f"rand{n_random}", c, hw, k, r, stride, r // 2, c if dw else 1,
                        1, n, dt))
            n_random -= 1
    return fwd, [("resnet50",) + c + (32, dt) for dt in ("bfloat16", "float16") for c in RESNET50]


# ------------------------------------------------------------------ timing and output
class Timer:
    """Device time of a call: N calls captured into a CUDA graph, replays timed with events."""

    def __init__(self, replays=7, target_ms=1.0, max_calls=200):
        self.replays, self.target_ms, self.max_calls = replays, target_ms, max_calls

    @staticmethod
    def warm(fn, calls=2):
        """Lazy init, cudnn.benchmark's search, plan caches: on a side stream, before capture."""
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(calls):
                fn()
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()

    def _median_ms(self, run, replays):
        times = []
        for _ in range(replays or self.replays):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            run()
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b))
        return statistics.median(times)

    def graph_ms(self, fn, calls, replays=None):
        """Median ms of one replay of a graph of `calls` calls."""
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(calls):
                fn()
        graph.replay()
        ms = self._median_ms(graph.replay, replays)
        del graph
        return ms

    def eager_ms(self, fn, calls, replays=None):
        torch.cuda.synchronize()
        return self._median_ms(lambda: [fn() for _ in range(calls)], replays)

    def __call__(self, fn, warmed=False):
        """(µs per call, calls per replay, "graph" or "eager")."""
        if not warmed:
            self.warm(fn)
        calls, how = 1, "graph"
        for _ in range(3):
            try:
                ms = self.graph_ms(fn, calls) if how == "graph" else self.eager_ms(fn, calls)
            except Exception:  # capture refused: eager, synchronised
                if how == "eager":
                    raise
                how = "eager"
                with contextlib.suppress(Exception):
                    torch.cuda.synchronize()
                ms = self.eager_ms(fn, calls)
            if ms >= self.target_ms or calls >= self.max_calls:
                break
            grow = math.ceil(calls * 1.2 * self.target_ms / max(ms, 1e-4))
            calls = min(self.max_calls, max(calls + 1, grow))
        return 1e3 * ms / calls, calls, how


class Table:
    """A CSV file, each row flushed as written, with the run's common columns."""

    def __init__(self, path, columns, common):
        self.file, self.common, self.rows = open(path, "w", newline="", encoding="utf-8"), common, 0
        self.writer = csv.DictWriter(self.file, [*columns, *common], extrasaction="ignore")
        self.writer.writeheader()

    def add(self, row, **more):
        self.writer.writerow({**row, **more, **self.common})
        self.file.flush()
        self.rows += 1


def smi():
    """nvidia-smi's clocks, power and temperature (the shorter query where the longer fails)."""
    for query in ("clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu,"
                  "driver_version", "clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu"):
        try:
            r = subprocess.run(["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader"],
                               capture_output=True, text=True, timeout=15)
        except Exception as exc:  # no nvidia-smi
            return {"error": str(exc)[:200]}
        if r.returncode == 0 and r.stdout.strip():
            values = r.stdout.strip().splitlines()[0].split(",")
            return dict(zip(query.split(","), (v.strip() for v in values)))
    return {"error": "nvidia-smi failed"}


def first_line(exc):
    text = str(exc).strip()
    return text.splitlines()[0][:160] if text else type(exc).__name__


class Run:
    """What the sections share: arguments, timer, deadlines, common columns, meta, profiles."""

    def __init__(self, args):
        self.args, self.out, self.timer, self.profiles = args, Path(args.out), Timer(), []
        props = torch.cuda.get_device_properties(0)
        gpu = torch.cuda.get_device_name()
        self.l2 = getattr(props, "L2_cache_size", 0) or (60 if "H200" in gpu else 50) * 2 ** 20
        self.common = dict(gpu=gpu, torch=torch.__version__, cudnn=torch.backends.cudnn.version(),
                           cuda=torch.version.cuda)
        self.meta = dict(self.common, seed=args.seed, budget_s=args.budget_s, l2_bytes=self.l2,
                         sm_count=props.multi_processor_count, memory_bytes=props.total_memory,
                         capability=f"{props.major}.{props.minor}", clock_rate_mhz=None,
                         sections={}, checks={}, errors=[])
        with contextlib.suppress(Exception):  # via pynvml, where installed
            self.meta["clock_rate_mhz"] = torch.cuda.clock_rate()
        total, self.ends = 0.0, {}
        for name, share in SHARES:
            total += share
            self.ends[name] = T0 + total * args.budget_s

    @staticmethod
    def rand(*shape, dtype="bfloat16"):
        return torch.randn(*shape, device="cuda", dtype=getattr(torch, dtype))

    def error(self, where, exc):
        """Records the error in meta.json; returns the note for the row."""
        if len(self.meta["errors"]) < 300:
            self.meta["errors"].append(f"{where}: {type(exc).__name__}: {str(exc)[:300]}")
        if isinstance(exc, torch.cuda.OutOfMemoryError):
            torch.cuda.empty_cache()
        return f"{type(exc).__name__}: {first_line(exc)}"

    @staticmethod
    def tidy():
        if torch.cuda.memory_reserved() > 24e9:
            torch.cuda.empty_cache()

    def save_meta(self):
        text = json.dumps(self.meta, indent=1, default=str)
        (self.out / "meta.json").write_text(text, encoding="utf-8")


# ------------------------------------------------------------------ what is timed
def sdpa_context(backend):
    """A factory of the context forcing `backend` ("default": PyTorch's own choice)."""
    if backend == "default":
        return contextlib.nullcontext
    from torch.nn.attention import SDPBackend, sdpa_kernel
    name = {"cudnn": "CUDNN_ATTENTION", "flash": "FLASH_ATTENTION", "math": "MATH"}[backend]
    return lambda: sdpa_kernel([getattr(SDPBackend, name)])


def sdpa_fns(s, backend, train=False):
    """(forward, forward + backward or None, the backend PyTorch picks, (q, k, v))."""
    q = Run.rand(s["b"], s["hq"], s["sq"], s["d"], dtype=s["dtype"])
    k, v = (Run.rand(s["b"], s["hkv"], s["skv"], s["d"], dtype=s["dtype"]) for _ in range(2))
    kw = dict(is_causal=s["causal"], **({"enable_gqa": True} if s["hq"] != s["hkv"] else {}))
    ctx, picked = sdpa_context(backend), ""
    for t in (q, k, v) if train else ():
        t.requires_grad_(True)
    if backend == "default":
        with contextlib.suppress(Exception):  # private: the index of the backend it dispatches to
            picked = SDPA_NAMES.get(int(torch._fused_sdp_choice(q, k, v, **kw)), "other")

    def fwd():
        with ctx():
            return F.scaled_dot_product_attention(q, k, v, **kw)
    if not train:
        return fwd, None, picked, (q, k, v)
    grad_out = torch.randn_like(q)
    return fwd, lambda: torch.autograd.grad(fwd(), (q, k, v), grad_out), picked, (q, k, v)


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    """Hugging Face transformers' (modeling_llama.py), as eager PyTorch runs it."""
    cos, sin = cos.unsqueeze(unsqueeze_dim), sin.unsqueeze(unsqueeze_dim)
    return (q * cos) + (rotate_half(q) * sin), (k * cos) + (rotate_half(k) * sin)


def memop_fn(op, dt, shape, layout):
    """(callable, minimum DRAM bytes, elements of the main input) of one memops.csv row."""
    r = lambda *s: Run.rand(*s, dtype=dt)  # noqa: E731
    if op in FLAT_OPS:
        (rows, h), n = shape, shape[0] * shape[1]
        x, w, b = r(rows, h), r(h), r(h)
        y = r(rows, h) if op in ("silu_mul", "add", "mul") else None
        fn, elems = dict(
            rms_norm=(lambda: F.rms_norm(x, (h,), w, 1e-5), 2 * n + h),
            layer_norm=(lambda: F.layer_norm(x, (h,), w, b, 1e-5), 2 * n + 2 * h),
            softmax=(lambda: F.softmax(x, dim=-1), 2 * n), silu=(lambda: F.silu(x), 2 * n),
            gelu_tanh=(lambda: F.gelu(x, approximate="tanh"), 2 * n),
            gelu=(lambda: F.gelu(x), 2 * n), relu=(lambda: F.relu(x), 2 * n),
            relu_=(lambda: F.relu_(x), 2 * n), silu_mul=(lambda: F.silu(x) * y, 3 * n),
            add=(lambda: torch.add(x, y), 3 * n), mul=(lambda: torch.mul(x, y), 3 * n))[op]
        return fn, ES * elems, n
    if op == "transpose_copy":
        x = r(*shape)
        return (lambda: x.transpose(1, 2).contiguous()), ES * 2 * x.numel(), x.numel()
    if op == "rope":
        b, s, hq, hkv, d = shape  # q, k as q_proj(x).view(b, s, h, d).transpose(1, 2)
        q, k = r(b, s, hq, d).transpose(1, 2), r(b, s, hkv, d).transpose(1, 2)
        cos, sin, n = r(b, s, d), r(b, s, d), b * s * (hq + hkv) * d
        return (lambda: apply_rotary_pos_emb(q, k, cos, sin)), ES * (2 * n + 2 * b * s * d), n
    if op in ("batch_norm", "max_pool2d", "adaptive_avg_pool2d"):
        x, (n, c, h, w) = r(*shape), shape
        if layout == "channels_last":
            x = x.contiguous(memory_format=torch.channels_last)
        if op == "batch_norm":  # eval; parameters in the activations' dtype, as model.half()
            mean, var, wt, bias = r(c), r(c).abs() + 0.5, r(c), r(c)
            return (lambda: F.batch_norm(x, mean, var, wt, bias, False, 0.1, 1e-5)), \
                ES * 2 * x.numel(), x.numel()
        if op == "max_pool2d":
            out = n * c * ((h - 1) // 2 + 1) * ((w - 1) // 2 + 1)
            return (lambda: F.max_pool2d(x, 3, 2, 1)), ES * (x.numel() + out), x.numel()
        return (lambda: F.adaptive_avg_pool2d(x, 1)), ES * (x.numel() + n * c), x.numel()
    if op == "embedding":
        tokens, vocab, h = shape
        ids, table = torch.randint(0, vocab, (tokens,), device="cuda"), r(vocab, h)
        return (lambda: F.embedding(ids, table)), ES * 2 * tokens * h + 8 * tokens, tokens * h
    b, kvh, max_len, d, s = shape  # kv_append: K and V of s tokens into [b, kvh, max_len, d]
    kc, vc, kn, vn = r(b, kvh, max_len, d), r(b, kvh, max_len, d), r(b, kvh, s, d), r(b, kvh, s, d)
    pos = max_len // 2
    idx = torch.arange(pos, pos + s, device="cuda")

    def append():
        if layout == "index_copy_":  # transformers' StaticCache
            kc.index_copy_(2, idx, kn)
            vc.index_copy_(2, idx, vn)
        else:
            kc[:, :, pos:pos + s] = kn
            vc[:, :, pos:pos + s] = vn
    return append, ES * 4 * kn.numel(), 2 * kn.numel()


MEMOP_PROFILE = {  # op kind: (op, shape, layout) profiled in bf16 for kernels.json
    **{op: (op, (4096, 4096), "contiguous") for op in FLAT_OPS},
    "transpose_copy": ("transpose_copy", (1, 2048, 32, 128), "transpose(1,2)"),
    "rope": ("rope", (1, 2048, 32, 8, 128), "q,k transposed views"),
    **{f"batch_norm {lay}": ("batch_norm", (32, 256, 56, 56), lay) for lay in ("nchw", "channels_last")},
    "max_pool2d": ("max_pool2d", (32, 64, 112, 112), "channels_last"),
    "adaptive_avg_pool2d": ("adaptive_avg_pool2d", (32, 2048, 7, 7), "channels_last"),
    "embedding": ("embedding", (2048, 128256, 4096), "gather"),
    **{f"kv_append {how}": ("kv_append", (32, 8, 4096, 128, 1), how)
       for how in ("index_copy_", "slice_assign")}}


def conv_fn(spec, mode="fwd"):
    """The call of one conv spec, channels_last: the forward, or dgrad or wgrad alone."""
    _, _, c, hw, k, r, stride, pad, groups, _, n, dt = spec
    cl, p = torch.channels_last, (hw + 2 * pad - r) // stride + 1
    x = Run.rand(n, c, hw, hw, dtype=dt).contiguous(memory_format=cl)
    w = Run.rand(k, c // groups, r, r, dtype=dt).contiguous(memory_format=cl)
    if mode == "fwd":
        return lambda: F.conv2d(x, w, None, stride, pad, 1, groups)
    go = Run.rand(n, k, p, p, dtype=dt).contiguous(memory_format=cl)
    mask = [mode == "dgrad", mode == "wgrad", False]
    return lambda: torch.ops.aten.convolution_backward(
        go, x, w, None, [stride] * 2, [pad] * 2, [1, 1], False, [0, 0], groups, mask)


# ------------------------------------------------------------------ sections
def section_checks(run):
    """Max abs error against float32: each SDPA backend, conv2d, rms_norm (into meta.json)."""
    mask = torch.ones(256, 256, device="cuda", dtype=torch.bool).triu(1)
    for dt in DTYPES:
        for d in (64, 128, 256):
            for causal in (False, True):
                s, res = attn_shape("prefill", 8, 2, d, 2, 256, 256, causal, dt), {}
                _, _, res["default picks"], (q, k, v) = sdpa_fns(s, "default")
                kk, vv = (t.float().repeat_interleave(4, 1) for t in (k, v))
                scores = (q.float() @ kk.transpose(-1, -2)) / d ** 0.5
                ref = torch.softmax(scores.masked_fill(mask, -math.inf) if causal else scores, -1) @ vv
                for backend in ("default", "cudnn", "flash", "math"):
                    try:
                        with sdpa_context(backend)():
                            out = F.scaled_dot_product_attention(q, k, v, is_causal=causal,
                                                                 enable_gqa=True)
                        res[backend] = (out.float() - ref).abs().max().item()
                    except Exception as exc:
                        res[backend] = "unsupported: " + first_line(exc)
                run.meta["checks"][f"sdpa {dt} d{d} {'causal' if causal else 'full'}"] = res
    cl = torch.channels_last
    x = Run.rand(8, 64, 56, 56, dtype="float16").contiguous(memory_format=cl)
    w = Run.rand(64, 64, 3, 3, dtype="float16").contiguous(memory_format=cl)
    allow = torch.backends.cudnn.allow_tf32
    try:
        torch.backends.cudnn.allow_tf32 = False
        ref = F.conv2d(x.float(), w.float(), None, 1, 1)
    finally:
        torch.backends.cudnn.allow_tf32 = allow
    run.meta["checks"]["conv2d fp16 8x64x56x56 3x3 channels_last"] = dict(
        max_abs_err=(F.conv2d(x, w, None, 1, 1).float() - ref).abs().max().item(),
        max_abs_ref=ref.abs().max().item())
    x, w = Run.rand(64, 4096), Run.rand(4096)
    ref = x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-5) * w.float()
    got = F.rms_norm(x, (4096,), w, 1e-5).float()
    run.meta["checks"]["rms_norm bf16 64x4096"] = dict(max_abs_err=(got - ref).abs().max().item())
    return len(run.meta["checks"]), "done"


def section_gaps(run):
    """Graphs of N tiny calls: time per call with the graph's launch in it (fit a + b·N)."""
    t = Table(run.out / "gaps.csv", ("kind", "dtype", "calls", "graph_us_per_call",
                                     "graph_replay_us", "eager_us_per_call", "note"), run.common)
    for dt in DTYPES:
        one, x, w = Run.rand(1, dtype=dt), Run.rand(1, 4096, dtype=dt), Run.rand(4096, dtype=dt)
        for kind, fn in (("add_ 1 element", lambda: one.add_(1)),
                         ("rms_norm [1,4096]", lambda: F.rms_norm(x, (4096,), w, 1e-5)),
                         ("silu*mul [1,4096], 2 kernels a call", lambda: F.silu(x) * x)):
            for calls in (1, 10, 100, 1000):
                if time.time() > run.ends["gaps"]:
                    return t.rows, "budget"
                try:
                    run.timer.warm(fn, 1)
                    ms = run.timer.graph_ms(fn, calls, replays=21)
                    eager = run.timer.eager_ms(fn, calls)
                except Exception as exc:
                    t.add(dict(kind=kind, dtype=dt, calls=calls, note=run.error("gaps", exc)))
                    continue
                t.add(dict(kind=kind, dtype=dt, calls=calls, graph_us_per_call=1e3 * ms / calls,
                           graph_replay_us=1e3 * ms, eager_us_per_call=1e3 * eager / calls))
    with contextlib.suppress(Exception):
        t.add(dict(kind="empty graph", calls=0, note="graph launch, no kernel",
                   graph_replay_us=1e3 * run.timer.graph_ms(lambda: None, 1, replays=21)))
    return t.rows, "done"


def section_attention(run):
    t = Table(run.out / "attention.csv", (
        "backend", "picked", "dtype", "batch", "q_heads", "kv_heads", "q_len", "kv_len", "head_dim",
        "causal", "phase", "pass", "train", "time_us", "fwd_bwd_us", "flops", "bytes",
        "l2_resident", "calls", "split", "timing", "note"), run.common)
    for phase, b, sq, skv, causal in (("prefill", 1, 2048, 2048, 1), ("decode", 32, 1, 4096, 0)):
        s = attn_shape(phase, 32, 8, 128, b, sq, skv, bool(causal), "bfloat16")
        for be in ("default", "cudnn", "flash"):
            run.profiles.append((f"sdpa {be} {phase} fwd", s, lambda s=s, be=be: sdpa_fns(s, be)[0]))
            if phase == "prefill":
                run.profiles.append((f"sdpa {be} prefill fwd+bwd", s,
                                     lambda s=s, be=be: sdpa_fns(s, be, True)[1]))
    fwd_plan, bwd_plan = attention_plan(run.args.seed)
    for train, plan in ((False, fwd_plan), (True, bwd_plan)):
        for s in plan:
            if time.time() > run.ends["attention"]:
                return t.rows, "budget"
            flops, nbytes = attn_cost(s)
            base = dict(dtype=s["dtype"], batch=s["b"], q_heads=s["hq"], kv_heads=s["hkv"],
                        q_len=s["sq"], kv_len=s["skv"], head_dim=s["d"], causal=int(s["causal"]),
                        phase=s["phase"], train=int(train), flops=flops, bytes=nbytes,
                        l2_resident=int(nbytes <= run.l2), split=split_of(run.args.seed, "attn", s),
                        **{"pass": "fwd"})
            for backend in ("default", "cudnn", "flash"):
                row = dict(base, backend=backend)
                try:
                    fwd, fwdbwd, row["picked"] = sdpa_fns(s, backend, train)[:3]
                    try:
                        run.timer.warm(fwdbwd or fwd, 1)
                    except RuntimeError as exc:  # a forced backend refuses the shape
                        if backend == "default" or isinstance(exc, torch.cuda.OutOfMemoryError):
                            raise
                        t.add(row, timing="unsupported", note=first_line(exc))
                        continue
                    us, calls, how = run.timer(fwd, warmed=True)
                    t.add(row, time_us=us, calls=calls, timing=how)
                    if train:
                        both, calls, how = run.timer(fwdbwd, warmed=True)
                        fl, by = attn_cost(s, True)
                        t.add(row, **{"pass": "bwd"}, flops=fl, bytes=by, l2_resident=int(by <= run.l2),
                              time_us=both - us, fwd_bwd_us=both, calls=calls, timing=how,
                              note="fwd+bwd minus fwd")
                except Exception as exc:
                    t.add(row, timing="error", note=run.error(f"attention {backend} {s}", exc))
                fwd = fwdbwd = None
                run.tidy()
    return t.rows, "done"


def section_memops(run):
    t = Table(run.out / "memops.csv", ("op", "dtype", "shape", "elements", "bytes", "l2_resident",
                                       "time_us", "calls", "split", "layout", "timing", "note"),
              run.common)
    notes = {"silu_mul": "eager silu then mul, 2 kernels timed together; bytes of one fused kernel",
             "rope": "HF apply_rotary_pos_emb on q and k, whole function; bytes of a fused kernel",
             "kv_append": "K and V", "relu_": "in place"}
    for kind, (op, shape, layout) in MEMOP_PROFILE.items():
        run.profiles.append((kind, shape, lambda p=(op, "bfloat16", shape, layout): memop_fn(*p)[0]))
    for op, dt, shape, layout in memops_plan(run.args.seed):
        if time.time() > run.ends["memops"]:
            return t.rows, "budget"
        row = dict(op=op, dtype=dt, shape="x".join(map(str, shape)), layout=layout,
                   note=notes.get(op, ""), split=split_of(run.args.seed, "mem", op, dt, shape, layout))
        try:
            fn, nbytes, elements = memop_fn(op, dt, shape, layout)
            us, calls, how = run.timer(fn)
            t.add(row, elements=elements, bytes=nbytes, l2_resident=int(nbytes <= run.l2),
                  time_us=us, calls=calls, timing=how)
        except Exception as exc:
            t.add(row, timing="error", note=run.error(f"memops {op} {dt} {shape} {layout}", exc))
        fn = None
        run.tidy()
    return t.rows, "done"


def section_conv(run):
    torch.backends.cudnn.benchmark = True  # its search runs in Timer.warm, before capture
    t = Table(run.out / "conv.csv", (
        "net", "name", "count", "pass", "n", "c", "h", "w", "k", "r", "s", "stride", "pad", "groups",
        "p", "q", "dtype", "time_us", "flops", "bytes", "l2_resident", "calls", "split", "timing",
        "note"), run.common)
    for kind, conv, mode in (
            ("conv 1x1", RESNET50[8], "fwd"), ("conv 3x3", RESNET50[10], "fwd"),
            ("conv 3x3 s2", RESNET50[6], "fwd"), ("conv 7x7 s2 stem", RESNET50[0], "fwd"),
            ("conv depthwise 7x7", CONVNEXT_T[1], "fwd"),
            ("conv 3x3 dgrad", RESNET50[10], "dgrad"), ("conv 3x3 wgrad", RESNET50[10], "wgrad")):
        spec = ("profile",) + conv + (32, "bfloat16")
        run.profiles.append((kind, spec, lambda spec=spec, mode=mode: conv_fn(spec, mode)))
    fwd_plan, bwd_plan = conv_plan(run.args.seed)
    for spec, mode in [(s, "fwd") for s in fwd_plan] + [(s, m) for s in bwd_plan
                                                        for m in ("dgrad", "wgrad")]:
        if time.time() > run.ends["conv"]:
            return t.rows, "budget"
        net, name, c, hw, k, r, stride, pad, groups, count, n, dt = spec
        p = (hw + 2 * pad - r) // stride + 1
        nbytes = ES * (n * c * hw * hw + k * c // groups * r * r + n * k * p * p)  # any pass
        row = dict(net=net, name=name, count=count, n=n, c=c, h=hw, w=hw, k=k, r=r, s=r,
                   stride=stride, pad=pad, groups=groups, p=p, q=p, dtype=dt, bytes=nbytes,
                   flops=2 * n * p * p * k * (c // groups) * r * r,
                   l2_resident=int(nbytes <= run.l2), split=split_of(run.args.seed, "conv", spec),
                   **{"pass": mode})
        try:
            us, calls, how = run.timer(conv_fn(spec, mode))
            t.add(row, time_us=us, calls=calls, timing=how)
        except Exception as exc:
            t.add(row, timing="error", note=run.error(f"conv {mode} {spec}", exc))
        run.tidy()
    return t.rows, "done"


def section_kernels(run):
    """kernels.json: per op kind, the kernels of 3 eager calls and their share of device time."""
    from torch.profiler import ProfilerActivity, profile
    result = {}
    for kind, shape, factory in run.profiles:
        if time.time() > run.ends["kernels"]:
            return len(result), "budget"
        try:
            fn = factory()
            run.timer.warm(fn, 1)
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
                for _ in range(3):
                    fn()
                torch.cuda.synchronize()
            by = {}
            for e in prof.events():
                if str(getattr(e, "device_type", "")).endswith("CUDA"):
                    us, count = by.get(e.name, (0.0, 0))
                    by[e.name] = (us + e.time_range.elapsed_us(), count + 1)
            total = sum(us for us, _ in by.values()) or 1.0
            result[kind] = dict(shape=str(shape), dtype="bfloat16", us_per_call=total / 3, kernels=[
                dict(name=name[:300], share=round(us / total, 4), us_per_call=us / 3,
                     launches_per_call=count / 3)
                for name, (us, count) in sorted(by.items(), key=lambda kv: -kv[1][0])])
        except Exception as exc:
            result[kind] = dict(shape=str(shape), error=run.error(f"kernels {kind}", exc))
        fn = None
        (run.out / "kernels.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
        run.tidy()
    return len(result), "done"


SECTIONS = dict(checks=section_checks, gaps=section_gaps, attention=section_attention,
                memops=section_memops, conv=section_conv, kernels=section_kernels)


def on_sigterm(*_):
    raise KeyboardInterrupt("SIGTERM")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="/tmp/roofline-out")
    ap.add_argument("--budget-s", type=float, default=400.0, help="seconds for the whole run")
    ap.add_argument("--seed", type=int, default=28)
    ap.add_argument("--sections", default=",".join(SECTIONS), help="a comma-separated subset")
    ap.add_argument("--plan", action="store_true", help="print the rows planned, exit")
    args = ap.parse_args()
    if args.plan:
        (fwd, bwd), (cfwd, cbwd) = attention_plan(args.seed), conv_plan(args.seed)
        print(f"attention: {len(fwd)} forward x 3 backends + {len(bwd)} training x 3 x (fwd, bwd)"
              f" = {3 * len(fwd) + 6 * len(bwd)} rows\nmemops: {len(memops_plan(args.seed))} rows\n"
              f"conv: {len(cfwd)} forward + {2 * len(cbwd)} dgrad/wgrad rows\ngaps: 25 rows\n"
              f"kernels.json: {len(MEMOP_PROFILE) + 9 + 7} op kinds")
        return 0
    if torch is None or not torch.cuda.is_available():
        raise SystemExit("needs PyTorch with CUDA and a GPU (--plan does not)")
    warnings.filterwarnings("ignore")  # forced SDPA backends warn before they refuse
    Path(args.out).mkdir(parents=True, exist_ok=True)
    torch.manual_seed(args.seed)
    run = Run(args)
    signal.signal(signal.SIGTERM, on_sigterm)
    try:
        for name in args.sections.split(","):
            start = time.time()
            info = run.meta["sections"][name] = dict(
                start_s=round(start - T0, 1), deadline_s=round(run.ends[name] - T0, 1),
                smi_before=smi())
            try:
                rows, stopped = SECTIONS[name](run)
                info.update(rows=rows, stopped=stopped)
            except Exception as exc:
                info.update(stopped="error", error=run.error(f"section {name}", exc))
            with contextlib.suppress(Exception):
                torch.cuda.synchronize()
                torch.cuda.empty_cache()
            info.update(seconds=round(time.time() - start, 1), smi_after=smi())
            run.save_meta()
            print(f"{name}: {info.get('rows', 0)} rows, {info['seconds']} s ({info['stopped']}); "
                  f"{time.time() - T0:.0f} s since start", flush=True)
    except KeyboardInterrupt as exc:
        run.meta["interrupted"] = str(exc) or "KeyboardInterrupt"
    finally:
        run.meta["total_s"] = round(time.time() - T0, 1)
        run.save_meta()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
