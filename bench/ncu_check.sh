#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Cross-checks our CUPTI counters against Nsight Compute on the same GEMMs (issue 4): for each shape,
# ncu profiles one cuBLASLt call (bench/gemm_once, NVTX range "measured"), and `roofline-advise gemm
# ... --measure --cold-l2` reads the same call through our counter session (ncu flushes the caches before
# each kernel by default; --cold-l2 gives our call operands that are not in L2). Prints both, and ours/ncu.
#   BIN=h200 bash bench/ncu_check.sh > ncu-check.txt
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
source bench/common.sh
ncu=${NCU:-ncu}
# WARM=1: compare warm caches instead (ncu --cache-control none, ours without --cold-l2).
if [ "${WARM:-0}" = 1 ]; then ncu_cache=(--cache-control none); ours_cache=(); else ncu_cache=(); ours_cache=(--cold-l2); fi
shapes=("4096 4096 4096 fp16" "2048 33708 1024 fp16" "2048 33712 1024 fp16" "1 4096 4096 fp16"
        "512 4096 1024 bf16" "8192 8192 1024 tf32" "128 128 131072 fp16")
printf "%-24s %14s %14s %8s %14s %14s %8s %12s %12s %8s\n" shape ncu_read_B ours_read_B ratio ncu_write_B \
  ours_write_B ratio ncu_us ours_us ratio
work=$(mktemp -d)
for shape in "${shapes[@]}"; do
  set -- $shape
  "$ncu" --clock-control none "${ncu_cache[@]}" --nvtx --nvtx-include "measured/" --csv --metrics \
    dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum "$bin/gemm_once" "$1" "$2" "$3" "$4" \
    > "$work/ncu.csv" 2> "$work/ncu.err" || { echo "$shape: ncu failed"; cat "$work/ncu.err"; continue; }
  "$bin/roofline-advise" gemm "$1" "$2" "$3" --precision "$4" --gpu h200 --measure "${ours_cache[@]}" --format json \
    > "$work/ours.json" 2> "$work/ours.err" || { echo "$shape: roofline-advise failed"; cat "$work/ours.err"; continue; }
  python3 - "$shape" "$work/ncu.csv" "$work/ours.json" <<'PY'
import csv, json, sys
rows = [r for r in csv.reader(open(sys.argv[2])) if len(r) > 5]
header, rows = rows[0], rows[1:]
name, value, unit = header.index("Metric Name"), header.index("Metric Value"), header.index("Metric Unit")
scale = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9,
         "nsecond": 1e-9, "usecond": 1e-6, "msecond": 1e-3, "ns": 1e-9, "us": 1e-6, "ms": 1e-3}
total = {}
for r in rows:
    if r[unit] not in scale:
        sys.exit("unknown ncu unit %r for %s" % (r[unit], r[name]))
    total[r[name]] = total.get(r[name], 0) + float(r[value].replace(",", "")) * scale[r[unit]]
m = json.load(open(sys.argv[3]))["ops"][0]["measured"]
c = m["counters"] or {}
def ratio(a, b): return b / a if a else float("nan")
ncu_r, ncu_w, ncu_t = total.get("dram__bytes_read.sum", 0), total.get("dram__bytes_write.sum", 0), total.get("gpu__time_duration.sum", 0)
our_r, our_w, our_t = c.get("dram_read_bytes", 0), c.get("dram_write_bytes", 0), c.get("kernel_time_us", 0) * 1e-6
print("%-24s %14.0f %14.0f %8.3f %14.0f %14.0f %8.3f %12.2f %12.2f %8.3f" % (sys.argv[1], ncu_r, our_r, ratio(ncu_r, our_r),
      ncu_w, our_w, ratio(ncu_w, our_w), ncu_t * 1e6, our_t * 1e6, ratio(ncu_t, our_t)))
PY
done
