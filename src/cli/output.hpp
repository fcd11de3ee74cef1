// SPDX-License-Identifier: Apache-2.0
#pragma once

// What roofline-advise writes: reports on stdout and into the files the command line names
// (rendered whole before anything is written), progress on stderr.

#include "roofline/output/output_format.hpp"

#include <cstddef>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace roofline::cli {

/// Where a report goes, as the command line says.
struct output_choice {
  std::string format = "table";
  /// The table format: every column and long lines unbroken (--wide), or the columns named
  /// (--columns) after each table's first.
  bool wide = false;
  std::vector<std::string> columns;
  std::string file;
  std::string plot; ///< the roofline chart as SVG
  std::string html; ///< one self-contained page: chart, tables, advice
  /// --emit-yaml: the file, and the network a config built, as YAML.
  std::string network_yaml_file, network_yaml;
};

/// Writes one report in one format.
using report_writer =
    std::function<void(output_format format, std::ostream &out, const write_options &options)>;

/// Renders the report in the display format (coloured on a terminal) and in every file's format,
/// then writes the files (write_file_atomically: whole, in place of a regular file only) and
/// stdout: an error never leaves half a report behind. Throws input_error for an unknown
/// --format, a file whose extension names no format (or the wrong one), a file that cannot be
/// written; roofline::error when stdout cannot be written.
void emit(const output_choice &choice, const report_writer &write);

/// From now on, writes to standard output fail with EBADF: main() found it closed at start
/// (`>&-`) and put /dev/null in its place, so that no file opened later takes fd 1.
void mark_stdout_closed();

/// Whether mark_stdout_closed() was called.
bool stdout_closed();

/// Writes `text` whole to standard output, through std::cout's buffer; a closed stdout or a full
/// disk throws roofline::error with the OS's reason.
void write_stdout(std::string_view text);

/// "cannot write to standard output: <the OS's reason for `code`>".
std::string stdout_problem(int code);

/// A file the command line names: what names it ("--output", "the network file") and its path.
struct named_file {
  std::string name, path;
};

/// Refuses (input_error), before any work, an output that would replace an input or another
/// output (the same file by any path or link), or that is a link to a file that does not exist.
void refuse_overlapping_files(const std::vector<named_file> &inputs,
                              const std::vector<named_file> &outputs);

/// "measuring <step>…" on stderr, only where stderr is a terminal.
void show_progress(const std::string &step);

/// A progress bar on stderr, only where stderr is a terminal.
void show_op_progress(std::size_t done, std::size_t total, const std::string &layer);

} // namespace roofline::cli
