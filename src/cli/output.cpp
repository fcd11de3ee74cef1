// SPDX-License-Identifier: Apache-2.0
#include "output.hpp"

#include "option_words.hpp"

#include "roofline/common/atomic_file.hpp"
#include "roofline/common/error.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <streambuf>
#include <sys/stat.h>
#include <unistd.h>

namespace roofline::cli {

namespace {

bool colour_terminal() {
  const char *term = std::getenv("TERM");
  return isatty(STDOUT_FILENO) && std::getenv("NO_COLOR") == nullptr &&
         !(term && std::string(term) == "dumb");
}

output_format display_format(const output_choice &choice) {
  if (auto format = parse_output_format(choice.format))
    return *format;
  throw input_error("unknown --format `" + choice.format + "`; expected " +
                    names_of<output_format>().choices() +
                    did_you_mean(choice.format, names_of<output_format>().names()));
}

/// A stream into a string we keep: a report of 100,000 ops is 190 MB of JSON, and
/// std::ostringstream hands its text out only as a copy.
class string_buffer final : public std::streambuf {
public:
  std::string text;

private:
  int_type overflow(int_type c) override {
    if (!traits_type::eq_int_type(c, traits_type::eof()))
      text += traits_type::to_char_type(c);
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char *s, std::streamsize n) override {
    text.append(s, static_cast<std::size_t>(n));
    return n;
  }
};

bool stdout_was_closed = false;

std::string render(const report_writer &write, output_format format, bool colour,
                   const output_choice &choice) {
  string_buffer buffer;
  std::ostream text(&buffer);
  write(format, text, write_options{colour, choice.wide, choice.columns, in_cli_words});
  return std::move(buffer.text);
}

/// The format `file`'s extension names; input_error naming `option` and the `expected` ones
/// when none.
output_format checked_format(const std::string &option, const std::string &file,
                             const char *expected) {
  const auto file_format = format_for_file(file);
  if (!file_format)
    throw input_error(option + " " + file + ": cannot tell the format from the extension; use " +
                      expected);
  return *file_format;
}

/// A file to write: the option that names it, its path, its text.
struct file_output {
  std::string option, file, text;
};

/// Every file the choice names, rendered; `display` reused where its format and colour match.
std::vector<file_output> rendered_files(const output_choice &choice, const report_writer &write,
                                        output_format format, bool colour,
                                        const std::string &display) {
  std::vector<file_output> files;
  const auto add_file = [&](const std::string &option, const std::string &file,
                            output_format file_format) {
    files.push_back(
        {option, file,
         file_format == format && !colour ? display : render(write, file_format, false, choice)});
  };
  if (!choice.file.empty())
    add_file("--output", choice.file,
             checked_format("--output", choice.file, ".json, .csv, .md, .txt, .html or .svg"));
  if (!choice.plot.empty()) {
    if (checked_format("--plot", choice.plot, ".svg") != output_format::svg)
      throw input_error("--plot " + choice.plot + ": the chart is SVG; name it .svg");
    add_file("--plot", choice.plot, output_format::svg);
  }
  if (!choice.html.empty()) {
    if (checked_format("--html", choice.html, ".html") != output_format::html)
      throw input_error("--html " + choice.html + ": the page is HTML; name it .html");
    add_file("--html", choice.html, output_format::html);
  }
  if (!choice.network_yaml_file.empty())
    files.push_back({"--emit-yaml", choice.network_yaml_file, choice.network_yaml});
  return files;
}

/// What makes two paths one file: its device and inode where it exists (so `./r.json`, `r.json`
/// and a symbolic or hard link to it are one), else its absolute path in normal form.
struct file_identity {
  bool exists = false, character_device = false;
  dev_t device = 0;
  ino_t inode = 0;
  std::string path;

  explicit file_identity(const std::string &file) {
    struct stat st {};
    if (::stat(file.c_str(), &st) == 0) {
      exists = true;
      character_device = S_ISCHR(st.st_mode);
      device = st.st_dev;
      inode = st.st_ino;
      return;
    }
    std::error_code ec;
    const std::filesystem::path absolute = std::filesystem::absolute(file, ec);
    std::filesystem::path normal = std::filesystem::weakly_canonical(absolute, ec);
    path = (ec ? absolute.lexically_normal() : normal).string();
  }
  /// Whether writing one replaces the other (a terminal or /dev/null replaces nothing).
  bool overlaps(const file_identity &other) const {
    if (exists != other.exists)
      return false;
    return exists ? device == other.device && inode == other.inode && !character_device
                  : path == other.path;
  }
};

} // namespace

void emit(const output_choice &choice, const report_writer &write) {
  const output_format format = display_format(choice);
  const bool colour = colour_terminal();
  const std::string display = render(write, format, colour, choice);
  // Every file rendered before any is written.
  for (const file_output &output : rendered_files(choice, write, format, colour, display)) {
    try {
      write_file_atomically(output.file, output.text);
    } catch (const error &e) {
      throw input_error(output.option + " " + e.what());
    }
  }
  write_stdout(display);
}

void mark_stdout_closed() {
  stdout_was_closed = true;
}

bool stdout_closed() {
  return stdout_was_closed;
}

std::string stdout_problem(int code) {
  return std::string("cannot write to standard output: ") + std::strerror(code);
}

void write_stdout(std::string_view text) {
  if (stdout_was_closed)
    throw error(stdout_problem(EBADF));
  std::streambuf *const out = std::cout.rdbuf();
  const auto size = static_cast<std::streamsize>(text.size());
  errno = 0; // what stdio's failed write(2) leaves is the reason
  if (out->sputn(text.data(), size) != size || out->pubsync() != 0)
    throw error(stdout_problem(errno != 0 ? errno : EIO));
}

void refuse_overlapping_files(const std::vector<named_file> &inputs,
                              const std::vector<named_file> &outputs) {
  std::vector<std::pair<named_file, file_identity>> seen;
  for (const named_file &input : inputs)
    seen.emplace_back(input, file_identity(input.path));
  for (const named_file &output : outputs) {
    if (output.path.empty())
      continue;
    const file_identity identity(output.path);
    // Refused now, as the writer would refuse it later: a link's missing target is a file that
    // another output may create first, which the link's write would then replace.
    if (struct stat link{};
        !identity.exists && ::lstat(output.path.c_str(), &link) == 0 && S_ISLNK(link.st_mode))
      throw input_error(output.name + " " + output.path +
                        " is a symbolic link to a file that does not exist; name the file to "
                        "write, or create it first");
    for (std::size_t i = 0; i < seen.size(); ++i) {
      const auto &[earlier, earlier_identity] = seen[i];
      if (!identity.overlaps(earlier_identity))
        continue;
      if (i < inputs.size())
        throw input_error(output.name + " " + output.path + " is " + earlier.name + " " +
                          earlier.path +
                          ": writing it would replace what is read; name another file");
      throw input_error(earlier.name + " " + earlier.path + " and " + output.name + " " +
                        output.path +
                        " are the same file: one would replace the other; name two files");
    }
    seen.emplace_back(output, identity);
  }
}

void show_progress(const std::string &step) {
  if (isatty(STDERR_FILENO))
    std::cerr << "\r\033[Kmeasuring " << step << "…" << std::flush;
}

void show_op_progress(std::size_t done, std::size_t total, const std::string &layer) {
  if (!isatty(STDERR_FILENO))
    return;
  constexpr std::size_t width = 30;
  const std::size_t filled = total ? done * width / total : width;
  std::cerr << "\r\033[K[" << std::string(filled, '#') << std::string(width - filled, '.') << "] "
            << done << "/" << total << ' ' << layer << (done == total ? "\r\033[K" : "")
            << std::flush;
}

} // namespace roofline::cli
