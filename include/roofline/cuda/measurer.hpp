// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/analysis/measurement.hpp"
#include "roofline/model/op.hpp"

#include <vector>

namespace roofline::cuda {

/// Runs every op of `ops` on GPU 0 and returns what each showed (nullopt for all-reduces, which
/// measure_options::every_gpu runs): GEMMs through cuBLAS (or the engine asked for), forward
/// convolutions through cuDNN (loaded at run time; without it, as their implicit GEMMs, the note
/// says why), memory-bound ops through our own kernels (kernels/memory_ops.cu; a kind or pass no
/// kernel runs is skipped with the reason), fused attention's forward pass through cuDNN's graph
/// API (its flash kernel, fp16 or bf16, causal or not, grouped-query; the backward pass, sliding
/// windows and fp8 KV caches skipped with the reason; without cuDNN, skipped). Each result is first
/// checked against a double-precision reference on sampled outputs, then timed twice, as
/// back-to-back calls issued eagerly (time_s) and as the same calls captured into a CUDA graph and
/// replayed (device_time_s: the GPU's time per call, no host gap; 0 when the engine's calls cannot
/// be captured), each the median of its timed samples (with `rounds`, each the median round), then
/// profiled under CUPTI counters (one user range around one call, replayed once per pass). An op
/// that does not fit in free memory, or whose allocations fail (out of memory all the same), is
/// recorded as skipped with the reason; an op whose engine fails (a cuBLAS or CUDA error, a wrong
/// result) is recorded as failed; an op whose counters or kernel trace CUPTI fails to read keeps
/// its times, its note saying what is missing (the next op gets a fresh counter session). The run
/// goes on in every case. options.stop stops it between ops (measurements::complete). Notes for the
/// whole run (e.g. counters not permitted) are in the result's `notes`. Throws cuda_error only when
/// no GPU can be used at all, roofline::error when the test-only ROOFLINE_INJECT_FAULT
/// (src/cuda/runtime/fault_injection.hpp) cannot be read.
measurements measure(const std::vector<op> &ops, const measure_options &options);

} // namespace roofline::cuda
