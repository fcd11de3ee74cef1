#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Scores a serving question's TTFT and TPOT against the steps they are made of, timed in
PyTorch: Llama-3-8B (fp16, Hugging Face transformers, random weights) prefill of one 2048-token
prompt and decode steps at the mean cache of a 2048 + 256-token request (2176) at batches 1, 16,
64 and 128, as bench/step_check.py timed them (replayed from CUDA graphs). The measured side puts
the measured steps through the tool's own formulas (TTFT = prefill + decode(B), TPOT = decode(B)
+ B/256 · prefill); the predicted side is the tool's serving curve at those batches
(`compare --prompt-tokens 2048 --output-tokens 256 --glue eager`, the glue as transformers runs
it). This scores the steps at the batches a serving answer picks, not the continuous-batching
formulas themselves (which need a serving engine to time). Nothing here is fitted.

    python3 bench/serving_score.py --tool build-dev/roofline-advise --gpu h100-sxm5 STEPS.json \\
        [--plain SERVING_STEPS.json]

With --plain, the same for bench/serving_step.py's steps (plain PyTorch ops, the GQA cache read
once, as a serving engine runs them) against the tool's default fused glue.
"""
import argparse
import json
import statistics
import subprocess
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from step_score import config, measured  # noqa: E402

PROMPT, OUTPUT = 2048, 256


def tool_curve(tool, gpu, glue):
    """The tool's serving curve for the request, by batch, the glue as `glue` runs it."""
    doc = json.loads(subprocess.run(
        [tool, "compare", config("llama-3-8b.json", torch_dtype="float16"), "--gpus", gpu,
         "--prompt-tokens", str(PROMPT), "--output-tokens", str(OUTPUT), "--glue", glue,
         "--format", "json"], check=True, capture_output=True, text=True).stdout)
    return {p["batch"]: p for p in doc["setups"][0]["curve"]}


def score(title, prefill_ms, decode_ms, curve):
    """Measured steps through the tool's formulas against the tool's curve, batch by batch."""
    print(f"{title}; prefill 1x2048 measured {prefill_ms:.2f} ms; ms, measured / predicted")
    print("| batch | decode step | TTFT | TPOT | TPOT's p10–p90 interval | output tokens/s |")
    print("| ---: | ---: | ---: | ---: | :---: | ---: |")
    errors = []
    for b in (1, 16, 64, 128):
        if b not in decode_ms or b not in curve:
            print(f"| {b} | not timed or not on the curve | | | | |")
            continue
        ttft, tpot = prefill_ms + decode_ms[b], decode_ms[b] + b / OUTPUT * prefill_ms
        tokens = b * OUTPUT / (ttft + (OUTPUT - 1) * tpot) * 1e3
        p = curve[b]
        # The tool's own steps, from its two sums: TTFT − TPOT = prefill · (1 − b/N).
        p_prefill = (p["ttft_ms"] - p["tpot_ms"]) / (1 - b / OUTPUT)
        p_decode = p["ttft_ms"] - p_prefill
        cell = lambda m, q: f"{m:.2f} / {q:.2f} ({q / m - 1:+.1%})"
        errors.append(abs(p["tpot_ms"] / tpot - 1))
        low, high = p["tpot_range_ms"]["low"], p["tpot_range_ms"]["high"]
        inside = "inside" if low <= tpot <= high else "outside"
        print(f"| {b} | {cell(decode_ms[b], p_decode)} | {cell(ttft, p['ttft_ms'])} | "
              f"{cell(tpot, p['tpot_ms'])} | {low:.2f}–{high:.2f}: {inside} | "
              f"{tokens:.0f} / {p['output_tokens_per_s']:.0f} "
              f"({p['output_tokens_per_s'] / tokens - 1:+.1%}) |")
    if errors:
        print(f"\nTPOT at {len(errors)} batches: median |error| {statistics.median(errors):.1%}, "
              f"max {max(errors):.1%}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("steps", help="steps.json of bench/step_check.py (Hugging Face)")
    ap.add_argument("--plain", help="serving_steps.json of bench/serving_step.py")
    ap.add_argument("--tool", default="build-dev/roofline-advise")
    ap.add_argument("--gpu", default="h100-sxm5")
    args = ap.parse_args()
    steps = {s["name"]: s for s in json.load(open(args.steps)) if not s.get("error")}
    prefill = steps.get("Llama-3-8B GQA prefill 1x2048")
    if prefill is None:
        sys.exit(f"{args.steps}: no Llama-3-8B prefill timed")
    decode = {b: measured(steps[f"Llama-3-8B GQA serving decode b{b} kv2176"])[0]
              for b in (1, 16, 64, 128) if f"Llama-3-8B GQA serving decode b{b} kv2176" in steps}
    score(f"# {prefill['gpu']}, Hugging Face transformers: {args.steps}; tool --gpus {args.gpu} "
          f"--glue eager", measured(prefill)[0], decode, tool_curve(args.tool, args.gpu, "eager"))
    if args.plain:
        plain = json.load(open(args.plain))
        timed = {s["name"]: s["graph_ms"] for s in plain["steps"] if "graph_ms" in s}
        if "prefill 1x2048" not in timed:
            sys.exit(f"{args.plain}: no prefill timed")
        decode = {b: timed[f"decode b{b} kv2176"] for b in (1, 16, 64, 128)
                  if f"decode b{b} kv2176" in timed}
        score(f"# {plain['gpu']}, plain PyTorch ops as a serving engine runs them: {args.plain}; "
              f"tool --gpus {args.gpu} (serving's default glue, fused)", timed["prefill 1x2048"],
              decode, tool_curve(args.tool, args.gpu, "fused"))


if __name__ == "__main__":
    main()
