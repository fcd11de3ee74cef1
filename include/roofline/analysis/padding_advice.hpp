// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/analysis/advice_thresholds.hpp"
#include "roofline/analysis/analysis.hpp"
#include "roofline/model/gemm.hpp"
#include "roofline/model/pass.hpp"
#include "roofline/model/precision.hpp"

#include <string>
#include <vector>

namespace roofline {

/// A size padding changes, named as the user sets it: a convolution's `in_channels` or
/// `out_channels`, a model config's field (`vocab_size`), else the GEMM's `N` or `K`.
struct size_change {
  std::string size;
  std::int64_t from = 0, to = 0;
};

/// Pad a GEMM's dimensions: the 16-byte rule of the precision, or a size that fills tiles and
/// waves.
struct padding_advice {
  std::string layer;
  roofline::pass pass = pass::forward;
  precision prec = precision::fp16;
  gemm_shape original, padded;
  std::vector<size_change> changes; ///< what the user changes: "in_channels 3 → 8"
  std::string reason;               ///< "N=50257 breaks the 16-byte rule of fp16 (multiples of 8)"
  double time_s = 0, padded_time_s = 0; ///< predicted, per call
  double extra_flops = 0;               ///< padded FLOPs / original − 1
  double extra_bytes = 0;               ///< padded bytes / original − 1

  double predicted_speedup() const { return padded_time_s > 0 ? time_s / padded_time_s : 1; }
};

/// For each distinct GEMM of `analysed` (its shape and precision), the best padding of N and K
/// through the sizes the user sets (a convolution's K = C·R·S by its input channels): the 16-byte
/// rule's, then sizes of N up to 6% larger that fill tiles and waves better, kept
/// when its time, predicted with the analysis's model, is at least `min_speedup` times shorter.
/// Padded sizes whose FLOPs or bytes would overflow 64 bits are left out.
std::vector<padding_advice> advise_padding(const analysis &analysed,
                                           double min_speedup = padding_speedup_worth_advising);

} // namespace roofline
