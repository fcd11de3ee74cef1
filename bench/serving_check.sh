#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The steps a serving answer is made of, timed in PyTorch (bench/step_check.py): Llama-3-8B's
# prefill of one 2048-token prompt and its decode steps at batches 1, 16, 64 and 128 with a cache
# of 2176, as Hugging Face runs them (bench/step_check.py) and as a serving engine does
# (bench/serving_step.py); scored here afterwards by bench/serving_score.py.
#   there: device run, command "bash bench/serving_check.sh"
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
source bench/common.sh
step "serving steps"
timeout -k 10 300 python3 bench/step_check.py --steps "GQA prefill,serving decode" --budget-s 280 \
  --out "$out" > "$out/serving.log" 2>&1
tail -5 "$out/serving.log"
step "serving steps in plain PyTorch ops (GQA cache read once)"
timeout -k 10 300 python3 bench/serving_step.py --out "$out" > "$out/serving_step.log" 2>&1
tail -6 "$out/serving_step.log"
