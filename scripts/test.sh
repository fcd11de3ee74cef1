#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds everything (roofline::measure too, where a CUDA toolkit is found) and runs every test;
# GPU tests report "Not Run" on a machine without a GPU. Then proves that roofline::core and its
# tests build and pass with CUDA switched off.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DROOFLINE_BUILD_TESTS=ON
cmake --build build -j"$(nproc)"
ctest --test-dir build --output-on-failure -j"$(nproc)"
cmake -S . -B build-nocuda -DCMAKE_BUILD_TYPE=Release -DROOFLINE_BUILD_TESTS=ON -DROOFLINE_ENABLE_CUDA=OFF
cmake --build build-nocuda -j"$(nproc)"
ctest --test-dir build-nocuda --output-on-failure -j"$(nproc)" -L 'unit|cli'
