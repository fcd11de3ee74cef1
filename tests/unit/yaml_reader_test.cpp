// SPDX-License-Identifier: Apache-2.0
// The YAML tree read through libyaml: what is null and what a string, aliases sharing their
// anchor's node, and every refusal located at file:line:column.
#include "json_reader.hpp"
#include "yaml_reader.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

using namespace roofline;
using namespace roofline::detail;
using roofline::test::contains;

namespace {

/// The value of the top-level key `key` of `root` (a mapping).
yaml_node value_of(const yaml_node &root, const std::string &key) {
  REQUIRE(root.is_map());
  for (std::size_t i = 0; i < root.size(); ++i)
    if (root.key(i).scalar() == key)
      return root.value(i);
  FAIL("no key " << key);
  return {};
}

/// The input_error that `run` must raise (`text` shown when it does not).
template <typename Run> input_error thrown(const std::string &text, Run run) {
  try {
    run();
  } catch (const input_error &e) {
    return e;
  }
  FAIL("accepted:\n" << text);
  return input_error("unreachable");
}

/// The input_error that `read` must raise on the tree of `text`, parsed as "t.yaml" (or that
/// parsing must raise).
template <typename Read> input_error error_of(const std::string &text, Read read) {
  return thrown(text, [&] { read(parse_yaml(text, "t.yaml")); });
}

input_error parse_error(const std::string &text) {
  return error_of(text, [](const yaml_node &) {});
}

void check_located(const input_error &e, int line, int column, const std::string &text,
                   const std::string &file = "t.yaml") {
  CAPTURE(std::string(e.what()));
  CHECK(e.where().file == file);
  CHECK(e.where().line == line);
  CHECK(e.where().column == column);
  CHECK(contains(e.message(), text));
}

} // namespace

TEST_CASE("plain empty, ~, null, Null and NULL are null; other spellings and quoted text are not") {
  const yaml_node root = parse_yaml("a: ~\nb: null\nc: Null\nd: NULL\ne:\nf: nUll\ng: ''\n"
                                    "h: '~'\ni: \"null\"\nj: !!str null\n",
                                    "t.yaml");
  for (const char *key : {"a", "b", "c", "d", "e"}) {
    CAPTURE(key);
    CHECK(value_of(root, key).is_null());
    CHECK(describe(value_of(root, key)) == "nothing");
  }
  CHECK(value_of(root, "f").scalar() == "nUll");
  CHECK(value_of(root, "g").is_scalar()); // quoted: a string, even empty
  CHECK(value_of(root, "g").scalar().empty());
  CHECK(describe(value_of(root, "g")) == "''");
  CHECK(value_of(root, "h").scalar() == "~");
  CHECK(value_of(root, "i").scalar() == "null");
  CHECK(value_of(root, "j").scalar() == "null"); // a tag makes it a string, as before
}

TEST_CASE("scalars, lists and mappings keep their text, order and 1-based locations") {
  const yaml_node root =
      parse_yaml("name: t\nlayers:\n  - {name: fc, in: [1, 2]}\n  - \"quoted: 3\"\n", "t.yaml");
  REQUIRE(root.is_map());
  REQUIRE(root.size() == 2);
  CHECK(root.key(0).scalar() == "name");
  CHECK(root.key(1).scalar() == "layers");
  CHECK(location_of(root, "f").to_string() == "f:1:1");
  const yaml_node layers = root.value(1);
  REQUIRE(layers.is_sequence());
  REQUIRE(layers.size() == 2);
  CHECK(describe(layers) == "a list");
  CHECK(describe(layers[0]) == "a mapping");
  CHECK(location_of(layers[0], "f").to_string() == "f:3:5");
  const yaml_node in = layers[0].value(1);
  REQUIRE(in.size() == 2);
  CHECK(in[1].scalar() == "2");
  CHECK(location_of(in[1], "f").to_string() == "f:3:24");
  CHECK(layers[1].scalar() == "quoted: 3");
  CHECK(location_of(layers[1], "f").to_string() == "f:4:5"); // at the opening quote
  CHECK(layers[1].size() == 0);
  CHECK(root.value(0).scalar() == "t");
}

TEST_CASE("an empty text, or one of comments only, is a null root located at the file's start") {
  for (const char *text : {"", "# nothing here\n", "\n\n"}) {
    CAPTURE(text);
    const yaml_node root = parse_yaml(text, "t.yaml");
    CHECK(root.is_null());
    CHECK_FALSE(root.mark().has_value());
    // Before the fix: "t.yaml" alone, so an empty spec file's error had no line and column.
    CHECK(location_of(root, "t.yaml").to_string() == "t.yaml:1:1");
  }
}

TEST_CASE("an alias is its anchor's node, shared rather than copied") {
  const yaml_node root = parse_yaml(
      "base: &b {type: linear, in: 8}\nx: *b\ny: [*b, *b]\nname: &n fc\nz: *n\n", "t.yaml");
  const yaml_node base = value_of(root, "base");
  CHECK(value_of(root, "x").same_node_as(base));
  CHECK(value_of(root, "y")[0].same_node_as(base));
  CHECK(value_of(root, "y")[1].same_node_as(base));
  CHECK(location_of(value_of(root, "x"), "f").to_string() == "f:1:7"); // the anchored node's place
  CHECK(value_of(root, "z").scalar() == "fc");
  // Nested aliases that would expand to 10^9 nodes parse at once: nothing is copied.
  std::string laughs = "l0: &l0 [a, a, a, a, a, a, a, a, a, a]\n";
  for (int level = 1; level <= 9; ++level) {
    const std::string previous = "*l" + std::to_string(level - 1);
    laughs += "l" + std::to_string(level) + ": &l" + std::to_string(level) + " [";
    for (int i = 0; i < 10; ++i)
      laughs += (i ? ", " : "") + previous;
    laughs += "]\n";
  }
  const yaml_node top = value_of(parse_yaml(laughs, "t.yaml"), "l9");
  CHECK(top.size() == 10);
  CHECK(top[0][9][9][9][9][9][9][9][9][9].scalar() == "a");
}

TEST_CASE("an alias to no anchor is a located error") {
  check_located(parse_error("a: 1\nb: *nowhere\n"), 2, 4, "`*nowhere`");
  // An anchor defined later does not count.
  check_located(parse_error("a: *later\nb: &later 1\n"), 1, 4, "`*later`");
}

TEST_CASE("a second document is refused at its start; a document end marker alone is not") {
  const input_error e = parse_error("name: t\nlayers: []\n---\nname: u\n");
  check_located(e, 3, 1, "a second YAML document");
  CHECK(contains(e.what(), "t.yaml:3:1: "));
  check_located(parse_error("a: 1\n...\n---\nb: 2\n"), 3, 1, "a second YAML document");
  CHECK(value_of(parse_yaml("---\na: 1\n...\n", "t.yaml"), "a").scalar() == "1");
}

TEST_CASE("syntax and encoding errors are located input_errors with libyaml's reason") {
  // The flow mapping opened on line 1 is never closed: noticed at the end of the input.
  check_located(parse_error("layers:\n  - {name: fc, type: linear\n"), 3, 1,
                "YAML syntax error: did not find expected ',' or '}' while parsing a flow mapping");
  check_located(parse_error("a:\n  b: 1\n c: 2\n"), 3, 2, "YAML syntax error");
  check_located(parse_error("a: 1\n\tb: 2\n"), 2, 1, "YAML syntax error");
  // Not UTF-8 (Latin-1 é), and a control character: located by the byte libyaml stops at.
  // Located at the character's first byte (libyaml stops at the byte after it).
  check_located(parse_error("a: 1\nb: caf\xe9 au lait\n"), 2, 7,
                "not valid UTF-8 at byte 0xE9 (invalid trailing UTF-8 octet)");
  check_located(parse_error("a: 1\nb: \xff\n"), 2, 4, "not valid UTF-8 at byte 0xFF");
  check_located(parse_error("a: 1\nb: ok \xe2\x82\n"), 2, 7, "not valid UTF-8 at byte 0xE2");
  check_located(parse_error("a: ok \xe2\x82"), 1, 7, "not valid UTF-8 at byte 0xE2");
  check_located(parse_error("a: \"x\x01y\"\n"), 1, 6,
                "the character U+0001 is not allowed in YAML text; write it as an escape");
}

TEST_CASE("any valid UTF-8 is read as it is, in plain and quoted scalars") {
  for (const std::string text :
       {"\xc3\xa9", "\xe2\x9c\x93", "\xe4\xb8\xad\xe6\x96\x87", "\xf0\x9f\x98\x80",
        "\xf4\x8f\xbf\xbf", "\xef\xbf\xbd", "\xed\x9f\xbf", "\xee\x80\x80"}) {
    CAPTURE(text);
    CHECK(value_of(parse_yaml("a: x" + text + "y\n", "t.yaml"), "a").scalar() == "x" + text + "y");
    CHECK(value_of(parse_yaml("a: \"x" + text + "y\"\n", "t.yaml"), "a").scalar() ==
          "x" + text + "y");
  }
}

TEST_CASE("lists and mappings nested past max_yaml_depth are refused where the limit is crossed, "
          "at once") {
  const auto nested = [](std::size_t depth) {
    return std::string(depth, '[') + std::string(depth, ']') + "\n";
  };
  CHECK(parse_yaml(nested(max_yaml_depth), "t.yaml").is_sequence());
  check_located(parse_error(nested(max_yaml_depth + 1)), 1, 129,
                "nested too deeply: lists and mappings more than 128 levels deep (the limit)");
  // A million levels: libyaml alone would take minutes (its scanner revisits every open level).
  check_located(parse_error(nested(1'000'000)), 1, 129, "nested too deeply");
  std::string blocks = "a:\n";
  for (std::size_t i = 1; i <= 200; ++i)
    blocks += std::string(2 * i, ' ') + "b:\n";
  check_located(parse_error(blocks), 129, 257, "nested too deeply");
}

TEST_CASE("parse_json reads what JSON allows and YAML does not, located in the JSON text") {
  // Python's json.dumps writes a character past U+FFFF as an escaped surrogate pair; DEL, the C1
  // controls, U+FFFE/U+FFFF and the line breaks NEL, U+2028, U+2029 may stand raw in a string.
  const yaml_node root = parse_json("{\"e\": \"\\ud83d\\ude00!\", \"c\": "
                                    "\"a\x7f\xc2\x80\xc2\x9b\xc2\x85\xe2\x80\xa8\xef\xbf\xbe\", "
                                    "\"q\": \"\\\"\\\\ud83d\", \"n\": 1}\n",
                                    "c.json");
  CHECK(value_of(root, "e").scalar() == "\xf0\x9f\x98\x80!");
  CHECK(value_of(root, "c").scalar() == "a\x7f\xc2\x80\xc2\x9b\xc2\x85\xe2\x80\xa8\xef\xbf\xbe");
  CHECK(value_of(root, "q").scalar() == "\"\\ud83d"); // an escaped backslash, then text
  // Columns count the JSON text's characters, before and after what was rewritten.
  CHECK(location_of(value_of(root, "c"), "c.json").to_string() == "c.json:1:29");
  CHECK(location_of(value_of(root, "n"), "c.json").to_string() == "c.json:1:63");
  try {
    parse_json("{\"e\": \"\\ud83d\\ude00\", \"x\": [1,\n \"\\ud83d\\ude00\" \"b\"]}", "c.json");
    FAIL("accepted");
  } catch (const input_error &e) {
    CHECK(e.where().to_string() == "c.json:2:17");
  }
  // A lone surrogate is no character: refused, located.
  try {
    parse_json("{\"e\": \"\\ud83d\"}", "c.json");
    FAIL("accepted");
  } catch (const input_error &e) {
    CHECK(e.where().line == 1);
    CHECK(contains(e.message(), "invalid Unicode character escape"));
  }
}

TEST_CASE("finite_number reads a whole decimal number and nothing else") {
  const yaml_node root = parse_yaml("[0.5, +3, -2e-6, '7', 1E3, .inf, -.inf, .nan, 1e999, 0x10, "
                                    "abc, '1.5 ', +-1, '', ~, [1]]",
                                    "t.yaml");
  CHECK(finite_number(root[0]) == 0.5);
  CHECK(finite_number(root[1]) == 3.0);
  CHECK(finite_number(root[2]) == -2e-6);
  CHECK(finite_number(root[3]) == 7.0); // a quoted number reads, as before
  CHECK(finite_number(root[4]) == 1000.0);
  for (std::size_t i = 5; i < root.size(); ++i) {
    CAPTURE(describe(root[i]));
    CHECK_FALSE(finite_number(root[i]).has_value());
  }
}

TEST_CASE("yaml_map: a null key is named `null`, a duplicate key points at its second place") {
  const auto map_error = [](const std::string &text) {
    return error_of(text, [](const yaml_node &root) {
      (void)yaml_map(root, "t.yaml", "thing", {"a", "b"});
    });
  };
  check_located(map_error("a: 1\n~: 2\n"), 2, 1, "thing: unknown key `null`");
  check_located(map_error("a: 1\nb: 2\na: 3\n"), 3, 1, "duplicate key `a` (first given at line 1)");
  const yaml_map map(parse_yaml("a: x\nb: [p, q]\n", "t.yaml"), "t.yaml", "thing", {"a", "b"});
  CHECK(map.string("a") == "x");
  CHECK(map.strings_or_empty("b") == std::vector<std::string>{"p", "q"});
  CHECK(map.where("b").to_string() == "t.yaml:2:4");
}

namespace {

void check_json_located(const std::string &text, int line, int column, const std::string &part) {
  check_located(thrown(text, [&] { parse_json(text, "c.json"); }), line, column, part, "c.json");
}

} // namespace

TEST_CASE("parse_json refuses comments and trailing commas where they stand") {
  // A comment once swallowed the next key (YAML's `#`-less reading): now refused where it starts.
  check_json_located("{\"model_type\": \"mistral\", // the family\n \"sliding_window\": 4096}", 1,
                     27, "comments are not JSON");
  check_json_located("{\n  /* sizes */ \"hidden_size\": 8\n}", 2, 3, "comments are not JSON");
  check_json_located("{\"a\": 1 /* x */}", 1, 9, "comments are not JSON");
  check_json_located("{\"a\": [1, 2,\n ], \"b\": 2}", 1, 12, "trailing commas are not JSON");
  check_json_located("{\"a\": 1,\n \"b\": 2,\n}", 2, 8, "a comma before `}`: trailing commas");
  check_json_located("{'a': 1}", 1, 2, "double quotes");
  check_json_located("{\"a\": NaN}", 1, 7, "got `NaN`");
  check_json_located("{\"a\": 01}", 1, 7, "leading zero");
  check_json_located("{\"a\": 1.}", 1, 9, "expected a digit");
  check_json_located("{\"a\": \"x\ny\"}", 1, 9, "a line break in a string");
  check_json_located("{\"a\": \"x\x01\"}", 1, 9, "U+0001");
  check_json_located("{\"a\": \"\\q\"}", 1, 8, "invalid escape `\\q`");
  check_json_located("{\"a\": \"open", 1, 7, "not closed");
  check_json_located("{\"a\": 1} {\"b\": 2}", 1, 10, "one value per file");
  check_json_located("{\"a\" 1}", 1, 6, "`:` after the key");
  check_json_located("", 1, 1, "expected a value");
  check_json_located("{\"\xc3\xa9\": \xff}", 1, 7, "not valid UTF-8 at byte 0xFF");
  check_json_located("\r\n[1,\r\n 2 3]", 3, 4, "expected `,` or `]`");
}

TEST_CASE("parse_json reads valid JSON: long keys, escapes, numbers as written, a BOM") {
  const std::string key(1500, 'k');
  const yaml_node root =
      parse_json("\xEF\xBB\xBF{\"" + key +
                     "\": 1, \"s\": \"a\\\"b\\\\c\\/\\b\\f\\n\\r\\t\\u00e9\\u0000z\","
                     " \"n\": [-0, 1e999, 2.5E-3, true, false, null], \"q\": \"7\","
                     " \"o\": {}, \"l\": []}",
                 "c.json");
  CHECK(value_of(root, key).scalar() == "1");
  CHECK(value_of(root, "s").scalar() == std::string("a\"b\\c/\b\f\n\r\t\xc3\xa9\0z", 15));
  const yaml_node n = value_of(root, "n");
  REQUIRE(n.size() == 6);
  CHECK(n[0].scalar() == "-0");
  CHECK(n[1].scalar() == "1e999"); // valid JSON; finite_number refuses it where a number is read
  CHECK(n[2].scalar() == "2.5E-3");
  CHECK((n[3].scalar() == "true" && !n[3].quoted()));
  CHECK(n[5].is_null());
  CHECK(value_of(root, "q").quoted());
  CHECK_FALSE(n[0].quoted());
  CHECK((value_of(root, "o").is_map() && value_of(root, "o").size() == 0));
  CHECK((value_of(root, "l").is_sequence() && value_of(root, "l").size() == 0));
  // A key of 1,500 characters (libyaml's implicit keys stop at 1,024) is read, and located.
  CHECK(location_of(value_of(root, "s"), "c.json").to_string() == "c.json:1:1514");
  // Depth: the limit shared with YAML.
  check_json_located(std::string(max_yaml_depth + 1, '[') + std::string(max_yaml_depth + 1, ']'), 1,
                     129, "nested too deeply");
  CHECK(parse_json(std::string(max_yaml_depth, '[') + std::string(max_yaml_depth, ']'), "c.json")
            .is_sequence());
}

TEST_CASE("yaml_map finds a key given twice among 200,000 in linear time") {
  std::string json = "{";
  for (int i = 0; i < 200'000; ++i)
    json += "\"k" + std::to_string(i) + "\": " + std::to_string(i) + ",\n";
  json += "\"k17\": 0}";
  const yaml_node root = parse_json(json, "c.json");
  try {
    (void)yaml_map(root, "c.json", "config", yaml_map::any_keys{});
    FAIL("accepted");
  } catch (const input_error &e) {
    CHECK(e.where().line == 200'001);
    CHECK(contains(e.message(), "config: duplicate key `k17` (first given at line 18)"));
  }
  json.replace(json.size() - 9, 5, "\"k_0\""); // unique again: every key found
  const yaml_map map(parse_json(json, "c.json"), "c.json", "config", yaml_map::any_keys{});
  CHECK(map.positive_int("k199999") == 199'999);
  CHECK(map.has("k_0"));
}

TEST_CASE("a value quoted in a message has its control characters escaped, NUL included") {
  const yaml_node root = parse_json("{\"a\": \"x\\u0000y\\u001b[2J\"}", "c.json");
  const std::string shown = describe(value_of(root, "a"));
  CHECK(shown == "'x\\x00y\\x1b[2J'");
}

TEST_CASE("a file past max_text_file_bytes is refused from its size, before a byte is read") {
  namespace fs = std::filesystem;
  const fs::path file = fs::temp_directory_path() / "roofline-yaml-reader-test-5gib.json";
  {
    std::ofstream create(file); // then made 5 GiB long, sparse: no disk and no memory spent
  }
  fs::resize_file(file, std::uintmax_t{5} << 30);
  const input_error e = thrown("a 5 GiB file", [&] { (void)read_text_file(file, "model config"); });
  fs::remove(file);
  CAPTURE(std::string(e.what()));
  CHECK(e.where().file == file.string());
  // The size in the message comes from stat: the old reader read it whole, then ran out of memory.
  CHECK(contains(e.message(), "model config is 5368709120 bytes, more than the 64 MiB"));
}

TEST_CASE("a file at the size limit's edge is read whole, one past it refused") {
  namespace fs = std::filesystem;
  const fs::path file = fs::temp_directory_path() / "roofline-yaml-reader-test-edge.yaml";
  {
    std::ofstream create(file, std::ios::binary);
    create << "a: 1\n";
  }
  CHECK(read_text_file(file, "network file") == "a: 1\n");
  fs::resize_file(file, max_text_file_bytes);
  CHECK(read_text_file(file, "network file").size() == max_text_file_bytes);
  fs::resize_file(file, max_text_file_bytes + 1);
  CHECK(contains(
      thrown("one byte too many", [&] { (void)read_text_file(file, "network file"); }).message(),
      "more than the 64 MiB"));
  fs::remove(file);
}
