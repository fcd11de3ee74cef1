# SPDX-License-Identifier: Apache-2.0
"""The tool's JSON report of one command, for the score scripts that hold it against data."""
import json
import subprocess


def tool_json(tool, *args, cwd=None):
    """`tool ARGS... --format json`, run (in `cwd`: relative paths in ARGS are its), parsed."""
    out = subprocess.run([tool, *args, "--format", "json"], check=True, capture_output=True,
                         text=True, cwd=cwd).stdout
    return json.loads(out)
