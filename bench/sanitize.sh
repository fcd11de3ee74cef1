#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 18's GPU call: compute-sanitizer's memcheck, racecheck, initcheck and synccheck over every
# kernel in kernels/ (tests/gpu/every_kernel_test.cpp launches each at small sizes, in every
# instance its launcher picks), memcheck over the custom engines' --measure path, then the
# measurement's fault-injection and Ctrl-C tests (tests/gpu/measure_faults_test.cpp,
# interrupt_test.cpp) and the same faults through the CLI. About 3 minutes on an H100.
# $OUT gets summary.txt (a verdict line per kernel and tool, per step) and logs.tar.gz (every log).
#   here:  cmake -S . -B /tmp/build-h4 -DCMAKE_BUILD_TYPE=Release -DROOFLINE_BUILD_TESTS=ON \
#            -DCMAKE_CUDA_ARCHITECTURES=90 -DROOFLINE_STATIC_YAML=ON -DROOFLINE_STATIC_YAML_CPP=ON \
#          && cmake --build /tmp/build-h4 -j2 --target roofline-advise roofline_measure_layer gpu_tests \
#          && bash bench/sanitize.sh --pack /tmp/build-h4      (copies the binaries into build-sanitize/)
#   there: device run, kind nvidia-h100-x1, carry ["build-sanitize"], timeout_s 600,
#          command "bash bench/sanitize.sh"
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

if [ "${1:-}" = "--pack" ]; then
  exec bash bench/pack.sh "${2:?usage: bench/sanitize.sh --pack BUILD_DIR}" build-sanitize
fi

BIN=${BIN:-build-sanitize}
source bench/common.sh
logs="$out/logs"
mkdir -p "$logs"
# interrupt_test.cpp runs the CLI: the carried one, on this checkout's examples.
export ROOFLINE_ADVISE="$PWD/$bin/roofline-advise" ROOFLINE_SOURCE_DIR="$PWD"
summary="$out/summary.txt"
: > "$summary"
say() { echo "$*" | tee -a "$summary"; }
run() { # run NAME SECONDS COMMAND...: output to logs/NAME.txt; the exit status and wall time to logs
  local name=$1 limit=$2 start rc
  shift 2
  start=$(date +%s%N)
  timeout -k 10 "$limit" "$@" > "$logs/$name.txt" 2>&1
  rc=$?
  echo "$name: exit $rc, $(( ($(date +%s%N) - start) / 1000000 )) ms" >> "$logs/steps.txt"
  return $rc
}

sanitizer=$(command -v compute-sanitizer || true)
for candidate in /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer \
  /usr/local/cuda-*/bin/compute-sanitizer /opt/nvidia/compute-sanitizer/compute-sanitizer; do
  [ -z "$sanitizer" ] && [ -x "$candidate" ] && sanitizer=$candidate
done
say "=== machine ($(date -u +%FT%TZ))"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | tee -a "$summary"
if [ -n "$sanitizer" ]; then say "compute-sanitizer: $sanitizer, $("$sanitizer" --version | tail -1)"
else say "compute-sanitizer: NOT FOUND (the sanitizer steps are skipped)"; fi

every_kernel=(--no-colors --source-file='*every_kernel_test.cpp')

say "=== every kernel, plain (CUPTI traces each launch and checks its name)"
run kernels-plain 120 "$bin/gpu_tests" "${every_kernel[@]}"
rc=$?
say "kernels-plain: exit $rc ($(grep -c '^launched ' "$logs/kernels-plain.txt") launch groups; $(grep -m1 'test cases:' "$logs/kernels-plain.txt"))"

if [ -n "$sanitizer" ]; then
  say "=== compute-sanitizer over every kernel"
  for tool in memcheck racecheck initcheck synccheck; do
    extra=()
    [ "$tool" = memcheck ] && extra=(--leak-check full)
    ROOFLINE_KERNELS_UNTRACED=1 run "$tool" 170 "$sanitizer" --tool "$tool" "${extra[@]}" \
      --error-exitcode 99 --print-limit 200 "$bin/gpu_tests" "${every_kernel[@]}"
    rc=$?
    say "$tool over every kernel: exit $rc (99: errors found; 124: out of time)"
  done
  say "=== memcheck over the custom engines' --measure (one small GEMM: fill, check, eager, graph replay)"
  for engine in naive tiled tensorcore; do
    run "measure-memcheck-$engine" 120 "$sanitizer" --tool memcheck --error-exitcode 99 \
      "$bin/roofline-advise" gemm 96 80 144 --precision fp32 --measure --engine "$engine" \
      --no-counters --format json
    rc=$?
    say "measure --engine $engine under memcheck: exit $rc, $(grep -m1 'ERROR SUMMARY' "$logs/measure-memcheck-$engine.txt" | sed 's/^=* *//')"
  done
fi

say "=== fault injection and Ctrl-C (GPU tests)"
for t in measure_faults measure interrupt; do
  run "test-$t" 200 "$bin/gpu_tests" --no-colors --source-file="*/${t}_test.cpp"
  rc=$?
  say "gpu test $t: exit $rc ($(grep -m1 'test cases:' "$logs/test-$t.txt"))"
done

say "=== the same through the CLI"
ROOFLINE_INJECT_FAULT=0:cublas,2:oom,4:cupti run cli-faults 120 "$bin/roofline-advise" \
  examples/alexnet-classifier.yaml --measure --format json --output "$logs/cli-faults.json"
rc=$?
say "cli faults (fc6 cuBLAS error, fc7 out of memory, fc8 CUPTI error): exit $rc (0 expected)"
ROOFLINE_INJECT_FAULT=2:sigint run cli-sigint 120 "$bin/roofline-advise" examples/mlp-training.yaml \
  --measure --format json --output "$logs/cli-sigint.json"
rc=$?
say "cli SIGINT as the second GEMM starts: exit $rc (130 expected)"
python3 - "$logs" <<'PY' 2>&1 | tee -a "$summary"
import json, sys
logs = sys.argv[1]
def ops(name):
    try:
        doc = json.load(open(f"{logs}/{name}.json"))
    except Exception as e:
        print(f"  {name}.json: not readable: {e}")
        return None
    print(f"  {name}.json: complete = {doc.get('complete')}")
    for o in doc["ops"]:
        m = o.get("measured")
        if m:
            print(f"    {o['layer']} ({o['pass']}): {m['status']}: {m['note'][:110]}")
    return doc
ops("cli-faults")
ops("cli-sigint")
PY

if [ -n "$sanitizer" ]; then
  say "=== verdicts: every __global__ kernel of kernels/ under each tool"
  python3 - "$logs" kernels/*.cu kernels/*.cuh <<'PY' 2>&1 | tee -a "$summary"
import re, sys
logs, sources = sys.argv[1], sys.argv[2:]
kernels = []
for path in sources:
    text = open(path).read()
    for m in re.finditer(r"__global__\s+void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)\s*\(", text):
        if m.group(1) not in kernels:
            kernels.append(m.group(1))
prefix = "========= "
for tool in ["memcheck", "racecheck", "initcheck", "synccheck"]:
    try:
        lines = open(f"{logs}/{tool}.txt", errors="replace").read().splitlines()
    except OSError:
        print(f"{tool}: no log")
        continue
    launched = {l.split()[1] for l in lines if l.startswith("launched ")}
    # An error report starts at an unindented sanitizer line that is not a summary or banner.
    blocks, current = [], None
    for l in lines:
        if l.startswith(prefix) and not l.startswith(prefix + " "):
            body = l[len(prefix):]
            if re.match(r"(COMPUTE-SANITIZER|ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY|Target application|This warning)", body):
                current = None
                continue
            current = [body]
            blocks.append(current)
        elif l.startswith(prefix) and current is not None:
            current.append(l)
    errors = {k: 0 for k in kernels}
    other = []
    for b in blocks:
        text = "\n".join(b)
        owner = next((k for k in kernels if re.search(r"(?<![\w])" + k + r"\s*[<(]", text)), None)
        if owner:
            errors[owner] += 1
        else:
            other.append(b[0])
    total = next((l[len(prefix):] for l in lines if "ERROR SUMMARY" in l or "RACECHECK SUMMARY" in l), "no summary line")
    doctest = next((l for l in lines if "test cases:" in l), "no doctest result")
    print(f"{tool}: {total}; {doctest.strip()}")
    for k in kernels:
        verdict = (f"{errors[k]} ERROR REPORT(S)" if errors[k] else
                   "clean" if k in launched else "NOT LAUNCHED")
        print(f"  {tool:9} {k:24} {verdict}")
    for first in other[:10]:
        print(f"  {tool:9} (no kernel of ours named) {first[:140]}")
PY
fi

tar -czf "$out/logs.tar.gz" -C "$out" logs && rm -rf "$logs" "$out/cache"
