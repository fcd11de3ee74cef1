// SPDX-License-Identifier: Apache-2.0
#include "svg.hpp"

#include "text_format.hpp"
#include "utf8.hpp"

#include <cmath>

namespace roofline::detail {

std::string escape_xml(const std::string &text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const char ch = text[i];
    if (static_cast<unsigned char>(ch) >= 0x80) {
      // Only well-formed UTF-8 in a document that declares it; a stray byte as U+FFFD. C1 and
      // bidirectional-text controls shown as the terminal shows them (printable_text).
      const std::size_t length = utf8_sequence(std::string_view(text).substr(i));
      // U+FFFE and U+FFFF are not XML characters at all: shown as their escapes.
      const std::string sequence = text.substr(i, length);
      const std::uint32_t code = length == 0 ? 0 : utf8_code_point(sequence, length);
      if (length == 0)
        out += "\xEF\xBF\xBD";
      else if (code == 0xFFFE || code == 0xFFFF)
        out += fmt::format("\\u{:04x}", code);
      else
        out += printable_text(sequence);
      i += std::max<std::size_t>(length, 1);
      continue;
    }
    switch (ch) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    default:
      // Control characters are not allowed in XML 1.0 text (DEL is, but shows nothing):
      // escaped as on a terminal; tabs and line breaks are white space.
      if ((static_cast<unsigned char>(ch) < 0x20 || ch == 0x7F) && ch != '\t' && ch != '\n')
        out += control_escape(static_cast<unsigned char>(ch));
      else
        out += ch;
    }
    ++i;
  }
  return out;
}

std::string decade_text(int power) {
  if (power < 0)
    return fmt::format("{:.{}f}", std::pow(10.0, power), -power);
  static constexpr const char *prefixes[] = {"", " k", " M", " G", " T", " P", " E", " Z"};
  const int group = std::min(power / 3, static_cast<int>(std::size(prefixes)) - 1);
  return fmt::format("{:.0f}{}", std::pow(10.0, power - 3 * group), prefixes[group]);
}

void svg_open(std::string &out, double height, const std::string &title) {
  put(out,
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} "
      "{1}\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"12\" "
      "role=\"img\">\n",
      svg_width, height);
  put(out, "<title>{}</title>\n", escape_xml(title));
  put(out, "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n");
}

void svg_heading(std::string &out, double left, const std::string &title,
                 const std::string &subtitle) {
  put(out, "<text x=\"{:.1f}\" y=\"24\" font-size=\"16\" font-weight=\"bold\">{}</text>\n", left,
      escape_xml(title));
  put(out, "<text x=\"{:.1f}\" y=\"43\" fill=\"#555555\">{}</text>\n", left, escape_xml(subtitle));
}

void svg_log_axes(std::string &out, const plot_frame &f,
                  const std::function<std::string(int)> &x_tick,
                  const std::function<std::string(int)> &y_tick, const std::string &x_title,
                  const std::string &y_title) {
  const double right = f.left + f.width, bottom = f.top + f.height;
  for (int p = f.x.low; p <= f.x.high; ++p) {
    const double x = f.x_of(std::pow(10.0, p));
    put(out,
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" "
        "stroke=\"#dddddd\"/>\n",
        x, f.top, bottom);
    put(out, "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" fill=\"#333333\">{}</text>\n",
        x, bottom + 17, escape_xml(x_tick(p)));
  }
  for (int p = f.y.low; p <= f.y.high; ++p) {
    const double y = f.y_of(std::pow(10.0, p));
    put(out,
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" "
        "stroke=\"#dddddd\"/>\n",
        f.left, y, right);
    put(out, "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\" fill=\"#333333\">{}</text>\n",
        f.left - 6, y + 4, escape_xml(y_tick(p)));
  }
  put(out,
      "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" "
      "stroke=\"#888888\"/>\n",
      f.left, f.top, f.width, f.height);
  put(out, "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n",
      f.left + f.width / 2, bottom + 36, escape_xml(x_title));
  put(out,
      "<text transform=\"translate(18 {:.1f}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
      f.top + f.height / 2, escape_xml(y_title));
}

double plot_frame::x_of(double intensity) const {
  return left + (std::log10(intensity) - x.low) / (x.high - x.low) * width;
}

double plot_frame::y_of(double flop_per_s) const {
  return top + height - (std::log10(flop_per_s) - y.low) / (y.high - y.low) * height;
}

} // namespace roofline::detail
