// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

// Writes JSON text as it goes, for documents of tens of thousands of ops (a tree of
// nlohmann::json nodes costs more than the analysis itself there). The text is what
// nlohmann::json::dump(2) gives: two-space indents, keys sorted within each object, numbers in
// their shortest round-trip form ("1.0", "1e-05"), non-finite numbers as null.
// The outermost object goes to the stream as it is written, so its keys must come in order (a
// logic_error otherwise); every object inside it may take its fields in any order: it is held
// until it closes and then written sorted.
namespace roofline::detail {

class json_writer {
public:
  explicit json_writer(std::ostream &out);
  /// Every string value written passes through `words` first (write_options::words).
  json_writer(std::ostream &out, std::function<std::string(std::string_view)> words);

  void begin_object();
  void end_object();
  void begin_array();
  void end_array();
  /// The next value's key, in the object open now; a key given twice is a logic_error.
  void key(std::string_view name);

  void null();
  void value(bool b);
  void value(double number);
  void value(std::string_view text);
  void value(const char *text) { value(std::string_view(text)); }
  void value(const std::string &text) { value(std::string_view(text)); }
  template <
      class Integer,
      std::enable_if_t<std::is_integral_v<Integer> && !std::is_same_v<Integer, bool>, int> = 0>
  void value(Integer number) {
    if constexpr (std::is_signed_v<Integer>)
      integer(static_cast<std::int64_t>(number));
    else
      unsigned_integer(static_cast<std::uint64_t>(number));
  }
  template <class T> void value(const std::optional<T> &v) { v ? value(*v) : null(); }
  template <class T> void value(const std::vector<T> &items) {
    begin_array();
    for (const T &item : items)
      value(item);
    end_array();
  }
  /// A tree built with nlohmann::json, written the same way.
  void value(const nlohmann::json &tree);

  template <class T> void field(std::string_view name, const T &v) {
    key(name);
    value(v);
  }
  void null_field(std::string_view name) {
    key(name);
    null();
  }
  /// Every member of `object` (an nlohmann::json object) as fields of the object open now.
  void fields(const nlohmann::json &object);

  /// Checks that every object and array is closed and puts what is left on the stream.
  void finish();

private:
  std::function<std::string(std::string_view)> m_words;
  struct object_frame {
    std::string text;                  ///< its members, each `"key": value`, in written order
    std::vector<std::size_t> starts;   ///< where each member begins in `text`
    std::vector<std::size_t> key_ends; ///< where each member's quoted key ends
    std::string sorted_keys;           ///< the quoted keys that `order` sorts, in written order
    std::vector<std::size_t> order;    ///< members in key order
  };
  struct open_container {
    bool is_object;
    bool streamed = false;       ///< the outermost object: written as it goes, keys in order
    bool empty = true;           ///< no element or field yet
    bool awaiting_value = false; ///< an object whose last key has no value yet
    std::string last_key;        ///< of a streamed object, to check the order
  };

  void integer(std::int64_t number);
  void unsigned_integer(std::uint64_t number);
  /// Where text goes now: the innermost held object's text, else the stream's buffer.
  std::string &sink();
  void flush();
  /// Checks that a value may come here, writes the separator and indent an array element
  /// needs, and returns where the value goes.
  std::string &before_value();
  /// Sets `frame.order` to its members in key order; a key given twice is a logic_error.
  static void sort_members(object_frame &frame);
  static void indent(std::string &out, std::size_t depth);

  std::ostream &m_out;
  std::string m_pending;              ///< of the outermost value, not yet on the stream
  std::vector<object_frame> m_frames; ///< one per held object, kept for reuse
  std::size_t m_open_objects = 0;
  std::vector<open_container> m_open;
};

/// `number` as nlohmann::json::dump writes it (appended to `out`).
void append_json_number(std::string &out, double number);

} // namespace roofline::detail
