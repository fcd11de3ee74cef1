#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One H200: a tensor-parallel rank of Llama-3.3-70B at TP 2 and TP 4 without its all-reduces
# (bench/tp_rank_check.py), with the GPU's clock and power sampled beside it.
#   OUT=DIR [GAPS="N ..."] bash bench/issue42_tp_rank.sh   (device machine; writes under $OUT)
# GAPS: the spin kernels' cycles, a prefill run each (default 500000, the fit's; run 3 scored
# the fit on 250000 and 1000000)
set -u
cd "$(dirname "$0")/.."
out=${OUT:?set OUT}
nvidia-smi --query-gpu=name,serial,power.limit --format=csv > "$out/gpu.txt" 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv,nounits \
  -lms 200 > "$out/smi.csv" 2>&1 &
smi=$!
timeout -k 10 480 python3 bench/tp_rank_check.py "$out" --gap-cycles ${GAPS:-500000} > "$out/tp_rank.log" 2>&1
status=$?
kill "$smi" 2>/dev/null
tail -20 "$out/tp_rank.log"
exit $status
