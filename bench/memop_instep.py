#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""PyTorch's memory-bound kernels timed as they run inside a step, not only back to back on the
same buffers: norms (layer_norm with weight and bias, rms_norm with weight), softmax (dim=-1),
activations (relu, gelu, silu), add, mul, the transposed copy of a [1, s, 32, 128] tensor
(x.transpose(1, 2).contiguous(), sweep_kernels' transpose_copy) and the cast x.to(float32), in
bfloat16 and float16 (a seeded choice per shape) and a few float32 norms. Shapes [rows, width]:
the norms and softmax on a grid of widths 64 .. 131072 × 2^18 .. 2^26 elements, the elementwise
ops at 12 log-spaced sizes of 2^14 .. 2^28 elements, width 4096. Each shape is timed in three
cache states (column `cache`), one row each:

  warm      the same buffers every call (what sweep_kernels.py measures): replay / calls.
  cold      call i reads and writes buffer set i mod `sets` (inputs, weights, output: torch.randn
            data, outputs rotating through the graph's pool), `sets` the fewest whose bytes
            together exceed 3× L2, at most --max-sets (256) and 4 GB; 1 where one set is over
            2× L2 (cold anyway): replay / calls, calls a multiple of `sets`. Where the sets stay
            under 3× L2 (the smallest shapes, at the cap) `note` says so: partly warm.
  producer  each call is preceded in the graph by torch.mul(src, 1.0, out=x), a kernel writing
            the op's main input from a source buffer (a plain x.copy_(src) would be a memcpy node,
            not a kernel), rotated as for cold (the set then holds src too): op = (replay of
            the pairs − replay of the producers alone, same rotation and calls) / calls;
            `producer_us` = the producers' replay / calls. The op reads what its producer left
            in L2, as in a step.

Device time as in sweep_kernels.py: the calls captured into a CUDA graph, the graph replayed 7
times between CUDA events, the median replay; calls raised until a replay takes ≥ 1 ms (at most
512 or `sets`, a multiple of `sets`). Where capture fails the calls run eagerly (`timing`
"eager"). `bytes`: minimum DRAM traffic of one call (inputs read and output written once, weights
included); `l2_resident` = 1 where that fits in L2. `split`: a seeded coin per (op, dtype, rows,
width), the same for its three cache states, so fitting and scoring never share a shape.

    python3 bench/memop_instep.py --out DIR [--budget-s 240] [--seed 28] [--max-sets 256]
    python3 bench/memop_instep.py --plan     # rows planned (no torch, no GPU)
    bash bench/memop_instep.sh               # on the GPU machine, into $OUT

DIR receives memops-instep.csv (rows flushed as measured: a kill loses nothing) and
memops-instep-meta.json (GPU, L2, versions, nvidia-smi clocks and power before and after, seconds,
rows, errors). The shapes run in a seeded shuffled order and the sweep stops once --budget-s
(counted from the script's start) is spent, so a cut drops a random subset of whole shapes.
"""
import time

T0 = time.time()
import argparse  # noqa: E402
import collections  # noqa: E402
import contextlib  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import random  # noqa: E402
import signal  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.dont_write_bytecode = True  # no bench/__pycache__ from the import below
import sweep_kernels as sk  # noqa: E402  (definitions only; torch there is None without torch)

torch, F = sk.torch, sk.F
ROW_OPS = ("layer_norm", "rms_norm", "softmax")
WIDTHS = (64, 128, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 5120, 8192, 16384, 32768,
          65536, 131072)
TOTALS = tuple(2 ** e for e in (18, 20, 22, 24, 26))
FP32_NORMS = (("layer_norm", "rms_norm"), (256, 1024, 4096, 16384), (2 ** 20, 2 ** 24))
ELEMENTWISE = ("relu", "gelu", "silu", "add", "mul", "copy", "cast")
FLAT_WIDTH, HEADS = 4096, 32  # copy: [1, rows, 32, 128] -> [1, 32, rows, 128]
CACHES = ("warm", "cold", "producer")
REPLAYS, TARGET_MS, MAX_CALLS, SET_MEMORY = 7, 1.0, 512, 4e9
COLUMNS = ("op", "dtype", "rows", "width", "elements", "bytes", "l2_resident", "cache", "sets",
           "rotated_bytes", "time_us", "producer_us", "calls", "split", "timing", "note")
NOTES = {"copy": "x.transpose(1,2).contiguous() of [1,rows,32,128]", "cast": "x.to(float32)"}


# ------------------------------------------------------------------ plan (no torch)
def plan(seed):
    """(op, dtype, rows, width) per shape, shuffled; each gives one row per cache state."""
    def half(*key):  # bfloat16 or float16, a seeded coin per shape
        return random.Random(f"{seed}:instep-dtype:{key}").choice(("bfloat16", "float16"))
    shapes = [(op, half(op, w, t), max(1, t // w), w) for op in ROW_OPS for w in WIDTHS
              for t in TOTALS]
    ops, widths, totals = FP32_NORMS
    shapes += [(op, "float32", max(1, t // w), w) for op in ops for w in widths for t in totals]
    for op in ELEMENTWISE:
        for i in range(12):
            total = 2 ** (14 + 14 * i / 11)
            shapes.append((op, half(op, i), max(1, round(total / FLAT_WIDTH)), FLAT_WIDTH))
    random.Random(f"{seed}:instep-order").shuffle(shapes)  # a budget cut drops a random subset
    return shapes


def traffic(op, dt, rows, width):
    """Minimum DRAM bytes of one call, counted as sweep_kernels' memop_fn counts them."""
    n, es = rows * width, 4 if dt == "float32" else 2
    return dict(layer_norm=(2 * n + 2 * width) * es, rms_norm=(2 * n + width) * es, add=3 * n * es,
                mul=3 * n * es, cast=n * es + 4 * n).get(op, 2 * n * es)


# ------------------------------------------------------------------ what is timed
def make(op, dt, rows, width):
    """(call, main input): one set of the op's buffers, fresh torch.randn data."""
    r = lambda *s: torch.randn(*s, device="cuda", dtype=getattr(torch, dt))  # noqa: E731
    if op == "copy":
        x = r(1, rows, HEADS, width // HEADS)
        return (lambda: x.transpose(1, 2).contiguous()), x
    x = r(rows, width)
    if op in ("add", "mul"):
        y, fn = r(rows, width), getattr(torch, op)
        return (lambda: fn(x, y)), x
    if op in ("layer_norm", "rms_norm"):
        w, b = r(width), r(width)
        if op == "layer_norm":
            return (lambda: F.layer_norm(x, (width,), w, b, 1e-5)), x
        return (lambda: F.rms_norm(x, (width,), w, 1e-5)), x
    return dict(relu=lambda: F.relu(x), gelu=lambda: F.gelu(x), silu=lambda: F.silu(x),
                softmax=lambda: F.softmax(x, dim=-1), cast=lambda: x.to(torch.float32))[op], x


def median_ms(run):
    return sk.Timer(replays=REPLAYS)._median_ms(run, None)


def body(ops, prods, with_op=True):
    """call(i): set i mod len(ops): its producer (if any), then its op. The outputs of the last
    sets − 1 calls stay referenced, so the allocator rotates them through `sets` buffers."""
    keep = collections.deque(maxlen=len(ops) - 1)

    def call(i):
        s = i % len(ops)
        if prods:
            prods[s]()
        if with_op:
            keep.append(ops[s]())
    return call


def timed_ms(ops, prods, calls, eager, with_op=True):
    """Median ms of calls 0 .. calls − 1: one graph replay, or eagerly."""
    call = body(ops, prods, with_op)
    if eager:
        torch.cuda.synchronize()
        return median_ms(lambda: [call(i) for i in range(calls)])
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for i in range(calls):
            call(i)
    graph.replay()
    ms = median_ms(graph.replay)
    del graph
    return ms


def measure(ops, prods=None):
    """(µs per op call, µs per producer call or None, calls, "graph" or "eager")."""
    sets, eager, k = len(ops), False, 1
    most = max(1, MAX_CALLS // sets)
    for _ in range(3):
        try:
            ms = timed_ms(ops, prods, k * sets, eager)
        except Exception:  # capture refused: eager, synchronised
            if eager:
                raise
            eager = True
            with contextlib.suppress(Exception):
                torch.cuda.synchronize()
            ms = timed_ms(ops, prods, k * sets, eager)
        if ms >= TARGET_MS or k >= most:
            break
        k = min(most, max(k + 1, math.ceil(k * 1.2 * TARGET_MS / max(ms, 1e-4))))
    calls, how = k * sets, "eager" if eager else "graph"
    if not prods:
        return 1e3 * ms / calls, None, calls, how
    alone = timed_ms(ops, prods, calls, eager, with_op=False)
    return 1e3 * (ms - alone) / calls, 1e3 * alone / calls, calls, how


# ------------------------------------------------------------------ the sweep
class Sweep:
    """What the rows share: arguments, L2 size, common columns, meta, the CSV."""

    def __init__(self, args):
        self.args, self.out = args, Path(args.out)
        props, gpu = torch.cuda.get_device_properties(0), torch.cuda.get_device_name()
        self.l2 = getattr(props, "L2_cache_size", 0) or (60 if "H200" in gpu else 50) * 2 ** 20
        self.common = dict(gpu=gpu, torch=torch.__version__, cuda=torch.version.cuda,
                           date=time.strftime("%Y-%m-%d", time.gmtime()))
        self.meta = dict(self.common, seed=args.seed, budget_s=args.budget_s,
                         max_sets=args.max_sets, l2_bytes=self.l2,
                         sm_count=props.multi_processor_count, memory_bytes=props.total_memory,
                         capability=f"{props.major}.{props.minor}", smi_before=sk.smi(),
                         errors=[])
        self.table = sk.Table(self.out / "memops-instep.csv", COLUMNS, self.common)

    def sets_for(self, set_bytes):
        """The fewest buffer sets whose bytes together exceed 3× L2, within the caps."""
        if set_bytes > 2 * self.l2:
            return 1
        need = 3 * self.l2 // set_bytes + 1
        return max(1, min(need, self.args.max_sets, int(SET_MEMORY // set_bytes)))

    def error(self, where, exc):
        """Records the error in the meta file; returns the note for the row."""
        if len(self.meta["errors"]) < 300:
            self.meta["errors"].append(f"{where}: {type(exc).__name__}: {str(exc)[:300]}")
        return f"{type(exc).__name__}: {sk.first_line(exc)}"

    def shape(self, op, dt, rows, width):
        """The three rows of one shape, one per cache state."""
        nbytes, elements = traffic(op, dt, rows, width), rows * width
        x_bytes = elements * (4 if dt == "float32" else 2)
        base = dict(op=op, dtype=dt, rows=rows, width=width, elements=elements, bytes=nbytes,
                    l2_resident=int(nbytes <= self.l2),
                    split=sk.split_of(self.args.seed, "instep", op, dt, rows, width))
        for cache in CACHES:
            set_bytes = nbytes + (x_bytes if cache == "producer" else 0)
            sets = 1 if cache == "warm" else self.sets_for(set_bytes)
            note = [NOTES.get(op, "")]
            if cache != "warm" and set_bytes <= 2 * self.l2 and sets * set_bytes <= 3 * self.l2:
                note.append(f"rotation {sets * set_bytes / 2 ** 20:.1f} MiB < 3x L2: partly warm")
            row = dict(base, cache=cache, sets=sets, rotated_bytes=sets * set_bytes)
            built = ops = prods = None
            try:
                built = [make(op, dt, rows, width) for _ in range(sets)]
                ops = [fn for fn, _ in built]
                if cache == "producer":
                    prods = [(lambda x=x, src=torch.randn_like(x): torch.mul(src, 1.0, out=x))
                             for _, x in built]
                sk.Timer.warm(lambda: (prods[0]() if prods else None, ops[0]()))
                us, producer_us, calls, how = measure(ops, prods)
                self.table.add(row, time_us=us, producer_us=producer_us, calls=calls,
                               timing=how, note="; ".join(n for n in note if n))
            except Exception as exc:
                self.table.add(row, timing="error",
                               note=self.error(f"{op} {dt} {rows}x{width} {cache}", exc))
            built = ops = prods = None
            with contextlib.suppress(Exception):  # free memory between rows
                torch.cuda.synchronize()
                torch.cuda.empty_cache()

    def save_meta(self):
        text = json.dumps(self.meta, indent=1, default=str)
        (self.out / "memops-instep-meta.json").write_text(text, encoding="utf-8")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="/tmp/roofline-out")
    ap.add_argument("--budget-s", type=float, default=240.0, help="seconds for the whole run")
    ap.add_argument("--seed", type=int, default=28)
    ap.add_argument("--max-sets", type=int, default=256, help="most buffer sets a row rotates")
    ap.add_argument("--plan", action="store_true", help="print the rows planned, exit")
    args = ap.parse_args()
    shapes = plan(args.seed)
    if args.plan:
        per_op = collections.Counter(op for op, *_ in shapes)
        print(f"{len(shapes)} shapes x {len(CACHES)} cache states = {len(CACHES) * len(shapes)} "
              f"rows; shapes per op: " + ", ".join(f"{op} {n}" for op, n in per_op.items()))
        return 0
    if torch is None or not torch.cuda.is_available():
        raise SystemExit("needs PyTorch with CUDA and a GPU (--plan does not)")
    Path(args.out).mkdir(parents=True, exist_ok=True)
    torch.manual_seed(args.seed)
    sweep, done = Sweep(args), 0
    signal.signal(signal.SIGTERM, sk.on_sigterm)
    stopped = "done"
    try:
        for shape in shapes:
            if time.time() - T0 > args.budget_s:
                stopped = "budget"
                break
            sweep.shape(*shape)
            done += 1
            if done % 25 == 0:
                print(f"{done}/{len(shapes)} shapes, {sweep.table.rows} rows, "
                      f"{time.time() - T0:.0f} s", flush=True)
                sweep.save_meta()
    except KeyboardInterrupt as exc:
        stopped = "interrupted: " + (str(exc) or "KeyboardInterrupt")
    finally:
        sweep.table.file.flush()
        sweep.meta.update(stopped=stopped, shapes_planned=len(shapes), shapes_done=done,
                          rows=sweep.table.rows, seconds=round(time.time() - T0, 1),
                          smi_after=sk.smi())
        sweep.save_meta()
        print(f"memops-instep: {sweep.table.rows} rows ({done}/{len(shapes)} shapes), "
              f"{time.time() - T0:.0f} s, {stopped}; {len(sweep.meta['errors'])} errors",
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
