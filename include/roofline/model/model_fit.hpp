// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/model/attention_shape.hpp"
#include "roofline/model/conv_shape.hpp"
#include "roofline/model/detail/sweep_shapes.hpp"
#include "roofline/model/gemm.hpp"
#include "roofline/model/gemm_model.hpp"
#include "roofline/model/gpu_spec.hpp"
#include "roofline/model/memory_op.hpp"
#include "roofline/model/model_parameters.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace roofline {

/// One measured GEMM: the shape, its precision and its device time per call.
struct timed_gemm {
  gemm_shape shape;
  precision prec = precision::fp16;
  double time_s = 0; ///< device time: back-to-back calls replayed from a CUDA graph
  int launches = 0;  ///< kernels one call launched; 0: not recorded
  /// warm: the same buffers call after call; cold: operands rotated through buffers larger than
  /// L2 (`--cold-l2`).
  cache_state operands = cache_state::warm;
};

/// One measured linear layer as a framework runs it: its GEMM and, where the layer quantizes its
/// activations on entry (fp8 with dynamic scaling), that quantize op's bytes (lowering's).
struct timed_linear {
  timed_gemm gemm;                 ///< time_s: the whole layer's, quantization included
  std::int64_t quantize_bytes = 0; ///< 0: no quantize op
};

/// One measured fused attention call: its shape, precision, minimum DRAM bytes and device time.
struct timed_attention {
  attention_shape shape;
  precision prec = precision::fp16;
  std::int64_t bytes = 0;
  double time_s = 0; ///< device time: back-to-back calls replayed from a CUDA graph
};

/// One measured memory-bound kernel: its kind, minimum DRAM bytes and device time.
struct timed_memory_op {
  memory_op_kind kind = memory_op_kind::relu;
  std::int64_t bytes = 0;
  std::int64_t rows = 0; ///< a row-wise kernel's rows (memory_op_time_s); 0: not known
  double time_s = 0; ///< device time: back-to-back calls replayed from a CUDA graph
};

/// One measured convolution pass: its shape, the implicit GEMM lowering gives it, its precision,
/// minimum DRAM bytes and device time.
struct timed_conv {
  conv_shape shape;
  gemm_shape implicit;
  precision prec = precision::fp16;
  std::int64_t bytes = 0;
  double time_s = 0; ///< device time: back-to-back calls replayed from a CUDA graph
};

/// One measured all-reduce inside a host: the GPUs taking part, the bytes each reduces and the
/// time per call.
struct timed_all_reduce {
  int gpus = 2;
  std::int64_t bytes = 0;
  double time_s = 0; ///< back-to-back calls replayed from a CUDA graph
};

/// |predicted − measured| / measured of each sample, sorted ascending.
std::vector<double> relative_errors(const std::vector<timed_gemm> &samples, const gpu_spec &gpu,
                                    const model_parameters &parameters);
std::vector<double> relative_errors(const std::vector<timed_linear> &samples, const gpu_spec &gpu,
                                    const model_parameters &parameters);
std::vector<double> relative_errors(const std::vector<timed_attention> &samples,
                                    const gpu_spec &gpu, const model_parameters &parameters);
std::vector<double> relative_errors(const std::vector<timed_memory_op> &samples,
                                    const gpu_spec &gpu, const model_parameters &parameters);
std::vector<double> relative_errors(const std::vector<timed_conv> &samples, const gpu_spec &gpu,
                                    const model_parameters &parameters);
/// (modelled_all_reduce_s over `gpu`'s interconnect: throws roofline::error when it has none.)
std::vector<double> relative_errors(const std::vector<timed_all_reduce> &samples,
                                    const gpu_spec &gpu, const model_parameters &parameters);

/// measured / predicted of each sample, sorted ascending: its 10th and 90th percentiles are the
/// prediction interval an architecture's file records (`accuracy:`, docs/benchmarks.md).
std::vector<double> measured_over_predicted(const std::vector<timed_attention> &samples,
                                            const gpu_spec &gpu,
                                            const model_parameters &parameters);
std::vector<double> measured_over_predicted(const std::vector<timed_memory_op> &samples,
                                            const gpu_spec &gpu,
                                            const model_parameters &parameters);
std::vector<double> measured_over_predicted(const std::vector<timed_conv> &samples,
                                            const gpu_spec &gpu,
                                            const model_parameters &parameters);

/// The parameters that make the GEMM model fit `samples` on `gpu` best, from `start`. cuBLAS's
/// split-K rule (reduces_split_k) is fitted first, to the launch counts the samples recorded (it
/// stays as `start` has it when none did); then the rest by NLopt's subplex (bounded, derivative
/// free) on median + mean |log(predicted / measured)|, then 24 seeded random restarts, every value
/// inside its bounds (parameter_table). Only parameters the samples decide move (those of the
/// precisions and row alignments they have, the cold-operand ones only with cold samples).
/// Deterministic.
model_parameters fit_model(const std::vector<timed_gemm> &samples, const gpu_spec &gpu,
                           model_parameters start);

/// The predicted time of a linear layer: its GEMM's (estimate_gemm) plus its quantize op's
/// (memory_op_time_s), as an analysis sums them.
double linear_time_s(const timed_linear &sample, const gpu_spec &gpu,
                     const model_parameters &parameters);

/// `start` with only `free` fitted to `samples` (linear layers: a precision's GEMM parameters,
/// its quantize op's) by the same search as fit_model's. For a precision or an op new to an
/// architecture whose other parameters are fitted: they stay as they are. Deterministic.
model_parameters fit_linear(const std::vector<timed_linear> &samples, const gpu_spec &gpu,
                            model_parameters start, const std::vector<parameter> &free);

/// `start` with only the cold-operand parameters (cold_dram_efficiency, cold_dram_latency_s) fitted
/// to `samples`, timed with operands cold, as fit_model fits: the kernels are the ones `start`
/// was fitted on, only where their operands come from differs.
model_parameters fit_cold_operands(const std::vector<timed_gemm> &samples, const gpu_spec &gpu,
                                   model_parameters start);

/// The parameters that make the fused attention model (estimate_attention) fit `samples` on
/// `gpu` best, from `start`: those of parameter_fit::attention that the samples decide, by the
/// same search as fit_model's. Deterministic.
model_parameters fit_attention(const std::vector<timed_attention> &samples, const gpu_spec &gpu,
                               model_parameters start);

/// The memory-bound ops' parameters (memory_floor_s, memory_efficiency) of the kinds `samples`
/// hold, fitted to them on `gpu` from `start` by the same search as fit_model's, each kind on its
/// own samples. Deterministic.
model_parameters fit_memory_ops(const std::vector<timed_memory_op> &samples, const gpu_spec &gpu,
                                model_parameters start);

/// The convolutions' parameters (parameter_fit::conv) that `samples` decide, fitted to them on
/// `gpu` from `start` by the same search as fit_model's: the implicit-GEMM variants' slowdowns
/// and their shared overhead on those forward samples, the grouped kernel's three on the grouped
/// ones, then the gradients' slowdowns on the gradient passes, the forward's kept.
/// Deterministic.
model_parameters fit_conv(const std::vector<timed_conv> &samples, const gpu_spec &gpu,
                          model_parameters start);

/// The all-reduce's parameters (parameter_fit::all_reduce) fitted to `samples` over `gpu`'s
/// interconnect from `start`: the latency and link efficiency of the GPU counts the samples
/// have (and of those they interpolate between), by the same search as fit_model's, for each
/// one-shot threshold of a grid of sizes (the loss jumps there), the best kept.
/// Throws roofline::error when `gpu` has no interconnect. Deterministic.
model_parameters fit_all_reduce(const std::vector<timed_all_reduce> &samples, const gpu_spec &gpu,
                                model_parameters start);

/// The model fitted on a GPU, saved beside its measured ceilings (cache_directory()), keyed by
/// UUID; nullopt when there is no cache directory.
std::optional<std::filesystem::path> calibration_cache_file(const std::string &uuid);
/// Writes what a calibration fitted (changed() against its start) atomically (write_cache_file)
/// and returns the file's path; throws roofline::error on failure.
std::filesystem::path save_calibration(const std::string &uuid,
                                       const parameter_overrides &calibration);
/// A calibration cache document. Throws input_error naming `origin` when it is damaged, from
/// before device-time fitting, or names a parameter unknown or out of its table's bounds.
parameter_overrides parse_calibration(const std::string &json_text, const std::string &origin);
/// nullopt when none is saved; a damaged file (parse_calibration), or one that cannot be used
/// (read_cache_file), throws input_error.
std::optional<parameter_overrides> load_calibration(const std::string &uuid);

} // namespace roofline
