// SPDX-License-Identifier: Apache-2.0
// roofline-advise: argument parsing and wiring only; every fact comes from roofline::core.
#include "roofline/error.hpp"
#include "roofline/network.hpp"
#include "roofline/perf_model.hpp"
#include "roofline/report.hpp"
#include "roofline/report_writer.hpp"
#include "roofline/spec_catalog.hpp"
#include "roofline/version.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <unistd.h>

namespace {

constexpr int exit_input_error = 2;
constexpr int exit_failure = 1;

struct output_choice {
  std::string format = "table";
  std::string file;
};

bool colour_terminal() {
  const char* term = std::getenv("TERM");
  return isatty(STDOUT_FILENO) && std::getenv("NO_COLOR") == nullptr &&
         !(term && std::string(term) == "dumb");
}

roofline::output_format display_format(const output_choice& choice) {
  if (auto format = roofline::parse_output_format(choice.format))
    return *format;
  throw roofline::input_error("unknown --format `" + choice.format + "`; expected table, json, csv or markdown");
}

/// Renders fully before writing, so an error never leaves half a report behind; the file is written
/// beside its destination and renamed into place.
template <class Writer>
void emit(const output_choice& choice, Writer&& write) {
  const roofline::output_format format = display_format(choice);
  std::ostringstream display;
  write(format, display, roofline::write_options{colour_terminal()});
  if (!choice.file.empty()) {
    const auto file_format = roofline::format_for_file(choice.file);
    if (!file_format)
      throw roofline::input_error("--output " + choice.file + ": cannot tell the format from the extension; "
                                  "use .json, .csv, .md or .txt");
    std::ostringstream text;
    write(*file_format, text, roofline::write_options{});
    const std::string temporary = choice.file + ".tmp";
    {
      std::ofstream out(temporary, std::ios::binary);
      out << text.str();
      if (!out.flush())
        throw roofline::input_error("--output " + choice.file + ": cannot write the file");
    }
    std::error_code ec;
    std::filesystem::rename(temporary, choice.file, ec);
    if (ec)
      throw roofline::input_error("--output " + choice.file + ": " + ec.message());
  }
  std::cout << display.str() << std::flush;
}

/// `--gpu`: a name, an alias, a spec file, or `auto` (the local GPU when measured, else the default).
std::pair<roofline::gpu_spec, std::string> choose_gpu(const std::string& request) {
  const roofline::spec_catalog& catalog = roofline::spec_catalog::builtin();
  if (request != "auto")
    return {catalog.resolve(request), "--gpu " + request};
  std::cerr << "roofline-advise: no local GPU in this build; using the default spec "
            << roofline::spec_catalog::default_gpu << " (choose one with --gpu, see `roofline-advise specs`)\n";
  return {*catalog.find(roofline::spec_catalog::default_gpu), "default: no local GPU"};
}

void write_analysis(const roofline::report& r, const output_choice& output) {
  emit(output, [&](roofline::output_format format, std::ostream& out, const roofline::write_options& options) {
    roofline::write_report(r, format, out, options);
  });
}

int run(int argc, char** argv) {
  CLI::App app{"roofline-advise: places every GEMM of a network on a GPU's roofline"};
  app.set_version_flag("--version", std::string(roofline::version()));
  app.require_subcommand(0, 1);

  output_choice output;
  std::string gpu = "auto";
  bool sparse = false;
  const auto add_output_options = [&](CLI::App& command) {
    command.add_option("--format,-f", output.format, "table (default), json, csv or markdown")
        ->check(CLI::IsMember({"table", "json", "csv", "markdown", "md"}));
    command.add_option("--output,-o", output.file,
                       "also write the report to this file, in the format its extension names");
  };
  const auto add_model_options = [&](CLI::App& command) {
    command.add_option("--gpu,-g", gpu, "GPU name, alias or spec file; `auto`: the local GPU, else the default")
        ->capture_default_str();
    command.add_flag("--sparse", sparse, "hold GEMMs against 2:4-sparse tensor peaks where the GPU has them");
  };

  std::string network_file;
  std::int64_t batch = 0, seq_len = 0;
  app.add_option("network", network_file, "network YAML file (docs/network-format.md)");
  app.add_option("--batch", batch, "override the network's batch")->check(CLI::PositiveNumber);
  app.add_option("--seq-len", seq_len, "override the network's seq_len")->check(CLI::PositiveNumber);
  add_model_options(app);
  add_output_options(app);

  CLI::App* gemm = app.add_subcommand("gemm", "analyse one GEMM: C[M,N] = A[M,K]·B[K,N]");
  std::int64_t m = 0, n = 0, k = 0, batch_count = 1;
  std::string precision = "fp16";
  gemm->add_option("M", m, "rows of A and C")->required()->check(CLI::PositiveNumber);
  gemm->add_option("N", n, "columns of B and C")->required()->check(CLI::PositiveNumber);
  gemm->add_option("K", k, "the reduction dimension")->required()->check(CLI::PositiveNumber);
  gemm->add_option("--precision,-p", precision, "fp32, tf32, fp16, bf16, fp8, int8 or fp64")->capture_default_str();
  gemm->add_option("--batch-count", batch_count, "batched GEMM count")->check(CLI::PositiveNumber);
  add_model_options(*gemm);
  add_output_options(*gemm);

  CLI::App* specs = app.add_subcommand("specs", "list the GPUs roofline-advise knows, with peaks and ridge points");
  add_output_options(*specs);

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return exit_input_error;
  }

  if (specs->parsed()) {
    const auto& catalog = roofline::spec_catalog::builtin();
    emit(output, [&](roofline::output_format format, std::ostream& out, const roofline::write_options& options) {
      roofline::write_spec_list(catalog.specs(), format, out, options);
    });
    return 0;
  }

  if (gemm->parsed()) {
    const auto p = roofline::parse_precision(precision);
    if (!p)
      throw roofline::input_error("unknown --precision `" + precision +
                                  "`; expected fp32, tf32, fp16, bf16, fp8, int8 or fp64");
    roofline::network net;
    net.name = "gemm " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
    net.precision = *p;
    net.layers.push_back({"gemm", std::nullopt, {}, roofline::matmul_layer{m, n, k, batch_count}});
    auto [spec, selection] = choose_gpu(gpu);
    write_analysis(roofline::analyze(net, roofline::perf_model(spec, {sparse}), selection), output);
    return 0;
  }

  if (network_file.empty()) {
    std::cerr << app.help();
    return exit_input_error;
  }
  roofline::network net = roofline::load_network(network_file);
  if (batch > 0)
    net.batch = batch;
  if (seq_len > 0)
    net.seq_len = seq_len;
  auto [spec, selection] = choose_gpu(gpu);
  write_analysis(roofline::analyze(net, roofline::perf_model(spec, {sparse}), selection), output);
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const roofline::input_error& e) {
    std::cerr << "roofline-advise: error: " << e.what() << '\n';
    return exit_input_error;
  } catch (const std::exception& e) {
    std::cerr << "roofline-advise: error: " << e.what() << '\n';
    return exit_failure;
  }
}
