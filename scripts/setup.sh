#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# From a fresh clone: install what is missing, build, and analyse the bundled AlexNet classifier.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
build/roofline-advise examples/alexnet-classifier.yaml --gpu v100
