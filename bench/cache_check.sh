#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The all-reduce table's cache on a host of two GPUs: measured and saved once, read back the
# second time, and used by --gpu auto for a TP = 2 config. Run as bench/tp_check.sh is (h200/
# carried, on nvidia-h200-x2); logs under $OUT.
set -u
cd "$(dirname "$0")/.." || exit 2
source bench/common.sh
h200/roofline-advise device --measure > "$OUT/first.txt" 2>&1; echo "first: exit $?"
h200/roofline-advise device --measure > "$OUT/second.txt" 2>&1; echo "second: exit $?"
grep "^all-reduce:" "$OUT/first.txt" "$OUT/second.txt" | cut -c1-220
ls "$OUT/cache"
h200/roofline-advise examples/configs/llama-2-7b.json --tp 2 --gpu auto --phase decode --batch 8 \
  --format json 2>/dev/null | python3 -c "
import json, sys
d = json.load(sys.stdin)
print([o['factors'] for o in d['ops'] if o['kind'] == 'all_reduce'][0])"
CUDA_VISIBLE_DEVICES=0 h200/roofline-advise device > "$OUT/one.txt" 2>&1; echo "one GPU: exit $?"
grep -c "^all-reduce" "$OUT/one.txt"
