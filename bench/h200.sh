#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Everything the H200 checks in one call (../shared/notes/device-workflow.md): the GPU tests, the
# measured ceilings, and the analyses that use them. Logs go to $OUT.
#   here:  cmake -S . -B build-h200 -DCMAKE_BUILD_TYPE=Release -DROOFLINE_STATIC_YAML_CPP=ON \
#            -DROOFLINE_BUILD_TESTS=ON && cmake --build build-h200 -j2 && bench/pack.sh
#   there: device run, carry ["h200"], command "bash bench/h200.sh"
set -uo pipefail
bin=${BIN:-h200}
out=${OUT:-/tmp/roofline-out}
mkdir -p "$out"
export ROOFLINE_CACHE_DIR="$out/cache"
status=0
step() { echo "=== $*"; }

step "machine"
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem,temperature.gpu,power.draw --format=csv \
  | tee "$out/gpu.txt"

step "GPU tests"
for t in "$bin"/gpu_*_test; do
  "$t" 2>&1 | tee -a "$out/gpu-tests.log" || status=1
done

step "device --measure (timed)"
start=$(date +%s%N)
"$bin/roofline-advise" device --measure 2>&1 | tee "$out/device-measure.txt" || status=1
end=$(date +%s%N)
echo "device --measure took $(( (end - start) / 1000000 )) ms" | tee -a "$out/device-measure.txt"
"$bin/roofline-advise" device --format json > "$out/device.json" || status=1

step "analyses against the measured local roofline (--gpu auto)"
for example in alexnet-classifier llama2-7b-decode llama2-7b-prefill; do
  "$bin/roofline-advise" "examples/$example.yaml" 2>&1 | tee -a "$out/analyses.txt" || status=1
done
exit $status
