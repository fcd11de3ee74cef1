#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Issue 42 on one GPU: a Megatron-like training step of Megatron-LM's GPT 1.7B (the smallest row
of its H100 table: 24 layers, 2048 wide, 16 heads, a vocabulary of 131072, 4096 tokens), written
as Megatron writes the model rather than as transformers' GPT-2: fused QKV with biases, learned
positions, pre-LayerNorm, FlashAttention (SDPA), GELU, no dropout, the LM head tied to the
embedding, the loss in fp32. Timed eager and under torch.compile (Inductor fuses the bias-GELU,
the norms and the residual adds as Megatron's and Transformer Engine's kernels do), bf16 weights,
micro-batches of 1 and 4; forward + backward only (the optimizer is priced apart).

The cluster score's small models are 1.22-1.35x optimistic; transformers' GPT-2 on one GPU was
too (0.72), but most of that was its glue. This asks what a fused one-GPU step takes.

    python3 bench/megatron_step_check.py OUT_DIR

Writes OUT_DIR/megatron_steps.json as it goes (a failure loses nothing measured before it).
"""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_timing import record_each, timed  # noqa: E402

HIDDEN, LAYERS, HEADS, VOCAB, SEQ = 2048, 24, 16, 131072, 4096


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1 = torch.nn.LayerNorm(HIDDEN)
        self.qkv = torch.nn.Linear(HIDDEN, 3 * HIDDEN)
        self.proj = torch.nn.Linear(HIDDEN, HIDDEN)
        self.norm2 = torch.nn.LayerNorm(HIDDEN)
        self.fc1 = torch.nn.Linear(HIDDEN, 4 * HIDDEN)
        self.fc2 = torch.nn.Linear(4 * HIDDEN, HIDDEN)

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, s, 3, HEADS, HIDDEN // HEADS).unbind(2)
        a = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2),
                                           v.transpose(1, 2), is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, s, HIDDEN))
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


class GPT(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.tokens = torch.nn.Embedding(VOCAB, HIDDEN)
        self.positions = torch.nn.Embedding(SEQ, HIDDEN)
        self.blocks = torch.nn.ModuleList(Block() for _ in range(LAYERS))
        self.norm = torch.nn.LayerNorm(HIDDEN)

    def forward(self, ids):
        x = self.tokens(ids) + self.positions.weight[: ids.shape[1]]
        for block in self.blocks:
            x = block(x)
        logits = F.linear(self.norm(x), self.tokens.weight)  # tied, as Megatron's GPT
        return F.cross_entropy(logits.float().view(-1, VOCAB), ids.view(-1))


def measure(batch, compiled):
    torch.manual_seed(0)
    model = GPT().to(device="cuda", dtype=torch.bfloat16).train()
    run = torch.compile(model) if compiled else model
    ids = torch.randint(0, VOCAB, (batch, SEQ), device="cuda")

    def forward_backward():
        loss = run(ids)
        loss.backward()
        for p in model.parameters():
            p.grad = None
        return loss

    ms, peak = timed(forward_backward)
    loss = float(forward_backward().detach())
    return {"batch": batch, "seq_len": SEQ, "compiled": compiled, "forward_backward_ms": ms,
            "peak_bytes": peak, "parameters": sum(p.numel() for p in model.parameters()),
            "loss_finite": bool(torch.isfinite(torch.tensor(loss)))}


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    doc = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "results": []}
    cases = [(f"mb{batch}{'-compiled' if compiled else ''}",
              lambda batch=batch, compiled=compiled: measure(batch, compiled))
             for compiled in (False, True) for batch in (1, 4)]
    ok = record_each(os.path.join(out, "megatron_steps.json"), doc, cases)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
