#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 13's measurements on a lent GPU: eager and graph-replayed (device) cuBLAS times for the model's
# accuracy sweeps, and the machine's host floors. Each argument selects a step; they run in the
# order given below, whatever the order of the arguments:
#   tests        the GPU test binaries ($BIN/gpu_*_test)                              ~1-2 min
#   device       roofline-advise device --measure (cache under $OUT), then --format json  ~1 min
#   calibration  gemm_sweep of sweep_shapes()' calibration set (~392 rows)             ~1 min
#   fresh        gemm_sweep of accuracy_shapes() (~1720 rows)                          ~3-4 min
#   cli          roofline-advise calibrate, then --measure of two examples (after device) ~2 min
#   all          all four (may not fit in one 600 s device command: split it)
# No argument: tests device.
#   here:  cmake -S . -B build-h200 -DCMAKE_BUILD_TYPE=Release -DROOFLINE_STATIC_YAML=ON \
#            -DROOFLINE_BUILD_TESTS=ON -DCMAKE_CUDA_ARCHITECTURES=90 && cmake --build build-h200 -j2 \
#          && bench/pack.sh
#   there: device run, carry ["h200"], command "bash bench/accuracy.sh fresh"
# What comes back under $OUT (at most 8 files): log.txt (machine, steps, timings, sweep progress),
# gpu-tests.log, device-measure.txt, device.json, <gpu>-calibration.csv, <gpu>-fresh.csv, and
# extras.tar.gz (the ceilings cache).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
source bench/common.sh
status=0

run_tests=0 run_device=0 run_calibration=0 run_fresh=0 run_cli=0
[ $# -eq 0 ] && set -- tests device
for step in "$@"; do
  case "$step" in
  tests) run_tests=1 ;;
  device) run_device=1 ;;
  calibration) run_calibration=1 ;;
  fresh) run_fresh=1 ;;
  cli) run_cli=1 ;;
  all) run_tests=1 run_device=1 run_calibration=1 run_fresh=1 ;;
  *)
    echo "usage: bash bench/accuracy.sh [tests] [device] [calibration] [fresh] [cli] [all]" >&2
    exit 2
    ;;
  esac
done

milliseconds() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }

step "machine"
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem,temperature.gpu,power.draw \
  --format=csv 2>&1 | tee -a "$log"
nvidia-smi 2>&1 | tee -a "$log" > /dev/null
echo "host: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)" | tee -a "$log"
# The GPU's short name for the CSV files: "NVIDIA H200" → h200, "NVIDIA H100 80GB HBM3" → h100.
gpu=${GPU_TAG:-$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 \
  | sed 's/^NVIDIA //; s/ .*//' | tr '[:upper:]' '[:lower:]')}
gpu=${gpu:-gpu}

if [ $run_tests = 1 ]; then
  step "GPU tests"
  start=$(date +%s%N)
  for t in "$bin"/gpu_tests; do
    echo "--- $t" >> "$out/gpu-tests.log"
    timeout 300 "$t" >> "$out/gpu-tests.log" 2>&1
    rc=$?
    echo "$(basename "$t"): exit $rc" | tee -a "$log"
    [ $rc -ne 0 ] && status=1
  done
  echo "GPU tests took $(milliseconds "$start") ms" | tee -a "$log"
fi

if [ $run_device = 1 ]; then
  step "device --measure (ceilings and host floors, cache in $ROOFLINE_CACHE_DIR)"
  start=$(date +%s%N)
  "$bin/roofline-advise" device --measure > "$out/device-measure.txt" 2>&1 || status=1
  echo "device --measure took $(milliseconds "$start") ms" | tee -a "$log" "$out/device-measure.txt"
  "$bin/roofline-advise" device --format json > "$out/device.json" 2>> "$log" || status=1
  grep -i "host floor\|kernel launch" "$out/device-measure.txt" | tee -a "$log"
fi

# One sweep: eager and graph-replayed times of every shape of a set × fp32, tf32, fp16, bf16.
sweep() {
  local set=$1 csv="$out/$gpu-$1.csv"
  step "gemm_sweep $set → $(basename "$csv")"
  local start
  start=$(date +%s%N)
  "$bin/gemm_sweep" "$csv" "$set" 2>&1 | tee -a "$log" || status=1
  echo "gemm_sweep $set took $(milliseconds "$start") ms, $(($(wc -l < "$csv") - 1)) rows" \
    | tee -a "$log"
  # Rows that were not measured, and measured rows without a device time, for a first look.
  awk -F, 'NR > 1 && $8 != "measured" { bad++ } NR > 1 && $8 == "measured" && $12 == 0 { nodev++ }
           END { printf "not measured: %d, measured without device time: %d\n", bad, nodev }' \
    "$csv" | tee -a "$log"
}
[ $run_calibration = 1 ] && sweep calibration
[ $run_fresh = 1 ] && sweep fresh

if [ $run_cli = 1 ]; then
  # The user's path: fit this GPU (device time), then analyses with --gpu auto that measure.
  mkdir -p "$out/cli"
  step "roofline-advise calibrate"
  start=$(date +%s%N)
  "$bin/roofline-advise" calibrate > "$out/cli/calibrate.txt" 2>&1 || status=1
  echo "calibrate took $(milliseconds "$start") ms" | tee -a "$log" "$out/cli/calibrate.txt"
  head -3 "$out/cli/calibrate.txt" | tee -a "$log"
  for example in llama2-7b-decode gpt2-small; do
    step "$example --measure"
    start=$(date +%s%N)
    "$bin/roofline-advise" "examples/$example.yaml" --measure --output "$out/cli/$example.json" \
      > "$out/cli/$example.txt" 2>&1 || status=1
    echo "$example --measure took $(milliseconds "$start") ms" | tee -a "$log"
    grep -E "^measured:|^total:|launch-bound" "$out/cli/$example.txt" | tee -a "$log"
  done
  "$bin/roofline-advise" gemm 64 64 64 --measure --no-counters > "$out/cli/gemm-64.txt" 2>&1 || status=1
fi

step "done (status $status)"
extras=()
[ -d "$ROOFLINE_CACHE_DIR" ] && extras+=(cache)
[ -d "$out/cli" ] && extras+=(cli)
if [ ${#extras[@]} -gt 0 ]; then
  tar -czf "$out/extras.tar.gz" -C "$out" "${extras[@]}" && rm -rf "${extras[@]/#/$out/}"
fi
exit $status
