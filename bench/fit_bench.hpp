// SPDX-License-Identifier: Apache-2.0
#pragma once
// The error table the fitting benches print: per kind of call, before and after a fit.

#include "roofline/gpu_spec.hpp"
#include "roofline/model_fit.hpp"
#include "roofline/model_parameters.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace roofline::bench {

/// Median, p90 and max |predicted − measured| / measured of `samples` (each with a `kind` and a
/// `timed` sample relative_errors takes), by kind and in all, with `before` and `after`.
template <class Sample>
void report(const std::string &title, const std::vector<Sample> &samples, const gpu_spec &gpu,
            const model_parameters &before, const model_parameters &after) {
  std::map<std::string, std::vector<decltype(Sample::timed)>> by_kind;
  for (const Sample &x : samples) {
    by_kind[x.kind].push_back(x.timed);
    by_kind["all"].push_back(x.timed);
  }
  std::printf("%s\n%-18s %5s  %22s  %22s\n", title.c_str(), "calls", "n", "before: median p90 max",
              "fitted: median p90 max");
  for (const auto &[kind, timed] : by_kind) {
    const auto line = [&](const model_parameters &p) {
      const std::vector<double> e = relative_errors(timed, gpu, p);
      return fmt::format("{:6.1f}% {:6.1f}% {:6.0f}%", 100 * e[e.size() / 2],
                         100 * e[std::min(e.size() - 1, e.size() * 9 / 10)], 100 * e.back());
    };
    std::printf("%-18s %5zu  %22s  %22s\n", kind.c_str(), timed.size(), line(before).c_str(),
                line(after).c_str());
  }
  std::printf("\n");
}

} // namespace roofline::bench
