// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "yaml_reader.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace roofline::detail {

/// Parses a JSON text (a model's config.json), strictly (RFC 8259), into the tree parse_yaml
/// builds: strings are quoted scalars, numbers plain scalars as written, `true` and `false` plain
/// scalars, `null` a null node. What JSON refuses (comments, trailing commas, single quotes, a
/// lone surrogate, a raw control character in a string, a second value), text that is not UTF-8
/// and nesting deeper than max_yaml_depth become input_errors located in `origin`, the column
/// counting characters; an empty text is refused too. Linear in the text.
yaml_node parse_json(std::string_view text, const std::string &origin);

/// `text` parsed as nlohmann-json parses it (its exceptions thrown as they are: a number that
/// overflows a double is one), except that a key given twice in one object, of which
/// nlohmann-json silently keeps the last, is refused: `refuse(message)` is called and must throw.
template <class Refuse>
nlohmann::json parse_json_once_per_key(std::string_view text, Refuse &&refuse) {
  using event_type = nlohmann::json::parse_event_t;
  std::vector<std::unordered_set<std::string>> open; // each open object's keys, innermost last
  return nlohmann::json::parse(text, [&](int, event_type event, nlohmann::json &parsed) {
    if (event == event_type::object_start)
      open.emplace_back();
    else if (event == event_type::object_end)
      open.pop_back();
    else if (event == event_type::key && !open.back().insert(parsed.get<std::string>()).second)
      refuse("duplicate key `" + parsed.get<std::string>() + "`");
    return true;
  });
}

} // namespace roofline::detail
