#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 39 part 4 on a GPU: `--measure` holds each op at the power limit through NVML (its
# sustained time and energy per call beside its burst time and the step's predicted energy), on
# ResNet-50 and a Llama-3-8B prefill (4 of its 32 blocks: the same ops); the GPU tests; and the
# same run with NVML absent, which must measure everything else and say why nothing was held.
#   here:  cmake --build build --target roofline-advise roofline_measure_layer gpu_tests,
#          bash bench/pack.sh build h200
#   there: device run, carry ["h200"], command "bash bench/held_check.sh"
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
source bench/common.sh
status=0
use_torch_cudnn
step "machine"
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv | tee "$out/gpu.txt"
step "GPU tests: the measurer's first (held ops)"
timeout -k 10 120 "$bin/gpu_tests" --no-colors --source-file='*/measure_test.cpp' \
  > "$out/gpu-measure.log" 2>&1 || status=1
tail -3 "$out/gpu-measure.log" | tee -a "$log"
mkdir -p "$out/held" "$out/inputs"
sed -e 's/"num_hidden_layers": 32/"num_hidden_layers": 4/' examples/configs/llama-3-8b.json \
  > "$out/inputs/llama-3-8b-4-blocks.json"
for file in examples/resnet50.yaml "$out/inputs/llama-3-8b-4-blocks.json"; do
  name=$(basename "${file%.*}")
  step "--measure, held at the power limit: $name"
  timeout -k 10 240 "$bin/roofline-advise" "$file" --measure --format json \
    > "$out/held/$name.json" 2> "$out/held/$name.err" || status=1
  python3 - "$out/held/$name.json" <<'PY' | tee -a "$log"
import json, sys
doc = json.load(open(sys.argv[1]))
held = [o for o in doc["ops"] if (o.get("measured") or {}).get("held")]
print(f"{len(held)} of {len(doc['ops'])} ops held; last notes: {doc.get('notes', [])[-2:]}")
for o in sorted(held, key=lambda o: -(o["measured"]["device_time_us"] or 0))[:12]:
    m, h = o["measured"], o["measured"]["held"]
    print(f"  {o['layer'][:28]:28} {o['pass'][:4]:4} burst {m['device_time_us'] or 0:9.1f} "
          f"held {h['time_us']:9.1f} pred {o['device_time_us']:9.1f} µs · held {h['energy_j']*1e3:9.3f} "
          f"pred {o['energy_j']*1e3:9.3f} mJ · {h['power_w']:4.0f} W {h['sm_clock_hz']/1e6:5.0f} MHz {h['throttle']}")
PY
done
step "--measure without NVML"
ROOFLINE_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 timeout -k 10 120 "$bin/roofline-advise" \
  examples/mlp-training.yaml --measure > "$out/held/no-nvml.txt" 2>&1 || status=1
grep -iE "held|power" "$out/held/no-nvml.txt" | head -5 | tee -a "$log"
step "GPU tests, all"
timeout -k 10 300 "$bin/gpu_tests" --no-colors > "$out/gpu-tests.log" 2>&1 || status=1
tail -3 "$out/gpu-tests.log" | tee -a "$log"
cd "$out" && tar czf held.tgz held && rm -rf held
exit $status
