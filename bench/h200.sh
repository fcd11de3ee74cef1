#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Everything the H200 checks in one call (build here, carry the binaries, one script there): the GPU tests, the
# measured ceilings, and the analyses that use them. Logs go to $OUT.
#   here:  cmake -S . -B build-h200 -DCMAKE_BUILD_TYPE=Release -DROOFLINE_STATIC_YAML=ON \
#            -DROOFLINE_BUILD_TESTS=ON && cmake --build build-h200 -j2 && bench/pack.sh
#   there: device run, carry ["h200"], command "bash bench/h200.sh"
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
source bench/common.sh
status=0

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
  "$bin/roofline-advise" "examples/$example.yaml" > "$out/analysis-$example.txt" 2>&1 || status=1
done

step "--measure: every example, cuBLAS with counters (timed)"
mkdir -p "$out/measure"
for file in examples/*.yaml; do
  example=$(basename "$file" .yaml)
  start=$(date +%s%N)
  "$bin/roofline-advise" "$file" --measure --format json --output "$out/measure/$example.json" \
    > "$out/measure/$example.txt" 2>&1 || status=1
  end=$(date +%s%N)
  echo "$example: --measure took $(( (end - start) / 1000000 )) ms" | tee -a "$out/measure/timing.txt"
done

step "--measure with the custom engines"
for engine in naive tiled tensorcore; do
  for example in alexnet-classifier bert-base; do
    start=$(date +%s%N)
    "$bin/roofline-advise" "examples/$example.yaml" --measure --engine "$engine" --format json \
      --output "$out/measure/$example.$engine.json" > "$out/measure/$example.$engine.txt" 2>&1 || status=1
    end=$(date +%s%N)
    echo "$example --engine $engine: $(( (end - start) / 1000000 )) ms" | tee -a "$out/measure/timing.txt"
  done
done

step "ncu cross-check"
BIN="$bin" bash bench/ncu_check.sh 2>&1 | tee "$out/ncu-check.txt"
# At most 8 files come back: everything goes into one archive, and the summaries stay beside it.
cp "$out/measure/timing.txt" "$out/measure-timing.txt"
tar -C "$out" -czf /tmp/all.tar.gz . && mv /tmp/all.tar.gz "$out/all.tar.gz"
find "$out" -mindepth 1 -maxdepth 1 ! -name all.tar.gz ! -name device-measure.txt ! -name ncu-check.txt \
  ! -name gpu-tests.log ! -name measure-timing.txt -exec rm -rf {} +
exit $status
