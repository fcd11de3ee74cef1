#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 30's GPU call, on a host of two GPUs: the refactored CUDA layer run for real. Every GPU
# test; device --measure (its NCCL all-reduce over both GPUs: the NCCL loader, the clique, the
# thread per GPU); a network measured on both GPUs at once (--devices all); NCCL's probe.
#   here:  build build-h200 (targets roofline-advise roofline_measure_layer gpu_tests
#          allreduce_probe), bash bench/pack.sh build-h200 h200
#   there: device run, kind nvidia-h100-x2, carry ["h200"], command "bash bench/house_check.sh"
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
source bench/common.sh
status=0
step "machine"
nvidia-smi --query-gpu=name,uuid,clocks.max.sm,power.limit --format=csv | tee "$out/gpu.txt"
step "GPU tests"
timeout -k 10 300 "$bin/gpu_tests" --no-colors > "$out/gpu-tests.log" 2>&1 || status=1
tail -4 "$out/gpu-tests.log"
step "device --measure"
timeout -k 10 120 "$bin/roofline-advise" device --measure > "$out/device-measure.txt" 2>&1 || status=1
grep -i "all-reduce\|error" "$out/device-measure.txt" | head -5
step "--measure on both GPUs"
timeout -k 10 120 "$bin/roofline-advise" examples/configs/llama-2-7b.json --tp 2 --phase decode \
  --batch 8 --measure --devices all > "$out/tp2-measure.txt" 2>&1 || status=1
tail -5 "$out/tp2-measure.txt"
step "allreduce_probe"
timeout -k 10 120 "$bin/allreduce_probe" > "$out/allreduce-probe.txt" 2>&1 || status=1
tail -3 "$out/allreduce-probe.txt"
exit $status
