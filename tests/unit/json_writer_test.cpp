// SPDX-License-Identifier: Apache-2.0
#include "json_writer.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <stdexcept>

using roofline::detail::append_json_number;
using roofline::detail::json_writer;

namespace {

std::string number_text(double x) {
  std::string out;
  append_json_number(out, x);
  return out;
}

/// A random tree of every JSON type, keys drawn so that objects need sorting.
nlohmann::json random_tree(std::mt19937_64 &random, int depth) {
  const auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(random); };
  const int kind = depth >= 3 ? 3 + pick(5) : pick(8);
  switch (kind) {
  case 0:
  case 1: {
    nlohmann::json object = nlohmann::json::object();
    static const char *const keys[] = {"b", "a", "ab", "ab c", "z_1", "Z", "é", "k\"ey", "", "0"};
    for (int i = pick(6); i > 0; --i)
      object[keys[pick(10)]] = random_tree(random, depth + 1);
    return object;
  }
  case 2: {
    nlohmann::json array = nlohmann::json::array();
    for (int i = pick(5); i > 0; --i)
      array.push_back(random_tree(random, depth + 1));
    return array;
  }
  case 3: return std::uniform_int_distribution<std::int64_t>()(random);
  case 4: return std::uniform_real_distribution<double>(-1e6, 1e6)(random);
  case 5: {
    static const char *const texts[] = {"plain", "quote \" and \\ back", "tab\tnew\nline\x01",
                                        "ünïcode ✓", ""};
    return texts[pick(5)];
  }
  case 6: return pick(2) == 1;
  default: return nullptr;
  }
}

} // namespace

TEST_CASE("json_writer numbers read as nlohmann::json::dump writes them") {
  for (double x : {0.0,
                   -0.0,
                   1.0,
                   -1.0,
                   0.1,
                   1e-4,
                   1.5e-4,
                   9.99e-5,
                   1e-5,
                   123456.75,
                   1e15,
                   1.5e15,
                   1e16,
                   99999999999999.9,
                   999999999999999.0,
                   1e300,
                   -2.5e-300,
                   5e-324,
                   std::numeric_limits<double>::max(),
                   1.0 / 3,
                   2.0 / 3,
                   6.02214076e23})
    CHECK(number_text(x) == nlohmann::json(x).dump());
  CHECK(number_text(std::nan("")) == "null");
  CHECK(number_text(std::numeric_limits<double>::infinity()) == "null");

  // Doubles of every magnitude, from random bits: each reads back exactly, in nlohmann's layout.
  // nlohmann's Grisu2 is not always the shortest, nor the nearest of the shortest (about 1 in
  // 800 here takes one digit more, 1 in 1,800 ends in another digit); ours is both.
  std::mt19937_64 random(2026);
  int longer = 0;
  for (int i = 0; i < 200000; ++i) {
    const std::uint64_t bits = random();
    double x;
    std::memcpy(&x, &bits, sizeof x);
    if (!std::isfinite(x))
      continue;
    const std::string ours = number_text(x), theirs = nlohmann::json(x).dump();
    CHECK(nlohmann::json::parse(ours).get<double>() == x);
    if (ours.size() > theirs.size())
      ++longer;
  }
  CHECK(longer == 0);
}

TEST_CASE("json_writer writes what nlohmann::json::dump(2) writes, keys sorted") {
  std::mt19937_64 random(14);
  for (int i = 0; i < 500; ++i) {
    nlohmann::json tree = nlohmann::json::object();
    tree["root"] = random_tree(random, 0);
    tree["another"] = random_tree(random, 1);
    std::ostringstream out;
    json_writer w(out);
    w.value(tree);
    w.finish();
    CHECK(out.str() == tree.dump(2));
  }
}

TEST_CASE("json_writer sorts the fields of inner objects and refuses malformed use") {
  std::ostringstream out;
  json_writer w(out);
  w.begin_object();
  w.key("inner");
  w.begin_object();
  w.field("zeta", 1);
  w.key("alpha");
  w.begin_array();
  w.value(std::optional<int>{});
  w.value(std::optional<double>(0.5));
  w.end_array();
  w.field("mid", "text");
  w.end_object();
  w.end_object();
  w.finish();
  CHECK(out.str() == "{\n  \"inner\": {\n    \"alpha\": [\n      null,\n      0.5\n    ],\n"
                     "    \"mid\": \"text\",\n    \"zeta\": 1\n  }\n}");

  // The outermost object is streamed: its keys must come in order.
  std::ostringstream ignored;
  json_writer unordered(ignored);
  unordered.begin_object();
  unordered.field("b", 1);
  CHECK_THROWS_AS(unordered.field("a", 2), std::logic_error);

  json_writer twice(ignored);
  twice.begin_object();
  twice.key("outer");
  twice.begin_object();
  twice.field("a", 1);
  twice.field("a", 2);
  CHECK_THROWS_AS(twice.end_object(), std::logic_error);

  json_writer keyless(ignored);
  keyless.begin_object();
  CHECK_THROWS_AS(keyless.value(1), std::logic_error);

  json_writer open(ignored);
  open.begin_array();
  CHECK_THROWS_AS(open.finish(), std::logic_error);
}

TEST_CASE("json_writer keeps the document valid JSON when a string is not UTF-8") {
  std::ostringstream out;
  json_writer w(out);
  w.value(std::string_view("ok \xC3\xA9 bad \xFF\xC3 end"));
  w.finish();
  const std::string text = out.str();
  CHECK(text == "\"ok \xC3\xA9 bad \xEF\xBF\xBD\xEF\xBF\xBD end\"");
  CHECK(nlohmann::json::parse(text).get<std::string>() == "ok é bad \xEF\xBF\xBD\xEF\xBF\xBD end");
}

TEST_CASE("json_writer escapes DEL, the C1 and the bidirectional-text controls: the same string, "
          "safe on a terminal") {
  std::ostringstream out;
  json_writer w(out);
  const std::string name =
      "a\x1b[2J\x7f\xC2\x9B\xE2\x80\xAE\xE2\x81\xA6\xC2\xA0\xE2\x9C\x93\xF0\x9F\x98\x80";
  w.value(std::string_view(name));
  w.finish();
  CHECK(out.str() ==
        "\"a\\u001b[2J\\u007f\\u009b\\u202e\\u2066\xC2\xA0\xE2\x9C\x93\xF0\x9F\x98\x80\"");
  CHECK(nlohmann::json::parse(out.str()).get<std::string>() == name);
}

TEST_CASE("json_writer escapes the byte-order mark and noncharacters, past 16 bits as a surrogate "
          "pair: the same string") {
  std::ostringstream out;
  json_writer w(out);
  const std::string name = "\xEF\xBB\xBF"
                           "a\xEF\xBF\xBE"
                           "b\xF0\x9F\xBF\xBF";
  w.value(std::string_view(name));
  w.finish();
  CHECK(out.str() == "\"\\ufeffa\\ufffeb\\ud83f\\udfff\"");
  CHECK(nlohmann::json::parse(out.str()).get<std::string>() == name);
}
