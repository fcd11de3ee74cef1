# SPDX-License-Identifier: Apache-2.0
"""python3 -m roofline capture-demo OUT.json: a small MLP's training step (forward, backward,
SGD with momentum) captured on the meta device, a smoke test needing no GPU and no weights."""
import argparse
import sys

import torch

from .capture import capture
from .trace_file import write_trace


def demo_trace():
    """The built-in MLP's steady-state training step (after one warm-up step)."""
    model = torch.nn.Sequential(torch.nn.Linear(512, 2048), torch.nn.GELU(),
                                torch.nn.Linear(2048, 512))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def step(m, inputs):
        x, y = inputs
        loss = torch.nn.functional.mse_loss(m(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

    inputs = (torch.randn(32, 512), torch.randn(32, 512))
    return capture(model, inputs, step, name="demo MLP training step", warmup_steps=1,
                   optimizer=optimizer)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m roofline", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("capture-demo", help="capture the built-in MLP's training step")
    demo.add_argument("out", help="where to write the op trace (JSON)")
    args = parser.parse_args(argv)
    trace = demo_trace()
    write_trace(trace, args.out)
    print(f"{args.out}: {len(trace['ops'])} aten ops, {len(trace['storages'])} storages "
          f"alive at the start")
    return 0


if __name__ == "__main__":
    sys.exit(main())
