#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# PyTorch's memory-bound kernels timed as they run inside a step, on one H100 or H200 (PyTorch with
# CUDA, nothing built or carried): each shape warm (same buffers), cold (buffer sets rotated past
# 3x L2) and behind a producer kernel (bench/memop_instep.py says how). Writes memops-instep.csv,
# memops-instep-meta.json and log-memops.txt to $OUT, which other scripts share (nothing else in
# it is touched). The script keeps to MEMOP_BUDGET_S (default 240 s); timeout stops it 20 s later
# (SIGTERM: the meta file is still written), so the call takes at most about 4.5 minutes.
#   there: device run, command "bash bench/memop_instep.sh"
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
source bench/common.sh
budget=${MEMOP_BUDGET_S:-240}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv \
  > "$out/log-memops.txt" 2>&1
timeout -k 10 $((budget + 20)) python3 bench/memop_instep.py --out "$out" --budget-s "$budget" \
  "$@" 2>&1 | tee -a "$out/log-memops.txt"
exit "${PIPESTATUS[0]}"
