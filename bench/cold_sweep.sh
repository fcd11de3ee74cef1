#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The calibration and fresh GEMM sweeps timed with operands cold (gemm_sweep ... cold: every call's
# operands rotated through buffers larger than L2), for the model's cold-operand parameters
# (bench/model_accuracy --cold). On a host of two GPUs the two sweeps run at once, one per GPU;
# on one GPU, one after the other. CSVs under $OUT.
#   here:  cmake --build build-h200 -j2 --target gemm_sweep && mkdir -p h200 &&
#          cp build-h200/bench/gemm_sweep h200/   (plus libnlopt.so.0 and libfmt.so.9)
#   there: device run, carry ["h200"], command "bash bench/cold_sweep.sh"
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
source bench/common.sh
nvidia-smi --query-gpu=index,name,uuid,driver_version --format=csv | tee "$out/sweep-log.txt"
gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
sweep() { # sweep SET GPU
  local start=$(date +%s)
  CUDA_VISIBLE_DEVICES=$2 timeout "${SWEEP_TIMEOUT:-300}" "$bin/gemm_sweep" "$out/cold-$1.csv" "$1" cold \
    > "$out/sweep-$1.txt" 2>&1
  echo "$1 on GPU $2: exit $?, $(( $(date +%s) - start )) s" >> "$out/sweep-log.txt"
}
if [ "$gpus" -ge 2 ]; then
  sweep calibration 0 & sweep fresh 1 & wait
else
  sweep calibration 0; sweep fresh 0
fi
tail -n 2 "$out"/sweep-*.txt >> "$out/sweep-log.txt"
cat "$out/sweep-log.txt"
