#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 28's GPU call: --measure beyond GEMMs (bench/measure_check.sh), then the whole-step
# benchmark (bench/step_check.sh), each under a time limit so that one call holds both.
#   here:  build build-h200 and pack it (bench/measure_check.sh's header)
#   there: device run, carry ["h200"], command "bash bench/issue28_check.sh [steps-only]"
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
source bench/common.sh
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > "$out/gpu.txt" 2>&1
status=0
if [ "${1:-}" != steps-only ]; then
  timeout -k 10 200 bash bench/measure_check.sh || status=1
  # calibrate fits the memory-bound ops' parameters on this GPU beside the GEMM's.
  ROOFLINE_CACHE_DIR="$out/calibrate-cache" \
    timeout -k 10 150 "$bin/roofline-advise" calibrate > "$out/calibrate.txt" 2>&1 ||
    status=1
  tail -25 "$out/calibrate.txt"
  rm -rf "$out/calibrate-cache"
fi
timeout -k 10 380 bash bench/step_check.sh || status=1
exit $status
