#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Scores the tool's datasheet prediction of each whole step that bench/step_check.py timed:
the step's device time (see measured()), and by class: GEMMs and convolutions, fused
attention, and everything else. Nothing here is fitted: the tool runs as committed.

    python3 bench/step_score.py --tool build-dev/roofline-advise --gpu h100-sxm5 \\
        bench/data/steps/h100-steps-run3.json [--glue eager]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

CONFIGS = "examples/configs"


def config(name, **changes):
    """A copy of an example config with `changes` (the step's dtype), in a temporary file."""
    with open(os.path.join(CONFIGS, name)) as f:
        doc = json.load(f)
    doc.update(changes)
    fd, path = tempfile.mkstemp(suffix=".json", prefix=name.split(".")[0] + "-")
    with os.fdopen(fd, "w") as f:
        json.dump(doc, f)
    return path


def gpt2_training(tool, glue):
    """GPT-2 small's training step as bench/step_check.py runs it: the config's network in
    training, bf16, batch 8 x 1024, and the loss its logits go through (log-softmax over the
    vocabulary in fp32, forward and backward) as a softmax layer."""
    fd, path = tempfile.mkstemp(suffix=".yaml", prefix="gpt2-train-")
    os.close(fd)
    subprocess.run([tool, config("gpt2.json"), "--gpu", "h100", "--batch", "8", "--seq-len",
                    "1024", "--emit-yaml", path, "--format", "json"] +
                   (["--glue", glue] if glue else []), check=True, capture_output=True)
    text = open(path).read()
    text = text.replace("mode: inference", "mode: training").replace("precision: fp16",
                                                                     "precision: bf16")
    text = text.replace("phase: prefill\n", "").replace("kv_len: 1024\n", "")
    text += "  - {name: loss, type: softmax, features: 50257, precision: fp32}\n"
    with open(path, "w") as f:
        f.write(text)
    return [path]


def command(step, tool, glue):
    """The tool's arguments for a step of bench/step_check.py (None: not predicted)."""
    name = step["name"]
    b = str(step["batch"])
    if name.startswith("Llama"):
        cfg = (config("llama-2-7b.json") if "Llama-2" in name
               else config("llama-3-8b.json", torch_dtype="float16"))
        if "decode" in name:
            if "kv_len" not in step:  # runs 1 and 2 did not record the cache each step read
                return None
            return [cfg, "--phase", "decode", "--batch", b, "--kv-len", str(step["kv_len"])]
        return [cfg, "--batch", b, "--seq-len", str(step["tokens"]), "--last-logits"]
    if name.startswith("BERT"):
        return [config("bert-base-uncased.json"), "--batch", b, "--seq-len",
                str(step["tokens"])]
    if name.startswith("ResNet"):
        return ["examples/resnet50.yaml", "--batch", b]
    if name.startswith("GPT-2"):
        return gpt2_training(tool, glue)  # its batch, length and glue are in the YAML
    return None


def predict(step, tool, gpu, glue, clock=None):
    args = command(step, tool, glue)
    if args is None:
        return None
    if glue and args[0].endswith(".json"):
        args += ["--glue", glue]
    if clock:
        args += ["--clock", clock]
    out = subprocess.run([tool, *args, "--gpu", gpu, "--format", "json"], check=True,
                         capture_output=True, text=True).stdout
    doc = json.loads(out)
    classes = {"gemm": 0.0, "attention": 0.0, "other": 0.0}
    # step_check.py's training step runs no optimizer: the optimizer's step the tool ends a
    # training step with is left out, as the loss is put in (gpt2_training).
    optimizer = sum(op["device_time_us"] * op["count"] for op in doc["ops"]
                    if op["pass"] == "optimizer")
    for op in doc["ops"]:
        if op["pass"] == "optimizer":
            continue
        us = op["device_time_us"] * op["count"]
        key = ("gemm" if op.get("m") else "attention" if op["kind"] == "attention" else "other")
        classes[key] += us / 1e3
    return (doc["totals"]["device_time_us"] - optimizer) / 1e3, classes


def measured(step):
    """(the step's device time, how it was measured, ms by class) of a step_check.py record.
    The graph-replayed time where the capture runs the step's own kernels; where it runs others
    (capturing, PyTorch leaves cuDNN's attention for another backend: prefill, BERT, training),
    the eager profile's kernel sum plus the gaps the replay showed between its kernels."""
    by = step["by_class_ms"]
    gemm = by["gemm"] + by["conv"]
    classes = {"gemm": gemm, "attention": by["attention"],
               "other": step["kernel_sum_ms"] - gemm - by["attention"]}
    graph = step.get("graph_by_class_ms")
    if step.get("graph_ms") is None or graph is None or not step.get("graph_kernels_per_step"):
        return step["kernel_sum_ms"], "kernel sum (no graph)", classes
    if abs(graph["attention"] - by["attention"]) <= 0.05 * max(by["attention"], 0.01):
        return step["graph_ms"], "graph", classes
    gap = (step["graph_ms"] - step["graph_kernel_sum_ms"]) / step["graph_kernels_per_step"]
    return (step["kernel_sum_ms"] + max(gap, 0) * step["kernels_per_step"],
            "kernels + gaps", classes)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("steps", help="steps.json of bench/step_check.py")
    ap.add_argument("--tool", default="build-dev/roofline-advise")
    ap.add_argument("--gpu", default="h100-sxm5")
    ap.add_argument("--glue", default="eager",
                    help="eager (default: PyTorch eager is what step_check.py timed) or fused")
    ap.add_argument("--clock", default=None,
                    help="the tool's --clock (sustained, its default, or burst)")
    args = ap.parse_args()
    steps, seen = [], set()
    for s in json.load(open(args.steps)):  # a step timed twice (run 3 and 4): its first timing
        if not s.get("error") and s["name"] not in seen:
            seen.add(s["name"])
            steps.append(s)
    if not steps:
        sys.exit(f"{args.steps}: no step without an error to score")
    print(f"# {steps[0]['gpu']}: {args.steps}; tool --gpu {args.gpu}"
          f"{' --glue ' + args.glue if args.glue else ''}"
          f"{' --clock ' + args.clock if args.clock else ''}; ms per step, measured / predicted")
    print("| step | measured as | step | GEMM + conv | attention | everything else |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    errors = []
    for s in steps:
        p = predict(s, args.tool, args.gpu, args.glue, args.clock)
        if p is None:
            continue
        total, how, cls = measured(s)
        err = p[0] / total - 1
        errors.append(abs(err))
        cell = lambda m, q: (f"{m:.2f} / {q:.2f} ({q / m - 1:+.0%})" if m > 0.005 else "—")
        print(f"| {s['name']} | {how} | {total:.2f} / {p[0]:.2f} ({err:+.1%}) | "
              f"{cell(cls['gemm'], p[1]['gemm'])} | {cell(cls['attention'], p[1]['attention'])} | "
              f"{cell(cls['other'], p[1]['other'])} |")
    print(f"\nsteps {len(errors)}: median |error| {statistics.median(errors):.1%}, "
          f"max {max(errors):.1%}")


if __name__ == "__main__":
    sys.exit(main())
