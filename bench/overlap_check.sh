#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One GPU: bench/overlap_check.py with the clock and power sampled beside it.
#   OUT=DIR bash bench/overlap_check.sh   (device machine; writes under $OUT)
set -u
cd "$(dirname "$0")/.."
out=${OUT:?}
nvidia-smi --query-gpu=name,serial,power.limit --format=csv > "$out/gpu.txt" 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw --format=csv,nounits -lms 200 > "$out/smi.csv" 2>&1 &
smi=$!
timeout -k 10 300 python3 bench/overlap_check.py "$out" > "$out/overlap.log" 2>&1
st=$?
kill $smi
cat "$out/overlap.log" | cut -c1-400
exit $st
