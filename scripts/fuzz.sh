#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fuzzes roofline-advise's inputs with libFuzzer (tests/fuzz/README.md):
#   scripts/fuzz.sh [TARGET|all] [MINUTES]     targets: network spec config cli serving cache; default all, 10
# Builds the targets with clang under ASan and UBSan (ROOFLINE_FUZZ=ON) in build-fuzz/, then runs
# each for MINUTES (one after the other for `all`) in libFuzzer's fork mode, as many jobs at once
# as the machine has cores, going on past crashes, timeouts and out-of-memory inputs. Each
# target's corpus grows in fuzz-findings/TARGET/corpus (seeded from tests/fuzz/corpus/TARGET);
# what crashed, hung or ran out of memory lands in fuzz-findings/TARGET/crashes. Prints each
# target's final coverage (cov: edges, ft: features) and its new findings.
# Environment: ROOFLINE_FUZZ_BUILD (build folder), ROOFLINE_FUZZ_FINDINGS (findings folder),
# ROOFLINE_FUZZ_JOBS (jobs at once; default: the cores), ROOFLINE_FUZZ_CXX (default clang++).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
all_targets=(network spec config cli serving cache)
target=${1:-all}
minutes=${2:-10}
if [ "$target" = all ]; then
  targets=("${all_targets[@]}")
elif [[ " ${all_targets[*]} " == *" $target "* ]]; then
  targets=("$target")
else
  echo "usage: scripts/fuzz.sh [network|spec|config|cli|serving|cache|all] [MINUTES]" >&2
  exit 2
fi
if ! [[ "$minutes" =~ ^[0-9]+$ ]] || [ "$minutes" -eq 0 ]; then
  echo "fuzz.sh: MINUTES must be a positive whole number, got '$minutes'" >&2
  exit 2
fi
build=$(realpath -m "${ROOFLINE_FUZZ_BUILD:-build-fuzz}")
findings=$(realpath -m "${ROOFLINE_FUZZ_FINDINGS:-fuzz-findings}")
jobs=${ROOFLINE_FUZZ_JOBS:-$(nproc)}

cmake -S . -B "$build" -DCMAKE_CXX_COMPILER="${ROOFLINE_FUZZ_CXX:-clang++}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DROOFLINE_FUZZ=ON -DROOFLINE_ENABLE_CUDA=OFF -DROOFLINE_BUILD_TESTS=OFF \
  -DROOFLINE_BUILD_BENCH=OFF -DROOFLINE_INSTALL=OFF > /dev/null
cmake --build "$build" -j"$(nproc)" --target "${targets[@]/#/fuzz_}"

# The longest input each target is given (the CLI's are argument lists).
declare -A max_len=([network]=8192 [spec]=4096 [config]=2048 [cli]=512 [serving]=512 [cache]=16384)
summary=()
for t in "${targets[@]}"; do
  corpus=$findings/$t/corpus
  crashes=$findings/$t/crashes
  log=$findings/$t/fuzz.log
  mkdir -p "$corpus" "$crashes"
  cp -n "$root/tests/fuzz/corpus/$t"/* "$corpus"/
  touch "$findings/$t/started"
  echo "fuzzing $t for $minutes min, $jobs jobs at once (log: $log)"
  # Paths absolute: the cli target runs the CLI in a scratch folder.
  (cd "$findings/$t" && "$build/tests/fuzz/fuzz_$t" -fork="$jobs" -ignore_crashes=1 \
    -ignore_timeouts=1 -ignore_ooms=1 -max_total_time=$((minutes * 60)) -timeout=10 \
    -rss_limit_mb=2048 -max_len="${max_len[$t]}" -print_funcs=0 -dict="$root/tests/fuzz/$t.dict" -artifact_prefix="$crashes/" \
    "$corpus") > "$log" 2>&1 || true
  stats=$(grep -oE '#[0-9]+: +cov: .*' "$log" | tail -1 || true)
  found=$(find "$crashes" -type f -newer "$findings/$t/started" | wc -l)
  summary+=("$t: $minutes min, ${stats:-no coverage line in $log}; new findings: $found")
done
echo
printf '%s\n' "${summary[@]}"
for t in "${targets[@]}"; do
  if [ -n "$(ls -A "$findings/$t/crashes")" ]; then
    echo "findings of $t (reproduce: $build/tests/fuzz/fuzz_$t FILE):"
    find "$findings/$t/crashes" -type f | sort | sed "s|^|  |"
  fi
done
