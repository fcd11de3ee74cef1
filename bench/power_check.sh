#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One GPU call for issues 38 and 39: the refactored CUDA layer run for real (every GPU test,
# device --measure, a network measured op by op), then burst against sustained speed and energy
# through NVML (bench/power_probe.py: GEMMs, copies, idle and whole model steps).
#   here:  cmake --build build --target roofline-advise roofline_measure_layer gpu_tests,
#          bash bench/pack.sh build h200
#   there: device run, carry ["h200"], command "bash bench/power_check.sh"
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
source bench/common.sh
status=0
step "machine"
nvidia-smi --query-gpu=name,uuid,clocks.max.sm,power.limit,power.default_limit,power.max_limit \
  --format=csv | tee "$out/gpu.txt"
step "GPU tests"
timeout -k 10 300 "$bin/gpu_tests" --no-colors > "$out/gpu-tests.log" 2>&1 || status=1
tail -4 "$out/gpu-tests.log"
step "device --measure"
timeout -k 10 150 "$bin/roofline-advise" device --measure > "$out/device-measure.txt" 2>&1 || status=1
tail -3 "$out/device-measure.txt"
step "ResNet-50 measured (cuDNN convolutions, padding pairs)"
timeout -k 10 150 "$bin/roofline-advise" examples/resnet50.yaml --gpu auto --measure \
  --format json -o "$out/resnet50-measure.json" > "$out/resnet50-measure.txt" 2>&1 || status=1
grep -A4 '^pad ' "$out/resnet50-measure.txt" | head -6
step "power probe: micro workloads"
timeout -k 10 240 python3 bench/power_probe.py --out "$out/power-micro" > "$out/power-micro.log" 2>&1 \
  || status=1
tail -3 "$out/power-micro.log"
step "power probe: whole steps"
timeout -k 10 330 python3 bench/power_probe.py --out "$out/power-steps" --only none \
  --steps "prefill,decode,BERT,channels_last,GPT-2" > "$out/power-steps.log" 2>&1 \
  || status=1
tail -3 "$out/power-steps.log"
step "done"
# At most 8 files come back: the probes' folders travel as one archive.
tar -czf "$out/power.tar.gz" -C "$out" power-micro power-steps && rm -rf "$out/power-micro" "$out/power-steps"
exit $status
