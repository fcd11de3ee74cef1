// SPDX-License-Identifier: Apache-2.0
// What the fuzz targets share (tests/fuzz/README.md): the input as text, the analysis stage run
// where it stays cheap, and which exceptions are answers rather than findings.
#pragma once

#include "roofline/common/error.hpp"
#include "roofline/input/network.hpp"
#include "roofline/model/perf_model.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace roofline::fuzz {

/// Layers (a repeat block and its contents counted once each, as lowering walks them) past which
/// a parsed network is not analysed: one input must not run for seconds. Lowering counts repeats
/// rather than expanding them, so its cost follows this count.
constexpr std::size_t max_analysed_layers = 2000;

/// The fuzzer's bytes as text.
inline std::string_view text_of(const std::uint8_t *data, std::size_t size) {
  return {reinterpret_cast<const char *>(data), size};
}

/// The layers of `net`, repeat blocks' contents counted once.
std::size_t layer_count(const network &net);

/// The analysis stage on `model`'s GPU: lowering, every op's prediction and the advice, when `net`
/// has at most max_analysed_layers layers. An input_error is an answer; anything else escapes. A
/// time that is not finite and non-negative, or padding advice with a dimension below 1, aborts:
/// an accepted input must not give nonsense.
void analyse(const network &net, const perf_model &model);

/// The same on a built-in H100.
void analyse(const network &net);

/// Runs `body` on one input: an input_error is the answer a bad input must get; any other
/// exception escapes to the fuzzer, which reports it (a library's raw exception reaching the user,
/// or roofline::error where the input is at fault, is a finding).
template <class Body> int answer(const Body &body) {
  try {
    body();
  } catch (const input_error &) {
  }
  return 0;
}

} // namespace roofline::fuzz
