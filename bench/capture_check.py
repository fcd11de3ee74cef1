#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Issue 40's benchmark: PyTorch programs captured (python/roofline: every aten op they dispatch)
and priced by the tool, against the same programs timed on the GPU. Each program is run eagerly
as its users run it: its step time (CUDA events, the median of 10 steps after 3 warm-up steps)
and its peak memory (torch.cuda.max_memory_allocated over one steady-state step); then captured
on the GPU (device="cuda", after one warm-up step for training: the optimizer's state exists)
into OUT/traces/NAME.json, and the tool (`roofline-advise TRACE --gpu GPU --format json`, the
binary carried in $BIN) predicts its step time and memory into OUT/predicted/NAME.json.

    python3 bench/capture_check.py --out DIR --tool h200/roofline-advise --gpu h200 [--only a,b]

Programs (random weights; shapes chosen to take tens of ms):
  llama-train   Hugging Face LlamaForCausalLM, Llama-3.2-1B's config at 8 layers, bf16
                autocast, fused AdamW, 2 x 2048 tokens
  t5-infer      Hugging Face T5ForConditionalGeneration (t5-base config), fp16, encoder 8 x 512,
                decoder 8 x 128 (outside the tool's config families)
  resnet50      torchvision resnet50, fp16, channels_last, batch 64, inference
  vit-b16       torchvision vit_b_16, fp16, batch 128, inference
  effnet-train  timm efficientnet_b0, bf16 autocast, SGD with momentum, batch 64, training
  gpt2-train    Hugging Face GPT2LMHeadModel (124M), fp32 weights, bf16 autocast, AdamW
                (foreach), 8 x 1024 tokens
"""
import argparse
import json
import os
import subprocess
import sys
import time
import traceback

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import roofline  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_timing import timed  # noqa: E402


def language_model_step(opt):
    """A causal LM's training step under bf16 autocast: the loss on its own tokens, backward,
    the optimizer's step, gradients dropped."""
    def step(m, inputs):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = m(input_ids=inputs[0], labels=inputs[0]).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    return step


def llama_train():
    from transformers import LlamaConfig, LlamaForCausalLM
    config = LlamaConfig(vocab_size=128256, hidden_size=2048, intermediate_size=8192,
                         num_hidden_layers=8, num_attention_heads=32, num_key_value_heads=8,
                         max_position_embeddings=4096, rope_theta=500000.0,
                         tie_word_embeddings=True, attn_implementation="sdpa")
    model = LlamaForCausalLM(config).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    ids = torch.randint(0, config.vocab_size, (2, 2048), device="cuda")
    return model, (ids,), language_model_step(opt), opt


def t5_infer():
    from transformers import T5Config, T5ForConditionalGeneration
    config = T5Config(d_model=768, d_ff=3072, num_layers=12, num_heads=12, vocab_size=32128)
    model = T5ForConditionalGeneration(config).cuda().half().eval()
    enc = torch.randint(0, 32128, (8, 512), device="cuda")
    dec = torch.randint(0, 32128, (8, 128), device="cuda")

    def forward(m, inputs):
        with torch.no_grad():
            m(input_ids=inputs[0], decoder_input_ids=inputs[1])
    return model, (enc, dec), forward, None


def resnet50():
    import torchvision
    model = torchvision.models.resnet50().cuda().half().eval().to(memory_format=torch.channels_last)
    x = torch.randn(64, 3, 224, 224, device="cuda", dtype=torch.half).to(
        memory_format=torch.channels_last)

    def forward(m, inputs):
        with torch.no_grad():
            m(inputs[0])
    return model, (x,), forward, None


def vit_b16():
    import torchvision
    model = torchvision.models.vit_b_16().cuda().half().eval()
    x = torch.randn(128, 3, 224, 224, device="cuda", dtype=torch.half)

    def forward(m, inputs):
        with torch.no_grad():
            m(inputs[0])
    return model, (x,), forward, None


def effnet_train():
    import timm
    model = timm.create_model("efficientnet_b0").cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(64, 3, 224, 224, device="cuda").to(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (64,), device="cuda")

    def step(m, inputs):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(m(inputs[0]), inputs[1])
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    return model, (x, y), step, opt


def gpt2_train():
    from transformers import GPT2Config, GPT2LMHeadModel
    model = GPT2LMHeadModel(GPT2Config(n_positions=1024, attn_implementation="sdpa")).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True)
    ids = torch.randint(0, 50257, (8, 1024), device="cuda")
    return model, (ids,), language_model_step(opt), opt


PROGRAMS = {"llama-train": llama_train, "t5-infer": t5_infer, "resnet50": resnet50,
            "vit-b16": vit_b16, "effnet-train": effnet_train, "gpt2-train": gpt2_train}


def run_one(name, args, results):
    model, inputs, step, opt = PROGRAMS[name]()
    ms, peak = timed(lambda: step(model, inputs))
    row = dict(name=name, measured_ms=ms, measured_peak_bytes=peak,
               gpu=torch.cuda.get_device_name(), torch=torch.__version__)
    t0 = time.time()
    trace = roofline.capture(model, inputs, step=step, name=name, device="cuda",
                             warmup_steps=1 if opt is not None else 0, optimizer=opt)
    row["capture_s"] = time.time() - t0
    path = os.path.join(args.out, "traces", f"{name}.json")
    roofline.write_trace(trace, path)
    row["trace_ops"] = len(trace["ops"])
    out = subprocess.run([args.tool, path, "--gpu", args.gpu, "--format", "json"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        row["tool_error"] = out.stderr.strip()[-2000:]
    else:
        doc = json.loads(out.stdout)
        with open(os.path.join(args.out, "predicted", f"{name}.json"), "w") as f:
            f.write(out.stdout)
        totals, trace_info = doc["totals"], doc["network"]["trace"]
        row.update(predicted_ms=totals["predicted_time_us"] / 1e3,
                   predicted_device_ms=totals["device_time_us"] / 1e3,
                   predicted_peak_bytes=doc["memory"]["total_bytes"],
                   priced_ops=trace_info["priced_ops"], free_ops=trace_info["free_ops"],
                   unpriced=trace_info["unpriced"][:12])
        row["time_error"] = row["predicted_ms"] / ms - 1
        row["memory_error"] = row["predicted_peak_bytes"] / peak - 1
    results.append(row)
    print(json.dumps({k: v for k, v in row.items() if k != "unpriced"}), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="/tmp/roofline-out")
    ap.add_argument("--tool", required=True)
    ap.add_argument("--gpu", required=True)
    ap.add_argument("--only", default=",".join(PROGRAMS))
    args = ap.parse_args()
    for sub in ("traces", "predicted"):
        os.makedirs(os.path.join(args.out, sub), exist_ok=True)
    results = []
    for name in args.only.split(","):
        try:
            run_one(name, args, results)
        except Exception as e:  # one program's failure costs that program only
            results.append(dict(name=name, error=f"{type(e).__name__}: {e}",
                                traceback=traceback.format_exc()[-3000:]))
            print(f"{name}: {type(e).__name__}: {e}", flush=True)
        torch.cuda.empty_cache()  # the program's tensors went with run_one's frame
        with open(os.path.join(args.out, "capture-results.json"), "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
