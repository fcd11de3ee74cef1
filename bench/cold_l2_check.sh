#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The TP = 2 Llama-2-7B step's GEMMs measured on both GPUs at once (--devices all) with operands
# warm in L2 (back to back on the same buffers) and cold (--cold-l2), prefill cold too: what a
# real step, whose layers each bring other weights, sees. Run as bench/tp_check.sh is (h200/
# carried, on nvidia-h200-x2); JSON under $OUT.
set -u
cd "$(dirname "$0")/.." || exit 2
source bench/common.sh
use_torch_nccl
c=examples/configs/llama-2-7b.json
for l2 in warm cold; do
  flag=""; [ $l2 = cold ] && flag="--cold-l2"
  h200/roofline-advise $c --glue eager --tp 2 --gpu h200 --phase decode --batch 8 --kv-len 2048 --measure --devices all $flag --format json --output $OUT/decode-$l2.json > /dev/null 2> $OUT/decode-$l2.err
  echo "decode $l2: exit $?"
done
h200/roofline-advise $c --glue eager --tp 2 --gpu h200 --batch 1 --seq-len 2048 --measure --devices all --cold-l2 --format json --output $OUT/prefill-cold.json > /dev/null 2> $OUT/prefill-cold.err
echo "prefill cold: exit $?"
python3 - <<'PY'
import json, os
out=os.environ["OUT"]
for name in ("decode-warm","decode-cold","prefill-cold"):
    d=json.load(open(f"{out}/{name}.json"))
    print(name, [(round(s["gemm_time_us"]),round(s["predicted_gemm_time_us"]),round(s["all_reduce_time_us"]),round(s["step_time_us"])) for s in d["gpu_steps"]])
PY
