// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/common/enum_table.hpp"

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace roofline {

/// The number format of a GEMM's operands. fp16, bf16, tf32, fp8, int8 and fp4 run on tensor
/// cores; fp32 and fp64 name the plain (SIMT) and the best fp64 rate of the GPU. fp4 is
/// Blackwell's block-scaled 4-bit float (nvfp4: an fp8 scale per 16 elements; mxfp4: a
/// power-of-two scale per 32).
enum class precision { fp64, fp32, tf32, fp16, bf16, fp8, int8, fp4 };

inline constexpr std::array<precision, 8> all_precisions{
    precision::fp64, precision::fp32, precision::tf32, precision::fp16,
    precision::bf16, precision::fp8,  precision::int8, precision::fp4};

/// The precisions' names, in all_precisions' order.
template <> const enum_table<precision> &names_of<precision>();

/// "fp16", "bf16", ...
std::string_view to_string(precision p);

/// Parses a lower-case name ("fp16"); nullopt when unknown.
std::optional<precision> parse_precision(std::string_view name);

/// Bytes per element in memory: tf32 is stored as fp32 (4 bytes). fp4 counts a byte, as fp8: a
/// GEMM's fp4 activations (half a byte and their scales) come from a producer and its outputs go
/// to the next in fp8 or wider; its weights are counted packed (quantized_weights).
int element_bytes(precision p);

/// Bytes per element of the activations between the layers of a network of precision `p`: fp8,
/// fp4 and int8 networks keep them in bf16 (their GEMMs quantize on entry, as TensorRT-LLM, vLLM
/// and SGLang run fp8 models); every other precision in its own format.
int activation_bytes(precision p);

/// Whether GEMMs of `p` run on tensor cores (all but fp32 and fp64, which run on the SIMT units).
constexpr bool runs_on_tensor_cores(precision p) {
  return p != precision::fp32 && p != precision::fp64;
}

/// The unit a precision's GEMMs run on, as tables and charts name its peak: "fp16 tensor", "fp32".
std::string peak_name(precision p);

/// The precisions a local calibration times, and the GEMM sweeps measure.
inline constexpr std::array<precision, 4> calibration_precisions{precision::fp32, precision::tf32,
                                                                 precision::fp16, precision::bf16};

} // namespace roofline
