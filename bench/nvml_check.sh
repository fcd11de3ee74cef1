#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 39's NVML in the tool, on a GPU: `device --measure` reads the idle power, DRAM's energy per
# byte and a bf16 GEMM's sustained rate and energy per FLOP; a Llama-3-8B prefill analysed against
# the local GPU (--gpu auto) uses them; the GPU tests again.
#   here:  cmake --build build --target roofline-advise roofline_measure_layer gpu_tests,
#          bash bench/pack.sh build h200
#   there: device run, carry ["h200"], command "bash bench/nvml_check.sh"
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
source bench/common.sh
status=0
step "machine"
nvidia-smi --query-gpu=name,uuid,power.limit --format=csv | tee "$out/gpu.txt"
step "device --measure (NVML)"
timeout -k 10 200 "$bin/roofline-advise" device --measure > "$out/device-measure.txt" 2>&1 || status=1
grep -iE "power|energy|held" "$out/device-measure.txt" | head -12
timeout -k 10 60 "$bin/roofline-advise" device --format json > "$out/device.json" 2>&1 || status=1
step "Llama-3-8B prefill against the local GPU"
timeout -k 10 60 "$bin/roofline-advise" examples/configs/llama-3-8b.json --gpu auto --glue eager \
  > "$out/llama-auto.txt" 2>&1 || status=1
grep -A3 "^power:" "$out/llama-auto.txt"
step "device --measure without NVML (a library that is not there)"
ROOFLINE_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 ROOFLINE_CACHE_DIR="$out/cache-nonvml" \
  timeout -k 10 200 "$bin/roofline-advise" device --measure > "$out/device-nonvml.txt" 2>&1 || status=1
grep -iE "idle power|energy|held" "$out/device-nonvml.txt" | head -6
step "GPU tests"
timeout -k 10 300 "$bin/gpu_tests" --no-colors > "$out/gpu-tests.log" 2>&1 || status=1
tail -3 "$out/gpu-tests.log"
exit $status
