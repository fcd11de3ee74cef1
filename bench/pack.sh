#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copies the binaries the H200 run needs from build-h200/ into h200/ (small enough to carry).
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf h200 && mkdir -p h200
cp build-h200/roofline-advise build-h200/libroofline_measure_layer.so h200/
cp build-h200/tests/gpu/gpu_*_test h200/ 2>/dev/null || true
cp build-h200/src/cuda/gemm_once build-h200/src/cuda/gemm_sweep h200/
# NLopt (calibrate's optimizer) is a Debian library the GPU machine lacks: it travels along.
cp -L /usr/lib/x86_64-linux-gnu/libnlopt.so.0 h200/
du -sh h200
