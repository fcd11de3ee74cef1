#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 28's kernel sweep on one H100 or H200 (PyTorch with CUDA, nothing built or carried):
# device time of fused attention, memory-bound ops and glue, cuDNN convolutions and the gap
# between graph-replayed kernels, for fitting and scoring (bench/sweep_kernels.py says what each
# file holds). Writes attention.csv, memops.csv, conv.csv, gaps.csv, meta.json, kernels.json and
# log.txt to $OUT. The script keeps to SWEEP_BUDGET_S (default 400 s); timeout stops it 20 s
# later (SIGTERM: meta.json is still written), so the call takes at most about 7 minutes.
#   there: device run, command "bash bench/sweep_kernels.sh"
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
source bench/common.sh
budget=${SWEEP_BUDGET_S:-400}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > "$out/log.txt" 2>&1
timeout -k 10 $((budget + 20)) python3 bench/sweep_kernels.py --out "$out" --budget-s "$budget" "$@" \
  2>&1 | tee -a "$out/log.txt"
exit "${PIPESTATUS[0]}"
