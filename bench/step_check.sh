#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/step_check.py's steps, each in a process of its own (a device-side assert in one must not
# end the others), merged into $OUT/steps.json, $OUT/steps.txt and their logs $OUT/steps.log.
#   there: device run, command "bash bench/step_check.sh"
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
source bench/common.sh
steps=("Llama-2-7B prefill 1x2048" "prefill 4x1024" "decode b1 kv" "decode b32" "GQA prefill" "GQA decode"
       "BERT" "NCHW" "channels_last" "GPT-2")
for i in "${!steps[@]}"; do
  timeout -k 10 100 python3 bench/step_check.py --steps "${steps[$i]}" --budget-s 90 \
    --out "$out/part$i" > "$out/part$i.log" 2>&1
  tail -3 "$out/part$i.log"
done
python3 - "$out" <<'PY'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
merged, text = [], []
for part in sorted(out.glob("part*")):
    if part.is_dir():
        f = part / "steps.json"
        if f.exists():
            merged += json.loads(f.read_text())
        t = part / "steps.txt"
        if t.exists():
            text.append(t.read_text())
(out / "steps.json").write_text(json.dumps(merged, indent=1))
(out / "steps.txt").write_text("\n".join(text))
logs = sorted(out.glob("part*.log"))
(out / "steps.log").write_text("".join(f"== {f.name}\n{f.read_text()[-20000:]}\n" for f in logs))
for part in out.glob("part*"):
    if part.is_dir():
        for f in part.iterdir():
            f.unlink()
        part.rmdir()
    else:
        part.unlink()
PY
