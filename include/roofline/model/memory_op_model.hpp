// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/model/gpu_spec.hpp"
#include "roofline/model/memory_op.hpp"
#include "roofline/model/model_parameters.hpp"

#include <cstdint>

namespace roofline {

/// The bandwidth a memory-bound kernel moving `bytes` streams against on `gpu` (the model's
/// basis): L2's (the GEMM model's rate) for a kernel of no bytes, down to DRAM's for one whose
/// bytes fill L2. A network's activations are written by one kernel and read by the next: what
/// fits in L2 is read from there, as in a benchmark's replay.
double memory_bytes_per_s(std::int64_t bytes, const gpu_spec &gpu, const model_parameters &params);

/// Device time of one memory-bound kernel of `kind` moving `bytes` (its minimum traffic: inputs
/// read, output written once) on `gpu` (the model's basis: model_basis()): its floor
/// (`memory_floor_s`) plus its bytes at `memory_efficiency` of memory_bytes_per_s(); a row-wise
/// kernel over `rows` rows (0: not row-wise) `memory_row_s` more a row, and at least its floor
/// plus one row's bytes at `memory_row_bytes_per_s` (few long rows: a block each, the rest of the
/// GPU idle).
double memory_op_time_s(memory_op_kind kind, std::int64_t bytes, const gpu_spec &gpu,
                        const model_parameters &params, std::int64_t rows = 0);

/// Device time of an op run unfused (memory_layer::unfused) over `elements` elements of
/// `activation_bytes` each: its kernels one after the other, each an elementwise kernel (`mul`'s
/// floor and efficiency: each streams a tensor or two) moving its own bytes.
double unfused_time_s(const unfused_form &form, std::int64_t elements, int activation_bytes,
                      const gpu_spec &gpu, const model_parameters &params);

} // namespace roofline
