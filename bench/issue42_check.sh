#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 42's GPU call, on a host of four GPUs: NCCL collectives on 2 and 4 GPUs, a 1F1B step at
# PP = 2 and an expert-parallel MoE layer at EP = 2 and 4 (bench/parallel_check.sh), and a
# TP = 4 Llama-2-7B step (bench/tp_step_check.py with ROOFLINE_TP=4). PyTorch only: the tool's
# predictions of the same steps are made afterwards, on any machine (docs/benchmarks.md).
#   there: device run --kind nvidia-h200-x4, command "bash bench/issue42_check.sh"
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
root_out="${OUT:-/tmp/roofline-out}"
bash bench/parallel_check.sh
parallel_status=$?
export OUT="$root_out/tp4"
source bench/common.sh
step "PyTorch: a TP = 4 Llama-2-7B step"
ROOFLINE_TP=4 timeout -k 15 240 python3 bench/tp_step_check.py "$out" > "$out/tp_step.txt" 2>&1
echo "tp4: exit $?" | tee -a "$log"
tail -n 40 "$out/tp_step.txt" >> "$log"
exit $parallel_status
