#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copies the binaries the H200 run needs from build-h200/ into h200/ (small enough to carry).
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf h200 && mkdir -p h200
cp build-h200/roofline-advise build-h200/libroofline_measure_layer.so h200/
cp build-h200/tests/gpu/gpu_tests h200/
cp build-h200/src/cuda/gemm_once build-h200/src/cuda/gemm_sweep h200/
# NLopt (calibrate's optimizer) and fmt are Debian libraries the GPU machine may lack: they travel along.
cp -L /usr/lib/x86_64-linux-gnu/libnlopt.so.0 /usr/lib/x86_64-linux-gnu/libfmt.so.9 h200/
du -sh h200
