#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# From a fresh clone: install what is missing, build the CLI (build/roofline-advise, with its GPU
# measurement plugin where a CUDA toolkit is found) and analyse the bundled AlexNet classifier.
# Tests and benchmarks are not built here: scripts/test.sh builds and runs them.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/build-env.sh
scripts/install-deps.sh
use_compiler_cache
stage "install what is missing"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DROOFLINE_BUILD_TESTS=OFF "${launcher[@]}"
cmake --build build -j"$(nproc)" --target roofline-advise # the plugin too: the CLI depends on it
stage "build the CLI"
build/roofline-advise examples/alexnet-classifier.yaml --gpu v100
print_stage_times
