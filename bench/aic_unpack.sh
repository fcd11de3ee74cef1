#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Decompresses ../shared/data/aic's tables (third-party: NVIDIA AIConfigurator's TensorRT-LLM
# timings; see its README) into a folder the fitting benches read plain CSV from.
#   bench/aic_unpack.sh [DEST]   (default: build-rel/aic; prints DEST)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
src=${AIC_DATA:-../shared/data/aic}
dest=${1:-build-rel/aic}
mkdir -p "$dest"
for f in "$src"/*.csv.gz; do
  out="$dest/$(basename "${f%.gz}")"
  [ "$out" -nt "$f" ] || gzip -dc "$f" > "$out"
done
echo "$dest"
