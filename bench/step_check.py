#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Times whole model steps as PyTorch / Hugging Face run them, to score the roofline tool's step
predictions: Llama-2-7B prefill (1x2048) and decode (batch 1 and 32, KV cache 2048), a
Llama-3-8B-like GQA prefill (1x2048), BERT-base (8x512), ResNet-50 (batch 64, NCHW) inference in
fp16, and a GPT-2-small training step (8x1024, pure bf16 parameters, forward+backward, no
optimizer). Random weights built from configs (no network). Per step: (a) the step captured into a
CUDA graph and replayed, median of >=5 replays between CUDA events (graph_ms; null where capture
fails, said in timing_note); (b) eager wall time of synchronised calls, median (eager_ms); (c) a
torch.profiler pass over 3 eager steps: GPU time per step by kernel class and kernels per step.
Every step is in its own try/except; results are flushed after every phase; the run stops
gracefully at --budget-s seconds (SIGALRM).

    python3 bench/step_check.py --out "$OUT"      # on the GPU machine; writes steps.json, steps.txt
"""
import argparse
import gc
import inspect
import json
import os
import signal
import statistics
import tempfile
import time
import traceback

import torch

T0 = time.time()
ARGS = None
RESULTS = []
MODELS = {}
CLASSES = ("gemm", "attention", "conv", "norm", "softmax", "elementwise", "copy", "reduce", "other")
RULES = [  # first match wins; names are lower-cased, "convert" and "normal" removed first
    ("copy", ("memcpy", "memset")),
    ("attention", ("flash", "fmha", "sdpa", "attention", "attn")),
    ("norm", ("layer_norm", "layernorm", "rms_norm", "rmsnorm", "batch_norm", "batchnorm", "bn_fw",
              "bn_bw", "gammabeta", "norm")),
    ("conv", ("conv", "fprop", "dgrad", "wgrad", "winograd")),
    ("gemm", ("gemm", "gemv", "xmma", "cutlass", "cublas", "nvjet", "matmul", "splitk", "s16816",
              "s1688", "wgmma", "hmma")),
    ("softmax", ("softmax",)),
    ("reduce", ("reduce",)),
    ("copy", ("copy", "catarray", "concat", "index", "gather", "scatter", "embedding", "transpose",
              "nchwtonhwc", "nhwctonchw", "permute")),
    ("elementwise", ("elementwise", "relu", "gelu", "silu", "tanh", "add", "mul", "dropout", "fill",
                     "pow", "sqrt", "where", "neg", "sigmoid", "exp", "clamp", "div", "sub")),
]
LLAMA2 = dict(hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
              num_attention_heads=32, num_key_value_heads=32, vocab_size=32000,
              max_position_embeddings=4096)
LLAMA3 = dict(LLAMA2, intermediate_size=14336, num_key_value_heads=8, vocab_size=128256,
              max_position_embeddings=8192, rope_theta=500000.0)

class Budget(Exception):
    pass

def on_alarm(signum, frame):
    raise Budget(f"time budget of {ARGS.budget_s:.0f} s exhausted")

def left():
    return ARGS.budget_s - (time.time() - T0)

def sync():
    torch.cuda.synchronize()

def free():
    gc.collect()
    torch.cuda.empty_cache()

def classify(name):
    n = name.lower().replace("convert", "").replace("normal", "")
    return next((c for c, keys in RULES if any(k in n for k in keys)), "other")

def save():
    os.makedirs(ARGS.out, exist_ok=True)
    tmp = os.path.join(ARGS.out, "steps.json.tmp")
    with open(tmp, "w") as f:
        json.dump(RESULTS, f, indent=1)
    os.replace(tmp, os.path.join(ARGS.out, "steps.json"))
    fmt = lambda v: "-" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v))
    keys = ["name", "batch", "tokens", "dtype", "graph_ms", "eager_ms", "kernels_per_step",
            "kernel_sum_ms"]
    rows = [keys + list(CLASSES)] + [[fmt(r.get(k)) for k in keys] + [
        fmt((r.get("by_class_ms") or {}).get(c)) for c in CLASSES] for r in RESULTS]
    width = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(v.rjust(w) if i else v.ljust(w) for i, (v, w) in enumerate(zip(row, width)))
             for row in rows]
    if RESULTS:
        r = RESULTS[0]
        lines.insert(0, f"# {r.get('gpu')}, torch {r.get('torch')}, cudnn {r.get('cudnn')}, "
                        f"transformers {r.get('transformers')}; ms per step; class columns: "
                        f"profiled GPU ms per eager step")
    lines += [""] + [f"{r['name']}: {r.get('config')}; finite={r.get('finite')}; "
                     f"{r.get('timing_note')}" + (f"; ERROR {r['error']}" if r.get("error") else "")
                     for r in RESULTS]
    with open(os.path.join(ARGS.out, "steps.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")

def finite(out):
    x = getattr(out, "logits", None)
    x = getattr(out, "last_hidden_state", None) if x is None else x
    x = (out if torch.is_tensor(out) else out[0]) if x is None else x
    return bool(torch.isfinite(x).all().item())

def eager_ms(fn, reps):
    times = []
    for _ in range(reps):
        sync()
        t = time.perf_counter()
        fn()
        sync()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)

def graph_ms(fn, reps):
    """(ms per replay, the graph): the median over `reps` samples of 5 replays issued back to back
    between two events (a replay's launch overlaps the one before, as a serving loop's do)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # warm-up on a side stream, as the CUDA graph recipe asks
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    sync()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    g.replay()
    sync()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(reps):
        a.record()
        for _ in range(5):
            g.replay()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) / 5)
    return statistics.median(times), g

def kernel_events(prof):
    """(name, category, microseconds) of every GPU activity: chrome trace, else prof.events()."""
    try:
        fd, path = tempfile.mkstemp(suffix=".json")
        os.close(fd)
        try:
            prof.export_chrome_trace(path)
            with open(path) as f:
                tr = json.load(f)
        finally:
            os.remove(path)
        evs = tr.get("traceEvents", []) if isinstance(tr, dict) else tr
        out = [(e.get("name", ""), str(e.get("cat", "")).lower(), float(e.get("dur", 0)))
               for e in evs if str(e.get("cat", "")).lower() in ("kernel", "gpu_memcpy", "gpu_memset")]
        if out:
            return out
    except Budget:
        raise
    except Exception:
        traceback.print_exc()
    return [(e.name, "gpu_memcpy" if e.name.lower().startswith(("memcpy", "memset")) else "kernel",
             float(e.time_range.elapsed_us())) for e in prof.events()
            if str(getattr(e, "device_type", "")).endswith("CUDA")]

def profile_classes(fn, n=3):
    from torch.profiler import profile, ProfilerActivity
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(n):
            fn()
        sync()
    by, names, calls, nk = dict.fromkeys(CLASSES, 0.0), {}, {}, 0
    for name, cat, us in kernel_events(prof):
        by["copy" if cat != "kernel" else classify(name)] += us
        names[name] = names.get(name, 0.0) + us
        calls[name] = calls.get(name, 0) + 1
        nk += cat == "kernel"
    if nk == 0:
        raise RuntimeError("profiler recorded no kernels")
    ms = lambda us: round(us / n / 1e3, 4)
    top = sorted(names.items(), key=lambda kv: -kv[1])[:40]
    return dict(kernels_per_step=round(nk / n, 1), by_class_ms={k: ms(v) for k, v in by.items()},
                kernel_sum_ms=ms(sum(by.values())),
                # [name, class, ms per step, calls per step]: what each class is made of
                top_kernels=[[k[:160], classify(k), ms(v), round(calls[k] / n, 1)]
                             for k, v in top])

def measure(rec, fn, notes):
    out = fn()
    sync()
    rec["finite"] = finite(out)
    del out
    t = time.perf_counter()
    fn()
    sync()
    est = max(time.perf_counter() - t, 1e-3)
    reps = int(max(5, min(20, 2.0 / est)))
    rec["eager_ms"] = round(eager_ms(fn, reps), 4)
    notes.append(f"eager: median of {reps} synchronised calls, wall clock")
    save()
    if left() > 15:
        try:
            rec.update(profile_classes(fn))
        except Budget:
            raise
        except Exception as e:
            notes.append(f"profiler failed: {type(e).__name__}: {str(e)[:200]}")
        save()
    if left() < 15:
        return notes.append("graph skipped: time budget")
    try:  # graph last: a failed capture may leave state behind
        gr = int(max(3, min(10, 0.3 / est)))
        ms, g = graph_ms(fn, gr)
        rec["graph_ms"] = round(ms, 4)
        notes.append(f"graph: median of {gr} samples of 5 back-to-back replays of one captured "
                     f"step")
        if left() > 10:  # what the replay runs: its kernels by class (CUPTI sees graph kernels)
            try:
                replay = profile_classes(g.replay)
                rec["graph_kernels_per_step"] = replay["kernels_per_step"]
                rec["graph_kernel_sum_ms"] = replay["kernel_sum_ms"]
                rec["graph_by_class_ms"] = replay["by_class_ms"]
            except Budget:
                raise
            except Exception as e:
                notes.append(f"graph profile failed: {type(e).__name__}: {str(e)[:120]}")
        del g
    except Budget:
        raise
    except Exception as e:
        notes.append(f"graph capture failed, eager only: {type(e).__name__}: {str(e)[:200]}")
        try:
            sync()
        except Exception:
            pass

def build(cls_name, cfg_name, dtype, **kw):
    import transformers
    cfg = getattr(transformers, cfg_name)(attn_implementation="sdpa", **kw)
    prev = torch.get_default_dtype()
    torch.set_default_dtype(dtype)  # random init straight on the GPU, in the step's dtype
    try:
        with torch.device("cuda"):
            m = getattr(transformers, cls_name)(cfg)
    finally:
        torch.set_default_dtype(prev)
    return (m if next(m.parameters()).dtype == dtype else m.to(dtype)).cuda()

def keep_kw(model):
    params = inspect.signature(model.forward).parameters
    for k in ("logits_to_keep", "num_logits_to_keep"):
        if k in params:
            return {k: 1}, f"{k}=1 (last-token logits)"
    return {}, "logits for all tokens (no logits_to_keep in this transformers)"

def llama2():
    if "l2" not in MODELS:
        MODELS["l2"] = build("LlamaForCausalLM", "LlamaConfig", torch.float16, **LLAMA2).eval()
    return MODELS["l2"]

def attn_of(m):
    return getattr(m.config, "_attn_implementation", "?")

def llama3(layers):
    key = f"l3-{layers}"
    if key not in MODELS:
        MODELS[key] = build("LlamaForCausalLM", "LlamaConfig", torch.float16,
                            **dict(LLAMA3, num_hidden_layers=layers)).eval()
    return MODELS[key]

def describe(m, label, layers):
    c = m.config
    return (f"{label}: {layers}L h{c.hidden_size} ffn{c.intermediate_size} "
            f"{c.num_attention_heads}h/{c.num_key_value_heads}kv vocab{c.vocab_size} "
            f"attn={attn_of(m)}")

def prefill(which, batch, tokens):
    def f(rec, notes):
        if which == 2:
            m, layers, label = llama2(), 32, "Llama-2-7B"
        else:
            m, layers, label = llama3(32), 32, "Llama-3-8B-like GQA"
        kw, how = keep_kw(m)
        notes.append(how)
        rec.update(config=describe(m, label, layers) + " use_cache=False", dtype="fp16",
                   batch=batch, tokens=tokens)
        ids = torch.randint(0, m.config.vocab_size, (batch, tokens), device="cuda")
        def fn():
            with torch.inference_mode():
                return m(input_ids=ids, use_cache=False, **kw)
        return fn
    return f

def make_static(cfg, batch, length):
    from transformers import StaticCache
    err = None
    for kw in (dict(config=cfg, max_batch_size=batch, max_cache_len=length, device="cuda",
                    dtype=torch.float16), dict(config=cfg, max_cache_len=length),
               dict(config=cfg, batch_size=batch, max_cache_len=length, device="cuda",
                    dtype=torch.float16)):
        try:
            return StaticCache(**kw)
        except TypeError as e:
            err = e
    raise err

def decode(which, batch, kv):
    """One new token per sequence written at position `kv` of a StaticCache of kv + 1 positions:
    attention reads kv + 1 keys (a static cache is read whole, masked), the tool's --kv-len.
    The cache holds zeros, not a prefill's keys: the work is the same, and no prefill of
    batch x kv tokens has to fit beside it."""
    def f(rec, notes):
        m, label = (llama2(), "Llama-2-7B") if which == 2 else (llama3(32), "Llama-3-8B-like GQA")
        tok = torch.randint(0, m.config.vocab_size, (batch, 1), device="cuda")
        rec.update(dtype="fp16", batch=batch, tokens=1, kv_len=kv + 1, config=(
            describe(m, label, 32) + f" decode, 1 new token per sequence into a StaticCache of "
            f"{kv + 1} positions (written at {kv}, zeros before it)"))
        cache = make_static(m.config, batch, kv + 1)
        cp = torch.tensor([kv], device="cuda")
        def fn():
            with torch.inference_mode():
                return m(input_ids=tok, past_key_values=cache, cache_position=cp, use_cache=True)
        fn()
        sync()
        return fn
    return f

def bert(rec, notes):
    m = build("BertModel", "BertConfig", torch.float16).eval()
    c = m.config
    rec.update(config=f"BERT-base BertModel: {c.num_hidden_layers}L h{c.hidden_size} "
                      f"{c.num_attention_heads}h, no attention_mask, attn={attn_of(m)}",
               dtype="fp16", batch=8, tokens=512)
    ids = torch.randint(0, c.vocab_size, (8, 512), device="cuda")
    def fn():
        with torch.inference_mode():
            return m(input_ids=ids)
    return fn

def resnet(layout):
    def f(rec, notes):
        import torchvision
        torch.backends.cudnn.benchmark = True
        fmt = torch.channels_last if layout == "channels_last" else torch.contiguous_format
        m = torchvision.models.resnet50(weights=None).cuda().half().eval().to(memory_format=fmt)
        rec.update(config=f"torchvision {torchvision.__version__} resnet50(weights=None), eval, "
                          f"{layout}, cudnn.benchmark=True", dtype="fp16", batch=64, tokens=None)
        x = torch.randn(64, 3, 224, 224, device="cuda", dtype=torch.float16)
        x = x.contiguous(memory_format=fmt)
        def fn():
            with torch.inference_mode():
                return m(x)
        return fn
    return f

def gpt2_train(rec, notes):
    m = build("GPT2LMHeadModel", "GPT2Config", torch.bfloat16).train()
    c = m.config
    rec.update(config=f"GPT-2 small GPT2LMHeadModel: {c.n_layer}L h{c.n_embd} {c.n_head}h "
                      f"vocab{c.vocab_size}, train() (dropout {c.resid_pdrop}), attn={attn_of(m)}, "
                      f"loss=model(ids, labels=ids).loss; backward; no optimizer; grads set to "
                      f"None before each step (no zeroing kernels)",
               dtype="bf16 (pure bf16 parameters, no autocast)", batch=8, tokens=1024)
    ids = torch.randint(0, c.vocab_size, (8, 1024), device="cuda")
    def fn():
        m.zero_grad(set_to_none=True)
        loss = m(input_ids=ids, labels=ids).loss
        loss.backward()
        return loss.detach()
    return fn

FIELDS = ("name", "config", "dtype", "batch", "tokens", "graph_ms", "eager_ms", "timing_note",
          "kernels_per_step", "by_class_ms", "kernel_sum_ms", "finite", "error")
STEPS = [("Llama-2-7B prefill 1x2048", prefill(2, 1, 2048)),
         ("Llama-2-7B prefill 4x1024", prefill(2, 4, 1024)),
         ("Llama-2-7B decode b1 kv2048", decode(2, 1, 2048)),
         ("Llama-2-7B decode b32 kv2048", decode(2, 32, 2048)),
         ("Llama-3-8B GQA prefill 1x2048", prefill(3, 1, 2048)),
         ("Llama-3-8B GQA decode b8 kv4096", decode(3, 8, 4096)),
         ("BERT-base 8x512", bert),
         ("ResNet-50 b64 NCHW", resnet("nchw")),
         ("ResNet-50 b64 channels_last", resnet("channels_last")),
         ("GPT-2 small train 8x1024", gpt2_train)]
# A serving question's decode steps (bench/serving_score.py): Llama-3-8B at the mean cache of a
# request of 2048 prompt + 256 output tokens (2176), at batches along the tool's curve.
STEPS += [(f"Llama-3-8B GQA serving decode b{b} kv2176", decode(3, b, 2175))
          for b in (1, 16, 64, 128)]

def main():
    global ARGS
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.environ.get("OUT", "step_check_out"))
    ap.add_argument("--budget-s", type=float, default=270.0)
    ap.add_argument("--steps", default="", help="comma-separated substrings of step names to run")
    ARGS = ap.parse_args()
    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(max(1, int(ARGS.budget_s - (time.time() - T0))))
    meta = dict(gpu=torch.cuda.get_device_name(), torch=torch.__version__,
                cudnn=torch.backends.cudnn.version())
    import transformers
    meta["transformers"] = transformers.__version__
    print(meta, flush=True)
    wanted = [s.strip().lower() for s in ARGS.steps.split(",") if s.strip()]
    for name, func in STEPS:
        if wanted and not any(w in name.lower() for w in wanted):
            continue
        rec = dict(dict.fromkeys(FIELDS), name=name, timing_note="", **meta)
        RESULTS.append(rec)
        notes, fn, t = [], None, time.time()
        try:
            if MODELS.get("family") != name.split()[0]:  # keep a model for its next steps
                MODELS.clear()
                MODELS["family"] = name.split()[0]
            free()
            if left() < 20:
                raise Budget(f"skipped: {left():.0f} s of the budget left")
            torch.manual_seed(0)
            torch.cuda.reset_peak_memory_stats()
            fn = func(rec, notes)
            measure(rec, fn, notes)
        except Exception as e:
            rec["error"] = f"{type(e).__name__}: {str(e)[:500]}"
            if not isinstance(e, Budget):
                traceback.print_exc()
        finally:
            rec["timing_note"] = "; ".join(notes)
            rec["wall_s"] = round(time.time() - t, 1)
            fn = None
            save()
            try:
                rec["peak_gib"] = round(torch.cuda.max_memory_allocated() / 2**30, 2)
            except Exception:
                pass
            print(f"{name}: graph {rec['graph_ms']} ms, eager {rec['eager_ms']} ms, kernels "
                  f"{rec['kernels_per_step']}, by class {rec['by_class_ms']}, finite "
                  f"{rec['finite']}, {rec['wall_s']} s"
                  + (f", ERROR {rec['error']}" if rec["error"] else ""), flush=True)
    signal.alarm(0)
    MODELS.clear()
    save()
    with open(os.path.join(ARGS.out, "steps.txt")) as f:
        print(f.read(), flush=True)

if __name__ == "__main__":
    main()
