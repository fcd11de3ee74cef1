# SPDX-License-Identifier: Apache-2.0
# What every bench script run on a GPU machine sets up, sourced from the repository root: the
# carried binaries ($BIN, default h200/: bench/pack.sh) on the loader's path, $OUT (default
# /tmp/roofline-out) made, the tool's cache inside it, NVLink multicast off (KINDS.md: harmless on
# one GPU), $log, and step() to head each part of it.
bin=${BIN:-h200}
export LD_LIBRARY_PATH="$bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" # libnlopt, libfmt, libyaml
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
out=${OUT:-/tmp/roofline-out}
mkdir -p "$out"
export ROOFLINE_CACHE_DIR="$out/cache"
log="$out/log.txt"
step() { echo "=== $* ($(date -u +%H:%M:%S))" | tee -a "$log"; }

# The cuDNN that PyTorch loads (its pip wheel), for the tool too, unless one is chosen already.
use_torch_cudnn() {
  local wheel
  if [ -n "${ROOFLINE_CUDNN_LIBRARY:-}" ]; then return; fi
  wheel=$(python3 -c 'import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], "lib", "libcudnn.so.9"))' 2>/dev/null)
  if [ -f "$wheel" ]; then export ROOFLINE_CUDNN_LIBRARY="$wheel"; fi
}

# The NCCL that PyTorch loads (its pip wheel), for the tool too: both then run one library.
use_torch_nccl() {
  local wheel
  wheel=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null)
  if [ -f "$wheel" ]; then export ROOFLINE_NCCL_LIBRARY="$wheel"; fi
}
