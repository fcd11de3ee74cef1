// SPDX-License-Identifier: Apache-2.0
#include "roofline/common/enum_table.hpp"

namespace roofline::detail {

std::string choice_list(const std::vector<std::string_view> &names,
                        std::string_view last_separator) {
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0)
      text += i + 1 == names.size() ? last_separator : ", ";
    text += names[i];
  }
  return text;
}

} // namespace roofline::detail
