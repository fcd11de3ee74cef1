// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/common/enum_table.hpp"

#include <map>
#include <string_view>

namespace roofline {

/// The classes of op the model predicts each by its own estimate, and whose held-out accuracy
/// docs/benchmarks.md scores apart ("Prediction intervals").
enum class op_class {
  gemm,      ///< a GEMM (estimate_gemm)
  attention, ///< a fused attention kernel (estimate_attention)
  memory,    ///< a memory-bound op: elementwise, norms, softmax, pools, the glue (memory_op_time_s)
  conv,      ///< a convolution as cuDNN runs it (estimate_conv)
  all_reduce, ///< an all-reduce between GPUs (modelled_all_reduce_s)
};

template <> const enum_table<op_class> &names_of<op_class>();
std::string_view to_string(op_class c);

/// The spread of measured / predicted device time over rows no fit used: its 10th and 90th
/// percentiles. A prediction t is then expected within [t × p10, t × p90] eight times in ten.
struct accuracy_band {
  double p10 = 1;
  double p90 = 1;
};

/// What a class takes where its architecture's file gives it no band (no held-out data, no
/// architecture fitted): wider than any band measured (docs/benchmarks.md).
inline constexpr accuracy_band default_accuracy_band{0.5, 2.0};

/// The bands of one architecture's GPUs, by class (specs/arch/<architecture>.yaml `accuracy:`).
struct accuracy_bands {
  std::map<op_class, accuracy_band> by_class;

  /// `c`'s band; default_accuracy_band where none is given.
  accuracy_band of(op_class c) const;
};

/// An interval of seconds around a predicted time: [low_s, high_s].
struct time_range {
  double low_s = 0;
  double high_s = 0;

  /// A point: no spread (a measured time, a roofline bound).
  static time_range exactly(double seconds) { return {seconds, seconds}; }
  /// `seconds` × the band's p10 and p90.
  static time_range around(double seconds, accuracy_band band) {
    return {seconds * band.p10, seconds * band.p90};
  }
  /// Summed end by end: the errors of one class on one GPU share their fitted bias, so they are
  /// taken as moving together rather than cancelling (docs/benchmarks.md).
  time_range &operator+=(const time_range &other) {
    low_s += other.low_s;
    high_s += other.high_s;
    return *this;
  }
  time_range operator*(double factor) const { return {low_s * factor, high_s * factor}; }
  /// Whether the two intervals share a point.
  bool overlaps(const time_range &other) const {
    return low_s <= other.high_s && other.low_s <= high_s;
  }
};

} // namespace roofline
