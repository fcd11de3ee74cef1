// SPDX-License-Identifier: Apache-2.0
// roofline-advise: argument parsing and wiring only; every fact comes from roofline::core.
#include "roofline/error.hpp"
#include "roofline/network.hpp"
#include "roofline/perf_model.hpp"
#include "roofline/report.hpp"
#include "roofline/report_writer.hpp"
#include "roofline/spec_catalog.hpp"
#include "roofline/version.hpp"

#ifdef ROOFLINE_HAVE_MEASURE
#include "roofline/cuda/device.hpp"
#include "roofline/cuda/measurer.hpp"
#endif
#include "roofline/comparison.hpp"
#include "roofline/device_report.hpp"
#include "roofline/model_fit.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
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
  const char *term = std::getenv("TERM");
  return isatty(STDOUT_FILENO) && std::getenv("NO_COLOR") == nullptr &&
         !(term && std::string(term) == "dumb");
}

roofline::output_format display_format(const output_choice &choice) {
  if (auto format = roofline::parse_output_format(choice.format))
    return *format;
  throw roofline::input_error("unknown --format `" + choice.format +
                              "`; expected table, json, csv or markdown");
}

/// Renders fully before writing, so an error never leaves half a report behind; the file is written
/// beside its destination and renamed into place.
template <class Writer> void emit(const output_choice &choice, Writer &&write) {
  const roofline::output_format format = display_format(choice);
  std::ostringstream display;
  write(format, display, roofline::write_options{colour_terminal()});
  if (!choice.file.empty()) {
    const auto file_format = roofline::format_for_file(choice.file);
    if (!file_format)
      throw roofline::input_error("--output " + choice.file +
                                  ": cannot tell the format from the extension; "
                                  "use .json, .csv, .md or .txt");
    std::ostringstream text;
    write(*file_format, text, roofline::write_options{});
    const std::string temporary = choice.file + ".tmp-" + std::to_string(getpid());
    std::error_code ec;
    {
      std::ofstream out(temporary, std::ios::binary);
      out << text.str();
      if (!out.flush())
        ec = std::make_error_code(std::errc::io_error);
    }
    if (!ec)
      std::filesystem::rename(temporary, choice.file, ec);
    if (ec) {
      std::filesystem::remove(temporary, ec);
      throw roofline::input_error("--output " + choice.file + ": cannot write the file");
    }
  }
  std::cout << display.str() << std::flush;
}

/// This machine's host floor: measured with the local GPU's ceilings, else the typical one.
roofline::host_floor this_host() {
#ifdef ROOFLINE_HAVE_MEASURE
  return roofline::cuda::local_host_floor();
#else
  return roofline::typical_host_floor();
#endif
}

/// `--gpu`: a name, an alias, a spec file, or `auto`: the local GPU (with its measured ceilings
/// when cached), else the default spec, with one line on stderr saying so. The model runs with
/// this machine's host floor.
roofline::perf_model choose_gpu(const std::string &request, bool sparse, std::string &selection) {
  const roofline::spec_catalog &catalog = roofline::spec_catalog::builtin();
  if (request != "auto") {
    selection = "--gpu " + request;
    return roofline::perf_model(catalog.resolve(request), {sparse, false, {}, this_host()});
  }
#ifdef ROOFLINE_HAVE_MEASURE
  if (auto local = roofline::cuda::find_local_gpu()) {
    selection = local->selection;
    return roofline::perf_model(local->spec, {sparse, false, {}, local->host});
  }
  const char *reason = "no local GPU found";
#else
  const char *reason = "this build has no CUDA measurement layer";
#endif
  std::cerr << "roofline-advise: " << reason << "; using the default spec "
            << roofline::spec_catalog::default_gpu
            << " (choose one with --gpu, see `roofline-advise specs`)\n";
  selection = std::string("default: ") + reason;
  return roofline::perf_model(*catalog.find(roofline::spec_catalog::default_gpu),
                              {sparse, false, {}, roofline::typical_host_floor()});
}

/// Progress on stderr, only where stderr is a terminal.
void show_progress(const std::string &step) {
  if (isatty(STDERR_FILENO))
    std::cerr << "\r\033[Kmeasuring " << step << "…" << std::flush;
}

/// A progress bar on stderr, only where stderr is a terminal.
void show_op_progress(std::size_t done, std::size_t total, const std::string &layer) {
  if (!isatty(STDERR_FILENO))
    return;
  constexpr std::size_t width = 30;
  const std::size_t filled = total ? done * width / total : width;
  std::cerr << "\r\033[K[" << std::string(filled, '#') << std::string(width - filled, '.') << "] "
            << done << "/" << total << ' ' << layer << (done == total ? "\r\033[K" : "")
            << std::flush;
}

/// Sizes on the command line: digits only, not zero (CLI11's range check prints unreadable bounds).
const CLI::Validator positive_integer(
    [](std::string &text) {
      const bool digits =
          !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
      return digits && text.find_first_not_of('0') != std::string::npos
                 ? std::string{}
                 : "must be a positive integer, got '" + text + "'";
    },
    "POSITIVE");

/// A positive integer from a list option ("--batch 1,8,64").
std::int64_t positive_from(const std::string &text, const std::string &option) {
  std::string copy = text;
  if (!positive_integer(copy).empty())
    throw roofline::input_error(option + ": `" + text + "` is not a positive integer");
  return std::stoll(text);
}

int run_compare(const std::string &file, const std::vector<std::string> &gpus,
                const std::vector<std::string> &batches, const std::vector<std::string> &prices,
                bool sparse, const output_choice &output) {
  const roofline::network net = roofline::load_network(file);
  const auto &catalog = roofline::spec_catalog::builtin();
  std::map<std::string, double> usd_per_hour;
  for (const std::string &entry : prices) {
    const auto equals = entry.find('=');
    if (equals == std::string::npos)
      throw roofline::input_error("--price `" + entry + "`: expected GPU=USD/h, e.g. h100=2.49");
    char *end = nullptr;
    const std::string number = entry.substr(equals + 1);
    const double value = std::strtod(number.c_str(), &end);
    if (number.empty() || *end != '\0' || !(value > 0))
      throw roofline::input_error("--price `" + entry +
                                  "`: the price must be a positive number of USD per hour");
    const std::string name = entry.substr(0, equals);
    usd_per_hour[name == "local" ? "local" : catalog.resolve(name).name] = value;
  }
  std::vector<std::int64_t> batch_sizes;
  for (const std::string &b : batches)
    batch_sizes.push_back(positive_from(b, "--batch"));
  if (batch_sizes.empty())
    batch_sizes.push_back(net.batch);

  // Each GPU runs with its own parameters (its architecture's, overridden by what was fitted on
  // it) and all with this machine's host floor: the host does not change with the GPU.
  std::vector<roofline::gpu_spec> specs;
  std::vector<std::string> selections;
  for (const std::string &name : gpus) {
    if (name != "local") {
      specs.push_back(catalog.resolve(name));
      selections.push_back("--gpus " + name);
      continue;
    }
#ifdef ROOFLINE_HAVE_MEASURE
    auto local = roofline::cuda::find_local_gpu();
    if (!local)
      throw roofline::error(
          "--gpus local: no GPU found; name a spec instead (roofline-advise specs)");
    // Its ops are measured; the other GPUs are scaled from them by datasheet-to-datasheet ratios,
    // so the local side is held to its datasheet too (a measured ceiling would make its own spec
    // look faster).
    specs.push_back(local->datasheet);
    selections.push_back("local: " + local->selection);
#else
    throw roofline::error("--gpus local needs the CUDA measurement layer, and this build has none");
#endif
  }
  const roofline::model_options model_choice{sparse, false, {}, this_host()};

  std::vector<roofline::comparison> comparisons;
  for (std::int64_t batch : batch_sizes) {
    roofline::network at = net;
    at.batch = batch;
    std::vector<roofline::compared_gpu> compared;
    for (std::size_t i = 0; i < specs.size(); ++i) {
      roofline::compared_gpu gpu{roofline::perf_model(specs[i], model_choice), selections[i],
                                 std::nullopt};
      if (gpus[i] != "local") {
        compared.push_back(std::move(gpu));
        continue;
      }
#ifdef ROOFLINE_HAVE_MEASURE
      roofline::report measured = roofline::analyze(at, gpu.model, gpu.selection);
      roofline::cuda::measure_options measuring;
      measuring.counters = false;
      measuring.rounds = 3;
      measuring.progress = show_op_progress;
      roofline::cuda::measure_report(measured, measuring);
      gpu.measured = std::move(measured);
      compared.push_back(std::move(gpu));
#endif
    }
    comparisons.push_back(roofline::compare(at, compared, usd_per_hour));
  }
  emit(output, [&](roofline::output_format format, std::ostream &out,
                   const roofline::write_options &options) {
    roofline::write_comparison(comparisons, format, out, options);
  });
  return 0;
}

int run_calibrate() {
#ifdef ROOFLINE_HAVE_MEASURE
  if (roofline::cuda::device_count() == 0)
    throw roofline::error("calibrate needs a GPU, and the CUDA runtime sees none");
  const auto result = roofline::cuda::calibrate_local_gpu(show_op_progress);
  std::cout << "fitted the GEMM model to " << result.measured << " cuBLAS timings: median error "
            << std::fixed << std::setprecision(1) << result.median_error * 100 << "%, p90 "
            << result.p90_error * 100 << "%\n"
            << std::defaultfloat << "saved to " << result.saved_to
            << " (used by --gpu auto); as a spec file section:\n\n"
            << roofline::to_yaml(result.fitted);
  return 0;
#else
  throw roofline::error("calibrate needs the CUDA measurement layer, and this build has none");
#endif
}

int run_device(bool measure, bool refresh, const output_choice &output) {
#ifdef ROOFLINE_HAVE_MEASURE
  if (roofline::cuda::device_count() == 0) {
    std::cerr
        << "roofline-advise: error: no GPU found (the CUDA runtime sees none). Analyse against a "
           "datasheet spec instead: roofline-advise NETWORK.yaml --gpu h100 (roofline-advise specs "
           "lists them)\n";
    return exit_failure;
  }
  const roofline::device_report report =
      measure || refresh ? roofline::cuda::measured_device_report(0, refresh, show_progress)
                         : roofline::cuda::local_device_report(0);
  if (isatty(STDERR_FILENO) && (measure || refresh))
    std::cerr << "\r\033[K" << std::flush;
  emit(output, [&](roofline::output_format format, std::ostream &out,
                   const roofline::write_options &options) {
    roofline::write_device_report(report, format, out, options);
  });
  return 0;
#else
  (void)measure, (void)refresh, (void)output;
  std::cerr
      << "roofline-advise: error: this build has no CUDA measurement layer (built without the CUDA "
         "toolkit), so no device query. Analyse against a datasheet spec instead: roofline-advise "
         "NETWORK.yaml --gpu h100 (roofline-advise specs lists them)\n";
  return exit_failure;
#endif
}

struct measure_choice {
  bool enabled = false;
  std::string engine = "cublas";
  bool cold_l2 = false;
  bool no_counters = false;
};

/// `--measure`: runs the report's GEMMs on the local GPU (roofline::measure).
void run_measurements(roofline::report &r, const measure_choice &choice) {
  if (!choice.enabled)
    return;
#ifdef ROOFLINE_HAVE_MEASURE
  const auto engine = roofline::cuda::parse_gemm_engine(choice.engine);
  if (!engine)
    throw roofline::input_error("unknown --engine `" + choice.engine +
                                "`; expected cublas, naive, tiled or tensorcore");
  roofline::cuda::measure_options options;
  options.engine = *engine;
  options.cold_l2 = choice.cold_l2;
  options.counters = !choice.no_counters;
  options.rounds = 3; // a spell of a slower host moves one round, not the result
  options.progress = show_op_progress;
  roofline::cuda::measure_report(r, options);
#else
  (void)r;
  throw roofline::error(
      "--measure needs the CUDA measurement layer, and this build has none (built without the "
      "CUDA toolkit)");
#endif
}

void write_analysis(const roofline::report &r, const output_choice &output) {
  emit(output, [&](roofline::output_format format, std::ostream &out,
                   const roofline::write_options &options) {
    roofline::write_report(r, format, out, options);
  });
}

int run(int argc, char **argv) {
  CLI::App app{"roofline-advise: places every GEMM of a network on a GPU's roofline"};
  app.set_version_flag("--version", std::string(roofline::version()));
  app.require_subcommand(0, 1);

  output_choice output;
  std::string gpu = "auto";
  bool sparse = false;
  const auto add_output_options = [&](CLI::App &command) {
    command.add_option("--format,-f", output.format, "table (default), json, csv or markdown")
        ->check(CLI::IsMember({"table", "json", "csv", "markdown", "md"}));
    command.add_option("--output,-o", output.file,
                       "also write the report to this file, in the format its extension names");
  };
  measure_choice measuring;
  const auto add_model_options = [&](CLI::App &command) {
    command
        .add_option("--gpu,-g", gpu,
                    "GPU name, alias or spec file; `auto`: the local GPU, else the default")
        ->capture_default_str();
    command.add_flag("--sparse", sparse,
                     "hold GEMMs against 2:4-sparse tensor peaks where the GPU has them");
    command.add_flag(
        "--measure", measuring.enabled,
        "run every GEMM on the local GPU: checked, timed and read through hardware counters");
    command
        .add_option("--engine", measuring.engine,
                    "with --measure: cublas, naive, tiled or tensorcore")
        ->check(CLI::IsMember({"cublas", "naive", "tiled", "tensorcore"}))
        ->capture_default_str();
    command.add_flag("--cold-l2", measuring.cold_l2,
                     "with --measure: rotate operands through buffers larger than L2");
    command.add_flag("--no-counters", measuring.no_counters,
                     "with --measure: event timing only, no CUPTI counters");
  };

  std::string network_file;
  std::int64_t batch = 0, seq_len = 0;
  app.add_option("network", network_file, "network YAML file (docs/network-format.md)");
  app.add_option("--batch", batch, "override the network's batch")->check(positive_integer);
  app.add_option("--seq-len", seq_len, "override the network's seq_len")->check(positive_integer);
  add_model_options(app);
  add_output_options(app);

  CLI::App *gemm = app.add_subcommand("gemm", "analyse one GEMM: C[M,N] = A[M,K]·B[K,N]");
  std::int64_t m = 0, n = 0, k = 0, batch_count = 1;
  std::string precision = "fp16";
  gemm->add_option("M", m, "rows of A and C")->required()->check(positive_integer);
  gemm->add_option("N", n, "columns of B and C")->required()->check(positive_integer);
  gemm->add_option("K", k, "the reduction dimension")->required()->check(positive_integer);
  gemm->add_option("--precision,-p", precision, "fp32, tf32, fp16, bf16, fp8, int8 or fp64")
      ->capture_default_str();
  gemm->add_option("--batch-count", batch_count, "batched GEMM count")->check(positive_integer);
  add_model_options(*gemm);
  add_output_options(*gemm);

  CLI::App *device = app.add_subcommand(
      "device", "the local GPU: device query, theoretical and measured roofline");
  bool measure = false, refresh = false;
  device->add_flag("--measure", measure, "measure the ceilings (or show the cached measurement)");
  device->add_flag("--refresh", refresh, "measure again even when ceilings are cached");
  add_output_options(*device);

  CLI::App *compare =
      app.add_subcommand("compare", "one network on several GPUs: times, speedups, cost, verdict");
  std::string compare_file;
  std::vector<std::string> gpu_list, batches, price_list;
  compare->add_option("network", compare_file, "network YAML file")->required();
  compare
      ->add_option("--gpus", gpu_list,
                   "GPUs to compare, the first is the baseline; `local`: the measured GPU")
      ->delimiter(',')
      ->required();
  compare->add_option("--batch", batches, "batch sizes to compare at (comma-separated)")
      ->delimiter(',');
  compare->add_option("--price", price_list, "GPU=USD/h, overrides a spec's price (repeatable)");
  compare->add_flag("--sparse", sparse,
                    "hold GEMMs against 2:4-sparse tensor peaks where the GPU has them");
  add_output_options(*compare);

  CLI::App *calibrate =
      app.add_subcommand("calibrate", "time a sweep of GEMMs on the local GPU and fit the "
                                      "performance model to it (saved, used by --gpu auto)");

  CLI::App *specs = app.add_subcommand(
      "specs", "list the GPUs roofline-advise knows, with peaks and ridge points");
  add_output_options(*specs);

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success &e) {
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    app.exit(e);
    return exit_input_error;
  }

  if (specs->parsed()) {
    const auto &catalog = roofline::spec_catalog::builtin();
    emit(output, [&](roofline::output_format format, std::ostream &out,
                     const roofline::write_options &options) {
      roofline::write_spec_list(catalog.specs(), format, out, options);
    });
    return 0;
  }

  if (device->parsed())
    return run_device(measure, refresh, output);

  if (calibrate->parsed())
    return run_calibrate();

  if (compare->parsed())
    return run_compare(compare_file, gpu_list, batches, price_list, sparse, output);

  if (gemm->parsed()) {
    const auto p = roofline::parse_precision(precision);
    if (!p)
      throw roofline::input_error("unknown --precision `" + precision +
                                  "`; expected fp32, tf32, fp16, bf16, fp8, int8 or fp64");
    roofline::network net;
    net.name = "gemm " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
    net.precision = *p;
    net.layers.push_back({"gemm", std::nullopt, {}, roofline::matmul_layer{m, n, k, batch_count}});
    std::string selection;
    const roofline::perf_model model = choose_gpu(gpu, sparse, selection);
    roofline::report r = roofline::analyze(net, model, selection);
    r.advice = roofline::advise(net, r, model);
    run_measurements(r, measuring);
    write_analysis(r, output);
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
  std::string selection;
  const roofline::perf_model model = choose_gpu(gpu, sparse, selection);
  roofline::report r = roofline::analyze(net, model, selection);
  r.advice = roofline::advise(net, r, model);
  run_measurements(r, measuring);
  write_analysis(r, output);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  try {
    return run(argc, argv);
  } catch (const roofline::input_error &e) {
    std::cerr << "roofline-advise: error: " << e.what() << '\n';
    return exit_input_error;
  } catch (const std::exception &e) {
    std::cerr << "roofline-advise: error: " << e.what() << '\n';
    return exit_failure;
  }
}
