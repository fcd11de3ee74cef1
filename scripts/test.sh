#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds everything (roofline::measure too, where a CUDA toolkit is found) and runs every test:
# unit, cli, gpu, and consumer (an outside project using the installed package and the source
# tree); GPU tests report "Not Run" on a machine without a GPU. Then the CPU tests under ASan and
# UBSan with CUDA switched off (which also proves roofline::core and its tests build and pass
# without CUDA), and the installed package without roofline::measure. Each build goes through
# ccache where it is installed; the time each stage took is printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/build-env.sh
scripts/install-deps.sh --test
use_compiler_cache
stage "install what is missing"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DROOFLINE_BUILD_TESTS=ON "${launcher[@]}"
cmake --build build -j"$(nproc)"
stage "build: everything, CUDA where found"
ctest --test-dir build --output-on-failure -j"$(nproc)"
stage "test: unit, cli, gpu, consumer"
# The CPU tests again under AddressSanitizer and UndefinedBehaviorSanitizer, where any undefined
# behaviour stops the program (a double cast to an integer too small for it included: GCC's
# -fsanitize=undefined leaves float-cast-overflow out): the core, the CLI and the fuzz corpora
# (tests/fuzz), CUDA off, lightly optimised.
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
  -DROOFLINE_SANITIZE=address,undefined,float-cast-overflow -DROOFLINE_BUILD_TESTS=ON \
  -DROOFLINE_ENABLE_CUDA=OFF -DROOFLINE_BUILD_BENCH=OFF -DROOFLINE_INSTALL=OFF -DROOFLINE_PYTHON=OFF \
  "${launcher[@]}"
cmake --build build-asan -j"$(nproc)"
stage "build: sanitizers, CUDA off"
UBSAN_OPTIONS=print_stacktrace=1 ctest --test-dir build-asan --output-on-failure -j"$(nproc)" -L 'unit|cli'
stage "test: unit and cli under the sanitizers"
# The package without roofline::measure: the library and the CLI alone (their tests ran above,
# CUDA off), installed and used from outside (the add_subdirectory consumer builds without CUDA
# in either build, so it ran once, above).
cmake -S . -B build-nocuda -DCMAKE_BUILD_TYPE=Release -DROOFLINE_BUILD_TESTS=ON \
  -DROOFLINE_ENABLE_CUDA=OFF -DROOFLINE_BUILD_BENCH=OFF "${launcher[@]}"
cmake --build build-nocuda -j"$(nproc)" --target roofline_core roofline-advise
ctest --test-dir build-nocuda --output-on-failure -j"$(nproc)" -L consumer -E add_subdirectory
stage "the package without CUDA: build and consumer tests"
print_stage_times
