// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/model/conv_shape.hpp"
#include "roofline/model/memory_op.hpp"
#include "roofline/model/precision.hpp"

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace roofline {

inline constexpr int precision_count = static_cast<int>(all_precisions.size());
/// The row alignments below 16 bytes that have a slowdown of their own, widest first.
inline constexpr std::array<int, 4> misaligned_row_bytes{8, 4, 2, 1};
/// The head dims fused attention has an efficiency of its own for (others interpolate).
inline constexpr std::array<int, 3> attention_head_dims{64, 128, 256};
/// The GPU counts an all-reduce has a latency and a link efficiency of its own for (others
/// interpolate).
inline constexpr std::array<int, 3> all_reduce_gpu_counts{2, 4, 8};

/// The device-time model's parameters: the GEMM model's, fused attention's, the memory-bound
/// ops', the convolutions', then the all-reduce's. Groups of one
/// value per precision (or per misaligned row width) take consecutive slots:
/// `parameter_at(parameter::efficiency, precision::fp16)`. parameter_table() holds each one's name,
/// default, bounds, unit and meaning.
enum class parameter : int {
  efficiency = 0,
  wave_overhead_s = efficiency + precision_count,
  split_k_below_waves = wave_overhead_s + precision_count,
  narrow_split_k_below_waves = split_k_below_waves + precision_count,
  misalignment_slowdown = narrow_split_k_below_waves + precision_count,
  dram_efficiency = misalignment_slowdown + static_cast<int>(misaligned_row_bytes.size()),
  l2_bytes_per_sm_cycle,
  l2_resident_fraction,
  k_step_latency_s,
  kernel_overhead_s,
  wave_quantization,
  deep_split_k_below_waves,
  deep_split_k_min_k,
  min_split_k_depth,
  split_k_max_waves,
  misaligned_bandwidth_slowdown,
  gemv_bandwidth_slowdown,
  misaligned_gemv_bandwidth_slowdown,
  cold_dram_efficiency,
  cold_dram_latency_s,
  attention_efficiency,
  attention_backward_efficiency =
      attention_efficiency + static_cast<int>(attention_head_dims.size()),
  attention_decode_dram_efficiency =
      attention_backward_efficiency + static_cast<int>(attention_head_dims.size()),
  attention_tile_overhead_s =
      attention_decode_dram_efficiency + static_cast<int>(attention_head_dims.size()),
  attention_wave_quantization,
  attention_kernel_overhead_s,
  attention_dram_efficiency,
  attention_decode_chunk,
  attention_decode_overhead_s,
  attention_decode_floor_s,
  attention_causal_imbalance,
  attention_backward_dram_efficiency,
  attention_masked_block_cost,
  attention_backward_tile_overhead_s,
  attention_stream_overlap,
  attention_l2_speedup,
  attention_decode_wave_overhead_s,
  attention_decode_group_wave_overhead_s,
  attention_decode_max_group,
  memory_floor_s,
  memory_efficiency = memory_floor_s + memory_op_kind_count,
  memory_row_s = memory_efficiency + memory_op_kind_count,
  memory_row_bytes_per_s = memory_row_s + memory_op_kind_count,
  conv_slowdown = memory_row_bytes_per_s + memory_op_kind_count,
  conv_data_grad_slowdown = conv_slowdown + conv_gemm_variant_count,
  conv_weight_grad_slowdown = conv_data_grad_slowdown + conv_gemm_variant_count,
  conv_overhead_s = conv_weight_grad_slowdown + conv_gemm_variant_count,
  conv_small_channel_bf16_slowdown,
  conv_grouped_floor_s,
  conv_grouped_efficiency,
  conv_grouped_dram_efficiency,
  all_reduce_latency_s,
  all_reduce_link_efficiency =
      all_reduce_latency_s + static_cast<int>(all_reduce_gpu_counts.size()),
  all_reduce_oneshot_below_bytes =
      all_reduce_link_efficiency + static_cast<int>(all_reduce_gpu_counts.size()),
  reduce_scatter_bandwidth_ratio,
  all_gather_bandwidth_ratio =
      reduce_scatter_bandwidth_ratio + static_cast<int>(all_reduce_gpu_counts.size()),
  all_to_all_bandwidth_ratio =
      all_gather_bandwidth_ratio + static_cast<int>(all_reduce_gpu_counts.size()),
  data_parallel_overlap =
      all_to_all_bandwidth_ratio + static_cast<int>(all_reduce_gpu_counts.size()),
  energy_per_flop_pj,
  dram_energy_per_byte_pj = energy_per_flop_pj + precision_count,
  idle_power_share,
  stall_power_share,
  power_burst_s,
  collective_headroom_share,
  count
};
inline constexpr std::size_t parameter_count = static_cast<std::size_t>(parameter::count);

/// The slot of `group`'s value for precision `p`.
parameter parameter_at(parameter group, precision p);
/// The slot of misalignment_slowdown for rows aligned to `alignment_bytes` (8, 4, 2 or 1).
parameter misalignment_slowdown_at(int alignment_bytes);
/// The slot of `group`'s value (attention_efficiency, attention_backward_efficiency or
/// attention_decode_dram_efficiency) for `head_dim` (one of attention_head_dims).
parameter attention_efficiency_at(int head_dim, parameter group = parameter::attention_efficiency);

/// The slot of `group`'s value (all_reduce_latency_s, all_reduce_link_efficiency or a
/// collective's bandwidth ratio) for `gpus` (one of all_reduce_gpu_counts). Throws
/// std::out_of_range for another count.
parameter all_reduce_parameter_at(parameter group, int gpus);

/// The slot of `group`'s value (memory_floor_s, memory_efficiency, memory_row_s or
/// memory_row_bytes_per_s) for memory ops of `kind`.
parameter memory_parameter_at(parameter group, memory_op_kind kind);

/// The slot of `group`'s value (conv_slowdown, conv_data_grad_slowdown or
/// conv_weight_grad_slowdown) for convolutions of `variant`. Throws std::out_of_range for a
/// variant not costed as an implicit GEMM (grouped).
parameter conv_slowdown_at(conv_variant variant, parameter group = parameter::conv_slowdown);

/// How calibrate treats a parameter.
enum class parameter_fit {
  none,        ///< a fixed property of cuBLAS's kernels: never fitted
  time,        ///< fitted to measured GEMM device times
  launches,    ///< fitted to the kernel counts calls launched (cuBLAS's split-K rule)
  attention,   ///< fitted to measured fused-attention device times (bench/attention_fit)
  memory,      ///< fitted to measured memory-bound kernels' device times (bench/memory_op_fit)
  conv,        ///< fitted to measured cuDNN convolutions' device times (bench/conv_fit)
  all_reduce,  ///< fitted to measured all-reduces (bench/aic_allreduce_fit, bench/nccl_fit)
  collectives, ///< NCCL's other collectives against its all-reduce (bench/nccl_fit), and data
               ///< parallelism's overlap with the GEMMs (bench/overlap_check.py)
  power,       ///< fitted to NVML's energy and clocks under load (bench/power_fit.py)
};

/// One row of the parameter table: the single home of a parameter's name, default and bounds.
struct parameter_info {
  parameter id;
  std::string name; ///< "efficiency.fp16", "dram_efficiency": the YAML and JSON name
  double default_value;
  double min, max; ///< inclusive: files outside them are refused, fits stay inside
  std::string_view unit;
  parameter_fit fit;
  std::string_view doc; ///< one line: what it means
};

/// Every parameter in slot order (parameter_count rows).
const std::vector<parameter_info> &parameter_table();
/// The row of `id`.
const parameter_info &info(parameter id);
/// The parameter named `name` ("efficiency.fp16"); nullopt when none is.
std::optional<parameter> find_parameter(std::string_view name);
/// Why `value` cannot be `id`'s ("`efficiency.fp16` = 1.5 is outside [0.05, 1] ..."): not finite
/// or outside the table's bounds; nullopt when it can.
std::optional<std::string> out_of_bounds(parameter id, double value);

/// The knobs of the GEMM model beyond the datasheet: how close cuBLAS's kernels get to the roofs,
/// what fixed costs they pay on the GPU, and which kernel cuBLAS picks. They describe a GPU
/// architecture: specs/arch/<architecture>.yaml holds them as fitted there, a GPU file or a local
/// calibration overrides what it measured. Nothing of the host is here (see host_floor).
class model_parameters {
public:
  /// Every parameter at its table default.
  model_parameters();

  double operator[](parameter id) const { return m_values[static_cast<std::size_t>(id)]; }
  /// Sets one value. Throws std::out_of_range when it is outside the table's bounds or not finite.
  void set(parameter id, double value);

  double efficiency(precision p) const { return (*this)[parameter_at(parameter::efficiency, p)]; }
  double wave_overhead_s(precision p) const {
    return (*this)[parameter_at(parameter::wave_overhead_s, p)];
  }
  double split_k_below_waves(precision p) const {
    return (*this)[parameter_at(parameter::split_k_below_waves, p)];
  }
  double narrow_split_k_below_waves(precision p) const {
    return (*this)[parameter_at(parameter::narrow_split_k_below_waves, p)];
  }
  /// 1 for 16-byte rows.
  double misalignment_slowdown(int alignment_bytes) const;

  /// Where the values come from, most specific last: "hopper architecture (fitted on ...)".
  std::string origin = "generic defaults";

  friend bool operator==(const model_parameters &a, const model_parameters &b) {
    return a.m_values == b.m_values;
  }

private:
  std::array<double, parameter_count> m_values;
};

/// Values for some parameters from one source: an architecture file, a GPU file's `model:`, a
/// local calibration. What it does not name stays as the layer below has it.
struct parameter_overrides {
  std::string origin;
  std::vector<std::pair<parameter, double>> values;
};

/// `base` with `overrides` applied on top; the origin says both.
model_parameters apply(model_parameters base, const parameter_overrides &overrides);

/// The values of `fitted` that differ from `start`: what a fit measured.
parameter_overrides changed(const model_parameters &start, const model_parameters &fitted,
                            std::string origin);

} // namespace roofline
