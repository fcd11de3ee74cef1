// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace roofline::detail {

/// The candidates closest to `word` by edit distance (case-insensitive), best first; only those
/// near enough to be a plausible typo.
std::vector<std::string> closest_names(std::string_view word,
                                       const std::vector<std::string> &candidates,
                                       std::size_t at_most = 3);

/// Levenshtein's distance: the fewest insertions, deletions and substitutions from `a` to `b`.
std::size_t edit_distance(const std::string &a, const std::string &b);

/// " (did you mean `a`?)" / " (did you mean `a` or `b`?)", or "" when nothing is close.
std::string did_you_mean(std::string_view word, const std::vector<std::string> &candidates);

/// "`a`, `b` or `c`" (with `last_separator` " and " for "`a`, `b` and `c`").
std::string quoted_list(const std::vector<std::string> &words,
                        std::string_view last_separator = " or ");

std::string to_lower(std::string_view text);

} // namespace roofline::detail
