#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# --measure beyond GEMMs on the GPU machine (issue 28 part 5): the gpu-labelled tests, then
# `roofline-advise --measure` on ResNet-50 (convolutions through cuDNN, batchnorm, relu, pools
# through our kernels), BERT (layernorm, gelu, softmax), and Llama-2-7B prefill with fused
# attention (skipped with its reason until cuDNN's graph API is built), logs and JSON under $OUT.
#   here:  cmake -S . -B build-h200 -DCMAKE_BUILD_TYPE=Release -DROOFLINE_STATIC_YAML=ON \
#            -DROOFLINE_BUILD_TESTS=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
#          && cmake --build build-h200 -j2 --target roofline-advise roofline_measure_layer gpu_tests \
#          && bash bench/pack.sh build-h200 h200
#   there: device run, carry ["h200"], command "bash bench/measure_check.sh"
# cuDNN comes from PyTorch's pip wheel (nvidia-cudnn-cu13) when the loader's own search finds
# none: ROOFLINE_CUDNN_LIBRARY, if set, names the file.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
source bench/common.sh
status=0

use_torch_cudnn
echo "ROOFLINE_CUDNN_LIBRARY=${ROOFLINE_CUDNN_LIBRARY:-(loader search)}" | tee -a "$log"

step "GPU tests (label gpu): the new ops first"
"$bin/gpu_tests" --no-colors --source-file='*/measure_ops_test.cpp' > "$out/gpu-measure-ops.log" 2>&1 \
  || status=1
tail -4 "$out/gpu-measure-ops.log" | tee -a "$log"
"$bin/gpu_tests" --no-colors > "$out/gpu-tests.log" 2>&1 || status=1
tail -4 "$out/gpu-tests.log" | tee -a "$log"

step "--measure on networks with convolutions, norms, activations, pools and attention"
mkdir -p "$out/measure"
# Llama-2-7B prefill with fused attention, 2 of its 32 blocks: the same ops, a shorter run.
sed -e 's/causal: true}/causal: true, fused: true}/' -e 's/repeat: 32/repeat: 2/' \
  examples/llama2-7b-prefill.yaml > "$out/measure/llama2-7b-prefill-fused.yaml"
for file in examples/resnet50.yaml examples/bert-base.yaml "$out/measure/llama2-7b-prefill-fused.yaml"; do
  example=$(basename "$file" .yaml)
  start=$(date +%s%N)
  "$bin/roofline-advise" "$file" --measure --format json \
    --output "$out/measure/$example.json" > "$out/measure/$example.txt" 2>&1 || status=1
  end=$(date +%s%N)
  echo "$example: --measure took $(( (end - start) / 1000000 )) ms" | tee -a "$log"
  # What came back per engine and status: "cudnn measured 53", "roofline-kernels skipped 2", …
  python3 - "$out/measure/$example.json" <<'PY' | tee -a "$log"
import collections, json, sys
try:
    doc = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"  no JSON report: {e}"); sys.exit(0)
seen, reasons = collections.Counter(), collections.Counter()
for op in doc["ops"]:
    m = op.get("measured")
    if m:
        seen[(m["engine"], m["status"])] += 1
        if m["status"] != "measured" or m["note"]:
            reasons[f'{op["kind"]}: {m["status"]}: {m["note"][:160]}'] += 1
for (engine, status), n in sorted(seen.items()):
    print(f"  {engine} {status} {n}")
for reason, n in reasons.most_common(8):
    print(f"  {n} × {reason}")
PY
done
tar -C "$out" -czf /tmp/measure-check.tar.gz measure && mv /tmp/measure-check.tar.gz "$out/measure.tar.gz"
rm -rf "$out/measure" "$out/cache"
exit $status
