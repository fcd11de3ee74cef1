#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The Python bindings (roofline._roofline) against the CLI: the same JSON document for a network
YAML, a config.json and an op trace (a file, and the same trace as a dict), compare's too, and the
tool's input errors as ValueError naming the file. Run with the build tree's python/ first on
sys.path:  test_bindings.py BUILD/python SOURCE_DIR ROOFLINE_ADVISE
"""
import json
import subprocess
import sys


def main():
    build_python, source, tool = sys.argv[1:4]
    sys.path.insert(0, build_python)
    import roofline._roofline as native

    trace = f"{source}/tests/data/traces/hand-mlp-step.json"
    for path, gpu in ((f"{source}/examples/resnet50.yaml", "h100"),
                      (f"{source}/examples/configs/llama-3-8b.json", "h200"), (trace, "a100")):
        cli = json.loads(subprocess.run([tool, path, "--gpu", gpu, "--format", "json"], check=True,
                                        capture_output=True, text=True).stdout)
        py = native.analyze(path, gpu=gpu)
        for doc in (cli, py):
            doc.pop("tool", None)  # the CLI names its version and command line
        assert py["ops"] == cli["ops"], f"{path}: ops differ from the CLI's"
        assert py["totals"] == cli["totals"], f"{path}: totals differ from the CLI's"
        assert py["memory"] == cli["memory"], f"{path}: memory differs from the CLI's"
    with open(trace) as f:
        as_dict = native.analyze(json.load(f), gpu="a100")
    assert as_dict["totals"] == native.analyze(trace, gpu="a100")["totals"], "a trace dict"
    assert as_dict["network"]["trace"]["priced_ops"] == 8
    burst = native.analyze(trace, gpu="h100", clock="burst")
    sustained = native.analyze(trace, gpu="h100")
    assert burst["totals"]["predicted_time_us"] <= sustained["totals"]["predicted_time_us"]
    compared = native.compare(trace, ["h100", "h200"])
    assert [g["name"] for g in compared["gpus"]][:2] == ["h100-sxm5", "h200-sxm"], compared["gpus"]
    for bad, wanted in ((f"{source}/tests/bad-inputs/trace-version.json", "version 2"),
                        (f"{source}/no/such/file.yaml", "file.yaml")):
        try:
            native.analyze(bad)
        except ValueError as e:
            assert wanted in str(e), str(e)
        else:
            raise AssertionError(f"{bad}: no error")
    try:
        native.analyze(trace, clock="warp")
    except ValueError as e:
        assert "sustained or burst" in str(e)
    print("bindings: analyze and compare match the CLI; errors are ValueErrors naming the file")


if __name__ == "__main__":
    main()
