#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copies the binaries a GPU call needs from a build into a folder small enough to carry:
#   bash bench/pack.sh [BUILD [DEST]]     default: build-h200 into h200/
# The tool, its measurement layer and the GPU tests, plus the sweep and probe programs where the
# build made them.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
build=${1:-build-h200}
dest=${2:-h200}
rm -rf "$dest" && mkdir -p "$dest"
cp "$build/roofline-advise" "$build/libroofline_measure_layer.so" "$build/tests/gpu/gpu_tests" "$dest/"
for program in gemm_once gemm_sweep allreduce_probe; do
  if [ -f "$build/bench/$program" ]; then
    cp "$build/bench/$program" "$dest/"
  else # the scripts that run it fail on the GPU machine: say so here
    echo "pack.sh: $program not built in $build, not packed" >&2
  fi
done
# NLopt (calibrate's optimizer), fmt and libyaml are Debian libraries the GPU machine may lack:
# they travel along.
cp -L /usr/lib/x86_64-linux-gnu/libnlopt.so.0 /usr/lib/x86_64-linux-gnu/libfmt.so.9 \
  /usr/lib/x86_64-linux-gnu/libyaml-0.so.2 "$dest/"
du -sh "$dest"
