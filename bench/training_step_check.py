#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Issue 42 on one GPU: the training steps the cluster planner prices from one GPU's analysis,
timed in PyTorch, for what the lowering gained (full recomputation's forward pass again, a
mixture of experts' backward). Hugging Face models with random weights from the configs of
bench/data/training/configs, bf16 weights, fused AdamW, one sequence of 2048 tokens:

  llama8        Llama-3-8B's shape at 8 layers, every activation kept
  llama8-ckpt   the same with gradient checkpointing (each decoder layer recomputed)
  mixtral2      Mixtral-8x7B's shape at 2 layers (8 experts, top 2), transformers' own MoE code
  gpt1.7b-mbN   Megatron-LM's GPT 1.7B of its H100 table (24 layers, 2048 wide, 16 heads, a
                vocabulary of 131072) as transformers' GPT-2, 4096 tokens, micro-batch N = 1 or 4

Each: the step (forward, backward, optimizer) and its forward + backward alone, CUDA events, the
median of 10 after 3 warm-ups, and the peak memory of a steady-state step. Writes
OUT/training_steps.json as it goes (a failure loses nothing measured before it).

    python3 bench/training_step_check.py OUT_DIR [NAME,NAME...] [--profile]
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_timing import record_each, timed  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIGS = os.path.join(HERE, "data", "training", "configs")
SEQ = 2048
PROFILE = "--profile" in sys.argv  # also break the forward and backward down by kernel class


def model_of(name):
    import transformers
    config_file = {"llama8": "llama-3-8b-8-layers.json", "llama8-ckpt": "llama-3-8b-8-layers.json",
                   "mixtral2": "mixtral-8x7b-2-layers.json", "gpt1.7b-mb1": "gpt-1.7b.json",
                   "gpt1.7b-mb4": "gpt-1.7b.json"}[name]
    with open(os.path.join(CONFIGS, config_file)) as f:
        fields = json.load(f)
    fields.pop("architectures", None)
    kind = fields.pop("model_type")
    classes = {"llama": (transformers.LlamaConfig, transformers.LlamaForCausalLM),
               "mixtral": (transformers.MixtralConfig, transformers.MixtralForCausalLM),
               "gpt2": (transformers.GPT2Config, transformers.GPT2LMHeadModel)}
    config_class, cls = classes[kind]
    config = config_class(**fields)
    config._attn_implementation = "sdpa"
    torch.manual_seed(0)
    model = cls(config).to(device="cuda", dtype=torch.bfloat16)
    if name.endswith("-ckpt"):
        model.gradient_checkpointing_enable()
    model.train()
    return model, config_file


def measure(name):
    model, config_file = model_of(name)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5, fused=True)
    seq, batch = (4096, int(name[-1])) if name.startswith("gpt") else (SEQ, 1)
    ids = torch.randint(0, model.config.vocab_size, (batch, seq), device="cuda")

    def forward_backward():
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        return loss

    def step():
        forward_backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    step_ms, peak = timed(step)
    fb_ms, _ = timed(lambda: (forward_backward(), opt.zero_grad(set_to_none=True)))
    by_class = None
    if PROFILE:  # the forward and backward's GPU time by kernel class (bench/step_check.py's)
        from step_check import profile_classes
        by_class = profile_classes(lambda: (forward_backward(), opt.zero_grad(set_to_none=True)))
    loss = float(forward_backward())
    opt.zero_grad(set_to_none=True)
    result = {"name": name, "config": config_file, "seq_len": seq, "batch": batch,
              "step_ms": step_ms, "forward_backward_ms": fb_ms, "peak_bytes": peak,
              "kernel_classes": by_class,
              "parameters": sum(p.numel() for p in model.parameters()),
              "loss_finite": bool(torch.isfinite(torch.tensor(loss)))}
    return result  # its model and optimizer freed as it returns (main empties the cache)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    import transformers
    doc = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
           "transformers": transformers.__version__, "results": []}
    path = os.path.join(out, "training_steps.json")
    args = [a for a in sys.argv[2:] if a != "--profile"]
    names = args[0].split(",") if args else [
        "llama8", "llama8-ckpt", "mixtral2", "gpt1.7b-mb1", "gpt1.7b-mb4"]
    ok = record_each(path, doc, [(name, lambda name=name: measure(name)) for name in names])
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
