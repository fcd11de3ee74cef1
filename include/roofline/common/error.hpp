// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace roofline {

/// Where in an input file something was found. `line` and `column` are 1-based; 0 means unknown.
struct source_location {
  std::string file;
  int line = 0;
  int column = 0;

  /// "file:line:column", or less where parts are unknown.
  std::string to_string() const;
};

/// Every error roofline-advise's libraries throw derives from this.
/// what() is the whole message: a NUL byte in it (from a name or a value quoted) is written
/// `\x00`, as printable_text writes it, so that no C string ends it early.
class error : public std::runtime_error {
public:
  explicit error(const std::string &message);
  explicit error(const char *message) : std::runtime_error(message) {}
};

/// The user's input is wrong (a file, a YAML key, a size, a GPU name): the CLI exits with status 2.
/// what() reads "file:line:column: message".
class input_error : public error {
public:
  input_error(source_location where, const std::string &message);
  input_error(const std::string &message); // no file involved (e.g. a command-line argument)

  const source_location &where() const noexcept { return m_where; }
  const std::string &message() const noexcept { return m_message; }

private:
  source_location m_where;
  std::string m_message;
};

/// " (did you mean `a`?)" / " (did you mean `a` or `b`?)": the candidates near enough to `word`
/// to be a typo of it, for an error message; "" when none is.
std::string did_you_mean(std::string_view word, const std::vector<std::string> &candidates);

} // namespace roofline
