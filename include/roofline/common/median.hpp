// SPDX-License-Identifier: Apache-2.0
#pragma once
// The one home of the median: every timed run (CUDA events, graph replays, NCCL runs, rounds of a
// measurement) and every fit's error distribution takes its middle here.

#include <vector>

namespace roofline {

/// The middle of `values` (any order, any unit): with an even count, the mean of the two middle
/// values. NaN when `values` is empty. Throws nothing.
double median(std::vector<double> values);

/// The upper middle of `values`: the value at index size/2 once sorted, so with an even count the
/// larger of the two middle values. Always one of the values, never a mean of two: what a
/// measured time or an error distribution reports as a value that was seen. NaN when `values` is
/// empty. Throws nothing.
double upper_median(std::vector<double> values);

} // namespace roofline
