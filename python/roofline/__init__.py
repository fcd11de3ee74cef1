# SPDX-License-Identifier: Apache-2.0
"""roofline: what a PyTorch program would cost on a GPU, from the aten ops it dispatches.

`capture` records a program's ops, on the meta device by default (no weights, no GPU), into an
op trace (docs/op-trace-format.md) that `roofline-advise TRACE --gpu h100` prices:

    import torch, roofline
    model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.GELU(),
                                torch.nn.Linear(4096, 1024)).to(torch.bfloat16)
    trace = roofline.capture(model, (torch.randn(64, 1024, dtype=torch.bfloat16),), name="MLP")
    roofline.write_trace(trace, "mlp.json")  # then: roofline-advise mlp.json --gpu h100

For a training step pass step=fn(model, inputs) (forward, backward, optimizer.step, zero_grad),
optimizer=the optimizer it steps and warmup_steps=1; see `capture`'s notes.

Where the C++ bindings were built (CMake, with python3-dev and pybind11-dev; the build tree's
python/ holds them beside a copy of this package), `analyze(trace_or_path, gpu="h100")` and
`compare(trace_or_path, ["a100", "h100"])` return the JSON document the CLI writes, as Python
objects, for a trace dict or a network YAML, config.json or trace file.
"""
from .trace_file import write_trace

__all__ = ["capture", "write_trace"]

try:
    from .capture import capture
except ImportError as no_torch:  # pricing works without PyTorch; capturing needs it
    _no_torch = str(no_torch)

    def capture(*_args, **_kwargs):
        raise ImportError("roofline.capture needs PyTorch (" + _no_torch + ")")

try:
    from ._roofline import InputError, analyze, compare, op_trace_version
except ImportError as missing:  # the pure-Python package alone: capture works, pricing does not
    _why = str(missing)

    def _not_built(*_args, **_kwargs):
        raise ImportError("roofline's C++ bindings are not built here (" + _why + "): build with "
                          "CMake where python3-dev and pybind11-dev are installed, and put the "
                          "build tree's python/ first on sys.path; or write_trace() and run "
                          "`roofline-advise TRACE.json`")

    analyze = compare = _not_built
else:
    __all__ += ["InputError", "analyze", "compare", "op_trace_version"]
