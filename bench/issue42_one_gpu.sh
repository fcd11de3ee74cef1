#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 42's checks that one GPU can run (PyTorch only, no binaries carried): one GPU's expert
# GEMMs of a Mixtral layer under TP 4 and EP 4 (bench/moe_ep_check.py), and a Megatron-like
# training step of GPT 1.7B, eager and compiled (bench/megatron_step_check.py). Logs and JSON
# under $OUT; bench/issue42_one_gpu_score.py holds them against the tool.
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
step "the card"
nvidia-smi --query-gpu=name,uuid,clocks.max.sm,power.limit --format=csv | tee -a "$log"
step "expert GEMMs, TP 4 against EP 4"
python3 bench/moe_ep_check.py "$out" 2>&1 | tee -a "$log"
step "Megatron-like GPT 1.7B training step"
python3 bench/megatron_step_check.py "$out" 2>&1 | tee -a "$log"
step "done"
