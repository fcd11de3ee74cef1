// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace roofline {

/// `text` safe to show on a terminal and in Markdown or CSV: what a terminal would act on (C0 and
/// C1 control characters, DEL, the bidirectional-text controls that reorder what is shown) and
/// bytes that are not UTF-8 written as visible escapes (`\n`, `\t`, `\x1b`, `\u202e`, `\xff`);
/// any other text, UTF-8 included, as it is. The table, Markdown and CSV formats write every
/// name so (JSON escapes in its own way, HTML and SVG in theirs).
std::string printable_text(std::string_view text);

/// How a message quotes a value it was given: printable_text (controls, NUL included, escaped),
/// cut to `max_characters` characters with "… (N bytes)" after it when longer, so that a 200 kB
/// value or a key holding a NUL still gives a whole, readable message.
std::string shown_value(std::string_view value, std::size_t max_characters = 60);

} // namespace roofline
