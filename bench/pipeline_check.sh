#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issues 14 and 15's GPU call: the CLI links no CUDA library and loads the measurement plugin only for the
# commands that need the GPU. Checks every such command on a lent GPU, and times the start-up of
# commands that need none, from the CUDA build. Logs under $OUT.
#   here:  cmake -S . -B build-h200 -DCMAKE_BUILD_TYPE=Release -DROOFLINE_STATIC_YAML=ON \
#            -DROOFLINE_BUILD_TESTS=ON -DCMAKE_CUDA_ARCHITECTURES=90 && cmake --build build-h200 -j2 \
#          && bench/pack.sh
#   there: device run, carry ["h200"], command "bash bench/pipeline_check.sh"
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
source bench/common.sh
mkdir -p "$out/cli"
status=0
run() { # run NAME COMMAND...: output to cli/NAME.txt, exit status and wall time to the log
  local name=$1 start rc
  shift
  start=$(date +%s%N)
  "$@" > "$out/cli/$name.txt" 2>&1
  rc=$?
  echo "$name: exit $rc, $(( ($(date +%s%N) - start) / 1000000 )) ms" | tee -a "$log"
  [ $rc -ne 0 ] && status=1
  return 0
}

step "machine"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv 2>&1 | tee -a "$log"
echo "host: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)" | tee -a "$log"

step "GPU tests"
for t in "$bin"/gpu_tests; do
  echo "--- $t" >> "$out/gpu-tests.log"
  timeout 300 "$t" >> "$out/gpu-tests.log" 2>&1
  rc=$?
  echo "$(basename "$t"): exit $rc" | tee -a "$log"
  [ $rc -ne 0 ] && status=1
done

step "start-up without a GPU command (CUDA build): wall s, max RSS KB, 20 runs each"
for args in "examples/alexnet-classifier.yaml --gpu h100" \
            "examples/alexnet-classifier.yaml --gpu h100 --format json" "specs"; do
  # shellcheck disable=SC2086
  for i in $(seq 20); do /usr/bin/time -f '%e %M' "$bin/roofline-advise" $args > /dev/null 2>> "$out/startup.txt"; done
  sort -n "$out/startup.txt" | awk -v a="$args" '{ t[NR] = $1; m[NR] = $2 }
    END { printf "%s: median %.3f s, max %.3f s, RSS %d KB\n", a, t[int((NR + 1) / 2)], t[NR], m[NR] }' \
    | tee -a "$log"
  rm -f "$out/startup.txt"
done
ldd "$bin/roofline-advise" | grep -ci "cuda\|cublas\|cupti" | sed 's/^/CUDA libraries linked by the CLI: /' | tee -a "$log"

step "commands through the measurement plugin"
run device-measure "$bin/roofline-advise" device --measure
run device-json "$bin/roofline-advise" device --format json
for i in 1 2 3; do /usr/bin/time -f "auto start-up: %e s, RSS %M KB" "$bin/roofline-advise" \
  examples/alexnet-classifier.yaml > /dev/null 2>> "$log"; done
run auto-alexnet "$bin/roofline-advise" examples/alexnet-classifier.yaml --output "$out/cli/auto-alexnet.json"
run gemm-padding "$bin/roofline-advise" gemm 512 50257 768 --measure --output "$out/cli/gemm-padding.json"
run llama-decode "$bin/roofline-advise" examples/llama2-7b-decode.yaml --measure --no-counters \
  --output "$out/cli/llama-decode.json" --plot "$out/cli/llama-decode.svg" \
  --html "$out/cli/llama-decode.html"
# Issue 15: measured points (filled, joined to their predictions; intensity from DRAM counters).
run resnet50-measured "$bin/roofline-advise" examples/resnet50.yaml --measure \
  --output "$out/cli/resnet50-measured.json" --plot "$out/cli/resnet50-measured.svg" \
  --html "$out/cli/resnet50-measured.html"
run compare-local "$bin/roofline-advise" compare examples/gpt2-small.yaml --gpus local,h200,h100 \
  --output "$out/cli/compare-local.json" --plot "$out/cli/compare-local.svg"
run calibrate "$bin/roofline-advise" calibrate
# Without the plugin, a GPU command must fail with a clear message (exit 1), not crash.
ROOFLINE_MEASURE_LAYER=/nonexistent "$bin/roofline-advise" device > "$out/cli/bad-layer.txt" 2>&1
echo "device without the plugin: exit $? (expected 1)" | tee -a "$log"
grep -E "^measured:|^total:|warning: |padding|×" "$out/cli/gemm-padding.txt" | head -8 | tee -a "$log"
grep -E "^batch|faster" "$out/cli/compare-local.txt" | head -4 | tee -a "$log"
head -2 "$out/cli/calibrate.txt" | tee -a "$log"
tail -1 "$out/cli/bad-layer.txt" | tee -a "$log"

step "done (status $status)"
cp "$out"/cli/*.svg "$out"/cli/*.html "$out"/ 2>/dev/null # the charts, to look at
tar -czf "$out/extras.tar.gz" -C "$out" cli cache 2>/dev/null && rm -rf "$out/cli" "$out/cache"
exit $status
