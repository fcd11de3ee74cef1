#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fused attention through cuDNN's graph API on the GPU machine: each attention test case in a
# process of its own (a fault in one must not hide the others), the first again under
# compute-sanitizer, cuDNN's error log on; then bench/measure_check.sh, and, on an H200, the
# whole steps (bench/step_check.sh).   there: device run, carry ["h200"],
# command "bash bench/attention_check.sh"
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
source bench/common.sh
use_torch_cudnn
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$out/gpu.txt"
status=0
i=0
for tc in '*fused attention through cuDNN*' '*BHSD*' '*network with a norm*'; do
  i=$((i + 1))
  CUDNN_LOGLEVEL_DBG=1 CUDNN_LOGDEST_DBG="$out/cudnn-$i.log" \
    timeout -k 5 120 "$bin/gpu_tests" --no-colors -tc="$tc" > "$out/attention-$i.log" 2>&1 || status=1
  grep -E "MESSAGE|ERROR|test cases|: (measured|skipped|failed)" "$out/attention-$i.log" | head -40
done
timeout -k 5 200 compute-sanitizer --tool memcheck --print-limit 5 "$bin/gpu_tests" --no-colors \
  -tc='*fused attention through cuDNN*' > "$out/sanitizer.log" 2>&1 || status=1
grep -E "Invalid|ERROR SUMMARY|at 0x|by thread|kernel" "$out/sanitizer.log" | head -20
timeout -k 10 150 bash bench/measure_check.sh || status=1
if grep -q H200 "$out/gpu.txt"; then timeout -k 10 300 bash bench/step_check.sh || status=1; fi
exit $status
