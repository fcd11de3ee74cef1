// SPDX-License-Identifier: Apache-2.0
// printable_text and the human formats' escaping of names: no control sequence of a layer's name
// reaches a terminal, a Markdown renderer or a CSV reader; any other UTF-8 is shown as it is.
#include "roofline/common/error.hpp"
#include "roofline/output/output_format.hpp"

#include "text_table.hpp"

#include <doctest/doctest.h>

#include <sstream>
#include <string>

using namespace roofline;
using namespace roofline::detail;

TEST_CASE("printable_text escapes what a terminal acts on and keeps every other character") {
  CHECK(printable_text("fc1/attn.q_proj") == "fc1/attn.q_proj");
  CHECK(printable_text("h\xC3\xA9llo \xE2\x9C\x93 \xE4\xB8\xAD \xF0\x9F\x98\x80 \xC2\xA0") ==
        "h\xC3\xA9llo \xE2\x9C\x93 \xE4\xB8\xAD \xF0\x9F\x98\x80 \xC2\xA0");
  CHECK(printable_text("a\nb\rc\td") == "a\\nb\\rc\\td");
  CHECK(printable_text("\x1b[31mred\x1b]0;title\x07") == "\\x1b[31mred\\x1b]0;title\\x07");
  CHECK(printable_text(std::string("nul\0!", 5)) == "nul\\x00!");
  CHECK(printable_text("del\x7f") == "del\\x7f");
  // C1 controls (the 8-bit CSI U+009B) and bidirectional-text controls (U+202E, U+2066, U+200F).
  CHECK(printable_text("\xC2\x9B"
                       "2J") == "\\u009b2J");
  CHECK(printable_text("\xE2\x80\xAEgnp.exe\xE2\x81\xA6\xE2\x80\x8F") ==
        "\\u202egnp.exe\\u2066\\u200f");
  // Invisible characters and noncharacters: the byte-order mark, U+FFFE, zero-width space and
  // joiner, the line separator, the word joiner, the soft hyphen; a letter after them stays.
  CHECK(printable_text("\xEF\xBB\xBF"
                       "a\xEF\xBF\xBE"
                       "b\xE2\x80\x8B\xE2\x80\x8D\xE2\x80\xA8\xE2\x81\xA0\xC2\xAD"
                       "c") == "\\ufeffa\\ufffeb\\u200b\\u200d\\u2028\\u2060\\u00adc");
  CHECK(printable_text("\xF0\x9F\xBF\xBF") == "\\u1ffff"); // a noncharacter of plane 1
  // Bytes that are not UTF-8: their value.
  CHECK(printable_text("caf\xE9 \xFF\xC3") == "caf\\xe9 \\xff\\xc3");
}

TEST_CASE("markdown_text also writes a `<` that could open an HTML tag as &lt;") {
  CHECK(markdown_text("<img src=x onerror=alert(1)>") == "&lt;img src=x onerror=alert(1)>");
  CHECK(markdown_text("</b><!-- x --><?php") == "&lt;/b>&lt;!-- x -->&lt;?php");
  CHECK(markdown_text("intensity 0.97 < ridge 295, a<3") == "intensity 0.97 < ridge 295, a<3");
  CHECK(markdown_text("x\n# heading") == "x\\n# heading");
}

TEST_CASE("the table, Markdown and CSV renderers escape every header and cell") {
  text_table t;
  t.columns = {{"la\x1b[1myer", "layer", align::left}, {"n", "n", align::right}};
  t.rows = {{{"fc\x1b[2J|a,b\"c\nd"}, {"64"}}};
  std::ostringstream aligned, markdown, csv;
  render_aligned(t, aligned, false);
  render_markdown(t, markdown);
  render_csv(t, csv);
  CHECK(aligned.str() == "la\\x1b[1myer         n\nfc\\x1b[2J|a,b\"c\\nd  64\n");
  CHECK(markdown.str() ==
        "| la\\x1b[1myer | n |\n| --- | ---: |\n| fc\\x1b[2J\\|a,b\"c\\nd | 64 |\n");
  CHECK(csv.str() == "layer,n\n\"fc\\x1b[2J|a,b\"\"c\\nd\",64\n");
}

TEST_CASE("shown_value: a message's quote of a value, escaped and cut to a readable length") {
  CHECK(shown_value("hidden_size") == "hidden_size");
  CHECK(shown_value(std::string("a\0b", 3)) == "a\\x00b"); // a NUL no longer ends the message
  const std::string long_value(200000, 'x');
  CHECK(shown_value(long_value) == std::string(60, 'x') + "… (200000 bytes)");
  // Cut on characters, never inside one: 61 two-byte characters keep 60.
  std::string accents;
  for (int i = 0; i < 61; ++i)
    accents += "\xC3\xA9";
  std::string kept;
  for (int i = 0; i < 60; ++i)
    kept += "\xC3\xA9";
  CHECK(shown_value(accents) == kept + "… (122 bytes)");
  CHECK(shown_value(std::string(60, 'y')) == std::string(60, 'y'));
}

TEST_CASE("an error's what() is its whole message: a NUL in it is written \\x00") {
  const std::string with_nul("layer `a\0b`: unknown key", 24);
  CHECK(std::string(error(with_nul).what()) == "layer `a\\x00b`: unknown key");
  const input_error located({"net.yaml", 3, 5}, with_nul);
  CHECK(std::string(located.what()) == "net.yaml:3:5: layer `a\\x00b`: unknown key");
  CHECK(located.message() == "layer `a\\x00b`: unknown key");
}
