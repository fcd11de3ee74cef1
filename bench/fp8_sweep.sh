#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 29's GPU call: fp8 GEMMs through cuBLASLt (e4m3 operands, bf16 output, graph-replayed)
# on the calibration shapes (to fit the fp8 parameters on) and the fresh ones (to score them),
# each under a time limit (a stopped sweep still writes its rows).
#   here:  build build-h200, bash bench/pack.sh build-h200 h200
#   there: device run, carry ["h200"], command "bash bench/fp8_sweep.sh"
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
source bench/common.sh
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > "$out/gpu.txt" 2>&1
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -q H200 && echo h200 || echo h100)
status=0
timeout -k 10 220 "$bin/gemm_sweep" "$out/$card-fp8-calibration.csv" calibration fp8 \
  > "$out/fp8-sweep.log" 2>&1 || status=1
timeout -k 10 330 "$bin/gemm_sweep" "$out/$card-fp8-fresh.csv" fresh fp8 \
  >> "$out/fp8-sweep.log" 2>&1 || status=1
tail -5 "$out/fp8-sweep.log"
exit $status
