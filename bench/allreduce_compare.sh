#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 17's all-reduce comparison on a host of two GPUs, in one call: ROUNDS (3) interleaved
# rounds of allreduce_probe in its three modes (its default and what `device --measure` caches:
# back-to-back grouped calls issued eagerly from one thread; --graph: the same calls captured
# into a CUDA graph per GPU and replayed; --threads: eager calls from one thread per GPU) and of
# PyTorch (bench/allreduce_check.py: one process per GPU, eager and
# graph-replayed); then, per size, each method's median over the rounds, its spread (min..max)
# across them, and each probe mode's difference from PyTorch's graph and eager medians. Under
# $OUT: summary.txt (also printed), log.txt and allreduce_compare.tar.gz (every round's JSON and
# output; the log has each run's wall time).
#   here:  cmake --build build-h200 -j2 --target allreduce_probe && mkdir -p h200 &&
#          cp build-h200/bench/allreduce_probe h200/
#   there: device run --kind nvidia-h200-x2, carry ["h200"], command
#          "ROUNDS=2 bash bench/allreduce_compare.sh"
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
source bench/common.sh
use_torch_nccl # the probe and PyTorch run one library
rounds=${ROUNDS:-3}
data="$out/rounds"
mkdir -p "$data"
failed=0
began=$(date +%s)
run() { # run NAME COMMAND...: output to rounds/NAME.txt, exit status and wall time to the log
  local name=$1 start rc
  shift
  start=$(date +%s%N)
  timeout 300 "$@" > "$data/$name.txt" 2>&1
  rc=$?
  [ "$rc" -eq 0 ] || failed=1
  echo "$name: exit $rc, $(( ($(date +%s%N) - start) / 1000000 )) ms" | tee -a "$log"
}

step "machine"
echo "NCCL for the probe: ${ROOFLINE_NCCL_LIBRARY:-found on the loader path}" | tee -a "$log"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv 2>&1 | tee -a "$log"
nvidia-smi topo -m >> "$log" 2>&1

for r in $(seq 1 "$rounds"); do
  step "round $r of $rounds"
  run "r$r-replay" "$bin/allreduce_probe" --graph "$data/r$r-replay.json"
  run "r$r-single" "$bin/allreduce_probe" "$data/r$r-single.json"
  run "r$r-threads" "$bin/allreduce_probe" --threads "$data/r$r-threads.json"
  run "r$r-torch" python3 bench/allreduce_check.py "$data/r$r-torch.json"
done

step "summary ($(( $(date +%s) - began )) s so far)"
python3 - "$data" <<'EOF' 2>&1 | tee "$out/summary.txt"
import glob
import json
import os
import statistics
import sys

METHODS = [("replay", "probe, graph-replayed"), ("single", "probe, eager, one thread"),
           ("threads", "probe, eager, thread per GPU"), ("graph", "PyTorch, graph"),
           ("eager", "PyTorch, eager")]
times = {method: {} for method, _ in METHODS}  # method -> bytes -> seconds, one per round


def add(method, samples):
    for sample in samples:
        times[method].setdefault(sample["bytes"], []).append(sample["time_s"])


for path in sorted(glob.glob(os.path.join(sys.argv[1], "r*-*.json"))):
    name = os.path.basename(path)[:-len(".json")]
    kind = name.split("-", 1)[1]
    try:
        with open(path, encoding="utf-8") as f:
            table = json.load(f)
    except (OSError, ValueError) as error:
        print(f"{name}: not read ({error})")
        continue
    print(f"{name}: {table.get('library', '?')}; {table.get('origin', '?')}")
    if kind == "torch":
        add("eager", table.get("samples", []))
        add("graph", table.get("graph_samples", []))
    elif kind in times:
        add(kind, table.get("samples", []))


def size_text(size):
    for shift, unit in ((30, "GiB"), (20, "MiB"), (10, "KiB")):
        if size % (1 << shift) == 0:
            return f"{size >> shift} {unit}"
    return f"{size} B"


def cell(values):
    if not values:
        return "—"
    return (f"{statistics.median(values) * 1e6:.1f} "
            f"({min(values) * 1e6:.1f}..{max(values) * 1e6:.1f})")


def difference(probe, torch):
    if not probe or not torch:
        return None
    return (statistics.median(probe) / statistics.median(torch) - 1) * 100


sizes = sorted(set().union(*(t.keys() for t in times.values())))
comparisons = [(p, t) for p in ("replay", "single", "threads") for t in ("graph", "eager")]
short = {"replay": "graph-replayed", "single": "one thread", "threads": "thread per GPU"}
print()
print("µs per all-reduce: the median over rounds (min..max across rounds); the differences "
      "compare medians")
print("| bytes per GPU | " + " | ".join(label for _, label in METHODS) + " | "
      + " | ".join(f"{short[p]} vs PyTorch {t}" for p, t in comparisons) + " |")
print("|---|" + "---:|" * (len(METHODS) + len(comparisons)))
within = {c: 0 for c in comparisons}
for size in sizes:
    row = [cell(times[m].get(size, [])) for m, _ in METHODS]
    for p, t in comparisons:
        d = difference(times[p].get(size, []), times[t].get(size, []))
        row.append("—" if d is None else f"{d:+.1f}%")
        within[(p, t)] += d is not None and abs(d) <= 10
    print(f"| {size_text(size)} | " + " | ".join(row) + " |")
print()
print("rounds read: " + ", ".join(
    f"{m} {max((len(v) for v in times[m].values()), default=0)}" for m, _ in METHODS))
print("sizes within 10% (of " + str(len(sizes)) + "): " + ", ".join(
    f"{short[p]} vs PyTorch {t} {n}" for (p, t), n in within.items()))
EOF

step "done ($(( $(date +%s) - began )) s)"
# At most 8 files come back: the rounds in one archive, beside the summary and the log.
tar -czf "$out/allreduce_compare.tar.gz" -C "$out" rounds 2>> "$log" && rm -rf "$data"
exit "$failed"
