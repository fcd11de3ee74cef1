#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Measures the GPU memory of a training step as PyTorch runs it, to hold the tool's training
memory (weights, gradients, optimizer state, activations kept for backward) against it.

TinyLlama-1.1B's architecture (Hugging Face LlamaForCausalLM, random weights, attn=sdpa) trained
with AdamW (torch.optim.AdamW, fused) in mixed precision as PyTorch users run it: fp32 parameters,
fp32 gradients and two fp32 moments (16 bytes a parameter, ZeRO's count), the step under bf16
autocast; the loss over every position. At sequence length 2048 and micro-batches 1, 2 and 4,
with and without gradient checkpointing (model.gradient_checkpointing_enable(), the tool's
--recompute full). Per case, after one warm-up step: the bytes allocated between steps
(parameters and optimizer state), and torch.cuda.max_memory_allocated over the next step. Every
case in its own try/except; results written after each to $OUT/training_memory.json.

    python3 bench/training_memory.py --out "$OUT"
"""
import argparse
import json
import os

import torch

TINYLLAMA = dict(hidden_size=2048, intermediate_size=5632, num_hidden_layers=22,
                 num_attention_heads=32, num_key_value_heads=4, vocab_size=32000,
                 max_position_embeddings=2048, rms_norm_eps=1e-5, tie_word_embeddings=False)
SEQ = 2048


def case(batch, checkpointing):
    import transformers
    config = transformers.LlamaConfig(attn_implementation="sdpa", use_cache=False, **TINYLLAMA)
    with torch.device("cuda"):
        model = transformers.LlamaForCausalLM(config)
    model.train()
    if checkpointing:
        model.gradient_checkpointing_enable()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5, fused=True)
    ids = torch.randint(0, config.vocab_size, (batch, SEQ), device="cuda")

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss.detach()

    loss = step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    between = torch.cuda.memory_allocated()
    loss = step()
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated()
    parameters = sum(p.numel() for p in model.parameters())
    state = sum(t.numel() * t.element_size() for s in optimizer.state.values()
                for t in s.values() if torch.is_tensor(t))
    result = dict(batch=batch, seq_len=SEQ, checkpointing=checkpointing, parameters=parameters,
                  parameter_bytes=sum(p.numel() * p.element_size() for p in model.parameters()),
                  optimizer_state_bytes=state, allocated_between_steps=between, peak=peak,
                  finite=bool(torch.isfinite(loss)))
    del model, optimizer, ids
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.environ.get("OUT", "training_memory_out"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    import transformers
    results = dict(gpu=torch.cuda.get_device_name(), torch=torch.__version__,
                   transformers=transformers.__version__, model="TinyLlama-1.1B architecture",
                   config=TINYLLAMA, cases=[])
    for checkpointing in (False, True):
        for batch in (1, 2, 4):
            try:
                r = case(batch, checkpointing)
            except Exception as e:  # one case's failure (out of memory) loses none of the others
                r = dict(batch=batch, checkpointing=checkpointing,
                         error=f"{type(e).__name__}: {str(e)[:300]}")
            torch.cuda.empty_cache()
            results["cases"].append(r)
            print(r, flush=True)
            with open(os.path.join(args.out, "training_memory.json"), "w") as f:
                json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
