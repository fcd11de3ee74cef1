#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The performance-model checks on the H200 (issue 5): calibrate on the local GPU, then measure the
# padding advice (original and padded GEMMs timed the same way) on the examples and classic shapes.
#   BIN=h200 bash bench/h200-model.sh   (logs in $OUT)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
source bench/common.sh
status=0
"$bin/roofline-advise" device --measure > /dev/null || status=1
start=$(date +%s%N)
"$bin/roofline-advise" calibrate 2>&1 | tee "$out/calibrate.txt" || status=1
echo "calibrate took $(( ($(date +%s%N) - start) / 1000000 )) ms" | tee -a "$out/calibrate.txt"
{
  for shape in "2048 33708 1024" "8192 50257 768" "128 1000 4096" "512 4096 1024" "2048 32001 2048" "4096 30522 1024"; do
    echo "=== gemm $shape --measure"
    "$bin/roofline-advise" gemm $shape --measure --no-counters 2>&1 | sed -n '/^layer  *pass  *engine\|^pad /,/^$/p'
  done
  for example in gpt2-small alexnet-classifier bert-base; do
    echo "=== $example --measure"
    "$bin/roofline-advise" "examples/$example.yaml" --measure --no-counters 2>&1 | sed -n '/^pad /,/^$/p'
  done
} 2>&1 | tee "$out/padding.txt"
exit $status
