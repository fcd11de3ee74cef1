// SPDX-License-Identifier: Apache-2.0
#pragma once

// The one UTF-8 decoder: every writer that escapes text (JSON, tables, charts, YAML) reads its
// characters through it.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace roofline::detail {

/// The length of the valid UTF-8 sequence at the start of `s`, or 0 when it is not one.
std::size_t utf8_sequence(std::string_view s);

/// The code point of the valid UTF-8 sequence of `length` bytes (utf8_sequence's) starting `s`.
std::uint32_t utf8_code_point(std::string_view s, std::size_t length);

/// Whether code point `c` is one a terminal acts on, that reorders the text shown or that hides
/// in it: the C0 and C1 controls, DEL, the bidirectional-text controls (the Arabic letter mark,
/// the left-to-right and right-to-left marks, embeddings, overrides and isolates), invisible
/// format characters (the soft hyphen, zero-width space and joiners, the line and paragraph
/// separators, the word joiner and invisible operators, the byte-order mark, the interlinear
/// annotation marks) and noncharacters (U+FFFE, U+FFFF of every plane, U+FDD0–U+FDEF). Every
/// format shows them escaped (printable_text; JSON as `\u009b`).
bool is_control(std::uint32_t c);

/// The visible escape printable_text writes for code point `c` (`\n`, `\x1b`, `\u009b`,
/// `\u202e`), or "" where `c` is shown as it is.
std::string control_escape(std::uint32_t c);

/// Where printable_text first changes `text` (a byte that is not UTF-8, or a control character);
/// npos where it shows `text` as it is.
std::size_t first_escape(std::string_view text);

} // namespace roofline::detail
