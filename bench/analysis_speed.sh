#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# How fast an analysis runs (issue 14, part 4): times the CLI on flat networks of 5, 10,000 and
# 100,000 linear layers against the H100 datasheet, to JSON (--format json -o FILE) and as a
# table, and reports wall time, CPU time (user + system, every thread) and peak memory (median of
# RUNS runs by wall time); then the library's
# predictions per second (bench/analysis_speed.cpp). Needs no GPU; needs GNU time
# (Debian: apt-get install time).
#
# Two kinds of network: `varied`, widths drawn at random so that nearly every layer is a GEMM
# shape of its own (the worst case: every prediction and every batch search is new), and
# `repeating`, a transformer's four linear shapes over and over (as a deep network written out
# flat repeats its layers).
#
#   bench/analysis_speed.sh [BUILD_DIR]      # default: build; RUNS=3, LAYERS="5 10000 100000"
#
# Targets: 10,000 layers to JSON < 200 ms wall and < 0.25 s of CPU (issue 38), 100,000 < 2 s;
# ≥ 500,000 predictions/s on one core.
set -eu
cd "$(dirname "$0")/.."
. bench/common.sh

build=${1:-build}
advise=$build/roofline-advise
runs=${RUNS:-3}
layers=${LAYERS:-5 10000 100000}
if [ ! -x "$advise" ]; then
  echo "analysis_speed.sh: no $advise (cmake --build $build --target roofline-advise)" >&2
  exit 2
fi
if [ ! -x /usr/bin/time ]; then
  echo "analysis_speed.sh: needs GNU time as /usr/bin/time (Debian: apt-get install time)" >&2
  exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A flat network of $1 linear layers of kind $2 (varied or repeating), each one's input the
# previous one's output, written to $3. varied: widths drawn (seeded, the same on every machine)
# from the multiples of 64 up to 4096 and eight widths that break the 16-byte rule or fill tiles
# badly (1000, 50257, ...); repeating: GPT-2 small's QKV, projection and MLP shapes in turn.
# Batch 32, fp16.
generate() {
  awk -v n="$1" -v kind="$2" 'BEGIN {
    w = 0
    for (k = 1; k <= 64; k++) widths[w++] = 64 * k
    split("1000 1001 3000 50257 777 1023 2050 4100", odd, " ")
    for (i = 1; i <= 8; i++) widths[w++] = odd[i]
    split("768 2304 768 768 768 3072 3072 768", block, " ")
    x = 12345 # Park-Miller: exact in the doubles awk computes with
    print "name: flat-" kind "-" n
    print "description: " n " linear layers, " kind " sizes (bench/analysis_speed.sh)"
    print "precision: fp16"
    print "batch: 32"
    print "layers:"
    x = (x * 16807) % 2147483647; input = widths[x % w]
    for (i = 0; i < n; i++) {
      if (kind == "repeating") {
        j = (i % 4) * 2 + 1; input = block[j]; output = block[j + 1]
      } else {
        x = (x * 16807) % 2147483647; output = widths[x % w]
      }
      printf "  - {name: fc%d, type: linear, in: %d, out: %d}\n", i, input, output
      input = output
    }
  }' > "$3"
}

# Median wall time (s), its run's CPU time (s) and peak RSS (KB) of `$@` over $runs runs,
# standard output discarded.
measure() {
  i=0
  : > "$work/times"
  while [ "$i" -lt "$runs" ]; do
    /usr/bin/time -f '%e %U %S %M' -o "$work/time" "$@" > /dev/null
    cat "$work/time" >> "$work/times"
    i=$((i + 1))
  done
  sort -n "$work/times" |
    awk -v runs="$runs" 'NR == int((runs + 1) / 2) { printf "%s %.2f %s\n", $1, $2 + $3, $4 }'
}

echo "roofline-advise NETWORK --gpu h100 ($advise; median of $runs runs; $(nproc) cores)"
printf '%8s  %-10s %-26s %9s %9s %10s\n' layers sizes output wall CPU "max RSS"
for n in $layers; do
  for kind in varied repeating; do
    network=$work/flat-$kind-$n.yaml
    generate "$n" "$kind" "$network"
    set -- $(measure "$advise" "$network" --gpu h100 --format json -o "$work/x.json")
    printf '%8s  %-10s %-26s %7s s %7s s %7s MB\n' "$n" "$kind" "--format json -o x.json" "$1" \
      "$2" "$(($3 / 1024))"
    set -- $(measure "$advise" "$network" --gpu h100)
    printf '%8s  %-10s %-26s %7s s %7s s %7s MB\n' "$n" "$kind" "table (stdout)" "$1" "$2" \
      "$(($3 / 1024))"
  done
done
echo "targets: 10000 layers to JSON < 0.2 s wall, < 0.25 s CPU; 100000 < 2 s"

if [ -x "$build/analysis_speed" ]; then
  echo
  "$build/analysis_speed"
else
  echo
  echo "($build/analysis_speed not built: cmake --build $build --target analysis_speed)"
fi
