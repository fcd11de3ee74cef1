#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds everything (roofline::measure too, where a CUDA toolkit is found) and runs every test:
# unit, cli, gpu, and consumer (an outside project using the installed package and the source
# tree); GPU tests report "Not Run" on a machine without a GPU. Then proves that roofline::core,
# its tests and its package build and pass with CUDA switched off, and runs the CPU tests under
# ASan and UBSan.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --test
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DROOFLINE_BUILD_TESTS=ON
cmake --build build -j"$(nproc)"
ctest --test-dir build --output-on-failure -j"$(nproc)"
cmake -S . -B build-nocuda -DCMAKE_BUILD_TYPE=Release -DROOFLINE_BUILD_TESTS=ON -DROOFLINE_ENABLE_CUDA=OFF
cmake --build build-nocuda -j"$(nproc)"
# The package without roofline::measure, too (the add_subdirectory consumer builds without CUDA
# in either build, so it runs once, above).
ctest --test-dir build-nocuda --output-on-failure -j"$(nproc)" -L 'unit|cli|consumer' -E add_subdirectory
# The CPU tests again under AddressSanitizer and UndefinedBehaviorSanitizer, where any undefined
# behaviour stops the program (a double cast to an integer too small for it included: GCC's
# -fsanitize=undefined leaves float-cast-overflow out): the core, the CLI and the fuzz corpora
# (tests/fuzz), CUDA off, lightly optimised.
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
  -DROOFLINE_SANITIZE=address,undefined,float-cast-overflow -DROOFLINE_BUILD_TESTS=ON \
  -DROOFLINE_ENABLE_CUDA=OFF -DROOFLINE_BUILD_BENCH=OFF -DROOFLINE_INSTALL=OFF
cmake --build build-asan -j"$(nproc)"
UBSAN_OPTIONS=print_stacktrace=1 ctest --test-dir build-asan --output-on-failure -j"$(nproc)" -L 'unit|cli'
