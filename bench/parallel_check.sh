#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Parallelism measured with PyTorch on a host of four GPUs (bench/parallel_check.py says what and
# how): NCCL collectives on 2 and 4 GPUs, a 1F1B pipeline step at PP = 2, an expert-parallel MoE
# layer at EP = 2 and 4. One torchrun launch a part, each under its own timeout, so that a hang
# loses only that part; every launch appends its run to $OUT/parallel/parallel.json as it goes.
# About 2-3 minutes; at most 7 if every part runs into its timeout.
#   there: device run --kind nvidia-h200-x4, command "bash bench/parallel_check.sh"
#   (timeouts: PARALLEL_TIMEOUT_COLLECTIVES, _PP, _MOE seconds; PARALLEL_ARGS adds arguments,
#    e.g. "--quick" for a smoke test)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
export OUT="${OUT:-/tmp/roofline-out}/parallel"
source bench/common.sh # $out (= $OUT), $log, step(), NVLink multicast off
status=0
outputs=()
read -ra extra <<< "${PARALLEL_ARGS:-}"
if command -v torchrun > /dev/null; then launcher=(torchrun); else launcher=(python3 -m torch.distributed.run); fi

part() { # part NAME SECONDS GPUS ARGS...: one launch, its output to NAME.txt, exit status to the log
  local name=$1 limit=$2 gpus=$3 start rc
  shift 3
  start=$(date +%s%N)
  outputs+=("$name.txt")
  # timeout signals the launcher's whole process group (its workers too); KILL 15 s later.
  timeout -k 15 "$limit" "${launcher[@]}" --standalone --nproc_per_node "$gpus" \
    bench/parallel_check.py --out "$out" "${extra[@]}" "$@" > "$out/$name.txt" 2>&1
  rc=$?
  echo "$name: exit $rc$([ $rc -eq 124 ] && echo ' (timed out)'), $(( ($(date +%s%N) - start) / 1000000 )) ms" \
    | tee -a "$log"
  if [ $rc -ne 0 ]; then
    status=1
    tail -n 25 "$out/$name.txt" | sed "s/^/  $name| /" >> "$log"
  fi
  return 0
}

step "machine"
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm --format=csv 2>&1 | tee -a "$log"
nvidia-smi topo -m >> "$log" 2>&1
python3 -c 'import torch
try: nccl = torch.cuda.nccl.version()
except Exception as e: nccl = f"unknown ({e})"
print("torch", torch.__version__, "CUDA", torch.version.cuda, "NCCL", nccl, "GPUs", torch.cuda.device_count())' \
  2>&1 | tee -a "$log"
gpus=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU')
echo "launcher: ${launcher[*]}; GPUs: $gpus" | tee -a "$log"

step "collectives, 2 GPUs"
part collectives-2 "${PARALLEL_TIMEOUT_COLLECTIVES:-75}" 2 --part collectives
if [ "$gpus" -ge 4 ]; then
  step "collectives, 4 GPUs"
  part collectives-4 "${PARALLEL_TIMEOUT_COLLECTIVES:-75}" 4 --part collectives
fi
step "pipeline parallel: 1F1B, PP = 2"
part pp-2 "${PARALLEL_TIMEOUT_PP:-120}" 2 --part pp
step "expert parallel MoE, EP = 2"
part moe-2 "${PARALLEL_TIMEOUT_MOE:-75}" 2 --part moe
if [ "$gpus" -ge 4 ]; then
  step "expert parallel MoE, EP = 4"
  part moe-4 "${PARALLEL_TIMEOUT_MOE:-75}" 4 --part moe
else
  echo "fewer than 4 GPUs ($gpus): the 4-GPU parts skipped" | tee -a "$log"
  status=1
fi

step "summary"
python3 bench/parallel_check.py --summary --out "$out" >> "$log" 2>&1 || status=1
step "done"
# Few files come back: parallel.json and the log beside one archive of each launch's output.
(cd "$out" && tar -czf parallel-logs.tar.gz "${outputs[@]}" && rm -f "${outputs[@]}") 2>> "$log"
exit $status
