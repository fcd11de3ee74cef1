#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 40 part 5 on one H100 or H200: six PyTorch programs timed eagerly (step time, peak
# memory), captured on the GPU by python/roofline and priced by the carried tool
# (bench/capture_check.py says which and how). Writes capture-results.json, log-capture.txt and
# traces.tgz (the traces and the tool's JSON for them) to $OUT.
#   here:  cmake --build build --target roofline-advise, bash bench/pack.sh build h200
#   there: device run, carry ["h200"], command "bash bench/capture_check.sh"
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
source bench/common.sh
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case "$card" in
  *H200*) gpu=h200 ;;
  *H100*) gpu=h100 ;;
  *) gpu=auto ;;
esac
echo "card: $card (--gpu $gpu)" | tee "$out/log-capture.txt"
# The capture package's own test on this PyTorch (on the meta device, as CI runs it on 1.13).
python3 tests/python/test_capture.py 2>&1 | tail -3 | tee -a "$out/log-capture.txt"
timeout -k 10 "${CAPTURE_BUDGET_S:-480}" python3 bench/capture_check.py --out "$out" \
  --tool "$bin/roofline-advise" --gpu "$gpu" "$@" 2>&1 | tee -a "$out/log-capture.txt"
status=${PIPESTATUS[0]}
(cd "$out" && tar czf traces.tgz traces predicted && rm -rf traces predicted)
exit "$status"
