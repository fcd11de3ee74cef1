// SPDX-License-Identifier: Apache-2.0
#pragma once

// Host entry points of our CUDA kernels (the .cu files beside this). Each launcher checks its
// arguments, launches asynchronously on `stream` and returns the launch's status; the work a launch
// does (bytes, FLOPs) is returned by the launcher so that it is computed in one place.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace roofline::kernels {

enum class element_type { f64, f32, f16, bf16, e4m3, i8, i32 };

std::size_t element_size(element_type type);

/// Fills `count` elements with uniform random values in [-scale, scale] (integers: [-4, 4]), from a
/// counter-based hash of (seed, index): reproducible, never zeros everywhere.
cudaError_t fill_random(void *data, std::size_t count, element_type type, std::uint64_t seed,
                        float scale, cudaStream_t stream);

/// Fills `count` elements with `value` (used to poison outputs before a correctness check).
cudaError_t fill_constant(void *data, std::size_t count, element_type type, double value,
                          cudaStream_t stream);

/// How a streaming kernel is launched. The best shape differs between GPUs and access patterns,
/// so the probes time every candidate and keep the fastest.
struct stream_config {
  int unroll = 4;        ///< 16-byte accesses in flight per thread: 1, 2, 4 or 8
  int threads = 256;     ///< per block
  int blocks_per_sm = 8; ///< a grid-stride (persistent) grid; 0: one pass, one block per tile
  bool streaming = true; ///< evict-first cache hints (ld.global.cs / st.global.cs)
};

/// The launch shapes the probes try.
const stream_config *stream_configs(std::size_t *count);

/// Streaming kernels over `bytes` (a multiple of 16), coalesced 16-byte accesses. `sink` receives
/// a value no compiler can predict, so the loads are not removed.
cudaError_t stream_read(const void *data, std::size_t bytes, unsigned *sink, int sm_count,
                        const stream_config &config, cudaStream_t stream);
cudaError_t stream_write(void *data, std::size_t bytes, int sm_count, const stream_config &config,
                         cudaStream_t stream);
cudaError_t stream_copy(void *destination, const void *source, std::size_t bytes, int sm_count,
                        const stream_config &config, cudaStream_t stream);

/// Reads a buffer that fits in L2 `passes` times with L2-only loads: bytes moved = passes × bytes.
/// (`config.streaming` is ignored: the loads must stay in L2.)
cudaError_t l2_read(const void *data, std::size_t bytes, int passes, unsigned *sink, int sm_count,
                    const stream_config &config, cudaStream_t stream);

/// Elements the peak kernels' `sink` must hold for a launch on `sm_count` SMs.
std::size_t peak_sink_elements(int sm_count);

/// Independent FMA chains on the CUDA cores; `flops` receives the FLOPs of one launch (FMA = 2).
cudaError_t fma_peak_f32(const float *seeds, float *sink, int sm_count, int iterations,
                         double *flops, cudaStream_t stream);
cudaError_t fma_peak_f64(const double *seeds, double *sink, int sm_count, int iterations,
                         double *flops, cudaStream_t stream);

/// Back-to-back `mma.sync` on register operands (fp32 accumulate); `flops` as above.
/// `type` is f16, bf16, f32 (tf32), e4m3 or i8. Needs sm_80 (e4m3: sm_89).
cudaError_t mma_peak(element_type type, const void *seeds, float *sink, int sm_count,
                     int iterations, double *flops, cudaStream_t stream);

/// An empty kernel (launch overhead).
cudaError_t empty_kernel(cudaStream_t stream);

} // namespace roofline::kernels
