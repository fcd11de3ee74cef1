# SPDX-License-Identifier: Apache-2.0
"""Writing op traces (docs/op-trace-format.md): no PyTorch needed."""
import json
import os


def write_trace(trace, path):
    """Write `trace` as JSON, one op a line: small, and readable with grep and diff."""
    head = {k: v for k, v in trace.items() if k not in ("ops", "end")}
    with open(os.fspath(path), "w", encoding="utf-8") as f:
        f.write("{\n")
        for key, value in head.items():
            f.write(f"{json.dumps(key)}: {json.dumps(value)},\n")
        f.write('"ops": [\n')
        ops = trace.get("ops", [])
        for i, op in enumerate(ops):
            f.write(json.dumps(op, separators=(",", ":")) + (",\n" if i + 1 < len(ops) else "\n"))
        f.write("]")
        if "end" in trace:
            f.write(f',\n"end": {json.dumps(trace["end"])}')
        f.write("\n}\n")
