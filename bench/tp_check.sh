#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 17's GPU call, on a host of two GPUs: NCCL's all-reduce table measured by the tool (device
# --measure; bench/allreduce_compare.sh sets it against PyTorch's); a tensor-parallel
# (TP = 2) Llama-2-7B step timed with PyTorch, its parts apart; and the tool's predictions of
# that step with the measured table (--gpu auto) and with the datasheet's links. Logs under $OUT.
#   here:  cmake --build build-h200 -j2 --target roofline-advise roofline_measure_layer \
#            gpu_tests allreduce_probe && bash bench/pack.sh
#   there: device run --kind nvidia-h200-x2, carry ["h200"], command "bash bench/tp_check.sh"
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
source bench/common.sh
use_torch_nccl # the tool's table and PyTorch's step run one library
run() { # run NAME COMMAND...: output to NAME.txt, exit status and wall time to the log
  local name=$1 start rc
  shift
  start=$(date +%s%N)
  timeout 150 "$@" > "$out/$name.txt" 2>&1
  rc=$?
  echo "$name: exit $rc, $(( ($(date +%s%N) - start) / 1000000 )) ms" | tee -a "$log"
}

step "machine"
echo "NCCL for the tool: ${ROOFLINE_NCCL_LIBRARY:-found on the loader path}" | tee -a "$log"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv 2>&1 | tee -a "$log"
nvidia-smi topo -m >> "$log" 2>&1

step "the tool: device --measure (ceilings, host floor and the all-reduce table)"
run device "$bin/roofline-advise" device --measure
"$bin/roofline-advise" device --format json > "$out/device.json" 2>> "$log"
step "the tool: calibrate (the GEMM model fitted on this host's GPU 0; --gpu auto uses it)"
run calibrate "$bin/roofline-advise" calibrate
step "PyTorch: a TP = 2 Llama-2-7B step"
run tp_step python3 bench/tp_step_check.py "$out"

step "the tool's predictions of the same steps"
config=examples/configs/llama-2-7b.json
for gpu in auto h200; do
  run "predict-prefill-$gpu" "$bin/roofline-advise" "$config" --glue eager --tp 2 --gpu "$gpu" --batch 1 \
    --seq-len 2048 --format json --output "$out/predict-prefill-$gpu.json"
  run "predict-decode-$gpu" "$bin/roofline-advise" "$config" --glue eager --tp 2 --gpu "$gpu" --phase decode \
    --batch 8 --kv-len 2048 --format json --output "$out/predict-decode-$gpu.json"
done
step "the tool: the sharded step measured on both GPUs at once, all-reduces for real"
run devices-prefill "$bin/roofline-advise" "$config" --glue eager --tp 2 --gpu auto --batch 1 --seq-len 2048 \
  --measure --devices all --format json --output "$out/devices-prefill.json"
run devices-decode "$bin/roofline-advise" "$config" --glue eager --tp 2 --gpu auto --phase decode --batch 8 \
  --kv-len 2048 --measure --devices all --format json --output "$out/devices-decode.json"
# The step's weights are cold (more than L2 moves between two uses): what the model predicts and
# --measure times by default. Warm, for contrast: back-to-back calls on the same buffers.
run devices-decode-warm "$bin/roofline-advise" "$config" --glue eager --tp 2 --gpu auto --phase decode \
  --batch 8 --kv-len 2048 --measure --devices all --warm-l2 --format json \
  --output "$out/devices-decode-warm.json"
step "done"
# At most 8 files come back: everything in one archive beside the log.
tar -czf "$out/tp_check.tar.gz" -C "$out" --exclude tp_check.tar.gz --exclude log.txt . 2>> "$log"
find "$out" -mindepth 1 ! -name tp_check.tar.gz ! -name log.txt -delete 2>/dev/null
