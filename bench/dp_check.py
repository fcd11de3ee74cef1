#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Issue 42: data parallelism's exposed cost, measured with PyTorch on every GPU of the host
(torchrun, one process a GPU). Llama-3-8B's shape at 8 layers (bench/data/training/configs,
transformers with random bf16 weights), one sequence of 2048 tokens a GPU, forward + backward
(no optimizer step), three ways:

  alone  each GPU its own model, no communication: the one-GPU step
  ddp    DistributedDataParallel (ZeRO-0): the gradients all-reduced in 25 MB buckets behind the
         backward pass
  fsdp   FSDP2 (fully_shard on each decoder layer and the whole model; ZeRO-3): the weights
         gathered before each layer's forward and backward, the gradients reduce-scattered

Each: 3 warm-ups, the median of 10 steps between CUDA events, every rank in lockstep before each
step (a tiny all-reduce); the slowest rank's median. First a check: after one DDP step every
rank's gradient of a layer is the same (the all-reduce happened). Rank 0 writes OUT/dp.json.

    torchrun --standalone --nproc_per_node 2 bench/dp_check.py OUT_DIR
"""
import json
import os
import statistics
import sys
import traceback

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIG = os.path.join(HERE, "data", "training", "configs", "llama-3-8b-8-layers.json")
SEQ = 2048


def model():
    import transformers
    with open(CONFIG) as f:
        fields = json.load(f)
    fields.pop("architectures", None)
    fields.pop("model_type", None)
    config = transformers.LlamaConfig(**fields)
    config._attn_implementation = "sdpa"
    torch.manual_seed(0)  # every rank the same weights, as DDP starts them
    return transformers.LlamaForCausalLM(config).to(device="cuda", dtype=torch.bfloat16).train()


def lockstep():
    torch.cuda.synchronize()
    dist.all_reduce(torch.zeros(1, device="cuda"))
    torch.cuda.synchronize()


def timed(net, ids, warmup=3, steps=10):
    def step():
        net(input_ids=ids, labels=ids).loss.backward()
    times = []
    for i in range(warmup + steps):
        for p in net.parameters():
            p.grad = None
        lockstep()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        step()
        b.record()
        b.synchronize()
        if i >= warmup:
            times.append(a.elapsed_time(b) / 1e3)
    mine = statistics.median(times)
    every = [None] * dist.get_world_size()
    dist.all_gather_object(every, mine)
    return {"step_s_max_over_ranks": max(every), "step_s_per_rank": every}


def ddp_check(net, ids):
    """One DDP step's gradient of the first layer's q_proj, equal on every rank."""
    for p in net.parameters():
        p.grad = None
    torch.manual_seed(1 + dist.get_rank())  # each rank its own batch
    own = torch.randint(0, 1000, ids.shape, device="cuda")
    net(input_ids=own, labels=own).loss.backward()
    grad = net.module.model.layers[0].self_attn.q_proj.weight.grad.float()
    ref = grad.clone()
    dist.broadcast(ref, 0)
    return float((grad - ref).abs().max() / ref.abs().max().clamp_min(1e-30))


def main():
    out = sys.argv[1]
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    doc = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
           "nccl": ".".join(map(str, torch.cuda.nccl.version())), "world": world,
           "config": os.path.relpath(CONFIG, os.path.dirname(HERE)), "seq_len": SEQ,
           "results": []}
    ids = torch.randint(0, 1000, (1, SEQ), device="cuda")

    def record(name, measure):
        try:
            result = dict(name=name, **measure())
        except Exception as e:  # noqa: BLE001 — recorded, the others still run
            result = {"name": name, "error": repr(e)[:500], "trace": traceback.format_exc()[-1500:]}
        torch.cuda.empty_cache()
        if rank == 0:
            doc["results"].append(result)
            os.makedirs(out, exist_ok=True)
            with open(os.path.join(out, "dp.json.tmp"), "w") as f:
                json.dump(doc, f, indent=1)
            os.replace(os.path.join(out, "dp.json.tmp"), os.path.join(out, "dp.json"))
            print(json.dumps(result)[:400], flush=True)

    def alone():
        return timed(model(), ids)

    def ddp():
        from torch.nn.parallel import DistributedDataParallel
        net = DistributedDataParallel(model())
        spread = ddp_check(net, ids)
        return dict(timed(net, ids), grad_max_rel_spread=spread, check_pass=spread < 1e-6)

    def fsdp():
        from torch.distributed.fsdp import fully_shard
        net = model()
        for layer in net.model.layers:
            fully_shard(layer)
        fully_shard(net)
        return timed(net, ids)

    record("alone", alone)
    record("ddp", ddp)
    record("fsdp", fsdp)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
