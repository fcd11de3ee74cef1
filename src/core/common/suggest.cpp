// SPDX-License-Identifier: Apache-2.0
#include "suggest.hpp"

#include "roofline/common/error.hpp"

#include <algorithm>
#include <cctype>
#include <numeric>

namespace roofline::detail {

std::string to_lower(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower;
}

std::size_t edit_distance(const std::string &a, const std::string &b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::vector<std::string> closest_names(std::string_view word,
                                       const std::vector<std::string> &candidates,
                                       std::size_t at_most) {
  // A word far longer than every candidate is a typo of none (and a 100 MB one would take
  // seconds of edit distances).
  std::size_t longest = 0;
  for (const std::string &candidate : candidates)
    longest = std::max(longest, candidate.size());
  if (word.size() > 2 * longest + 8)
    return {};
  const std::string lower = to_lower(word);
  // A typo changes a few characters; a prefix ("a100" for "a100-sxm4-80gb") is also a good hint.
  // (A word of one to three letters is a few edits from almost anything: one at most there.)
  const std::size_t tolerance = lower.size() < 4 ? 1 : std::max<std::size_t>(2, lower.size() / 3);
  std::vector<std::pair<std::size_t, std::string>> scored;
  for (const std::string &candidate : candidates) {
    const std::string other = to_lower(candidate);
    // A longer spelling of a name ("--batchsize" for "--batch") is as good a hint.
    const bool extends = other.size() >= 3 && lower.rfind(other, 0) == 0;
    const std::size_t distance = other.rfind(lower, 0) == 0 && lower.size() >= 2 ? 1
                                 : extends ? std::min<std::size_t>(edit_distance(lower, other), 2)
                                           : edit_distance(lower, other);
    if (distance <= tolerance)
      scored.emplace_back(distance, candidate);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto &x, const auto &y) { return x.first < y.first; });
  std::vector<std::string> best;
  for (const auto &[distance, candidate] : scored) {
    if (best.size() == at_most)
      break;
    if (std::find(best.begin(), best.end(), candidate) == best.end())
      best.push_back(candidate);
  }
  return best;
}

std::string quoted_list(const std::vector<std::string> &words, std::string_view last_separator) {
  std::string text;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (i > 0)
      text += i + 1 == words.size() ? last_separator : ", ";
    text += '`' + words[i] + '`';
  }
  return text;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string> &candidates) {
  const std::vector<std::string> best = closest_names(word, candidates);
  return best.empty() ? std::string{} : " (did you mean " + quoted_list(best) + "?)";
}

} // namespace roofline::detail

namespace roofline {

std::string did_you_mean(std::string_view word, const std::vector<std::string> &candidates) {
  return detail::did_you_mean(word, candidates);
}

} // namespace roofline
