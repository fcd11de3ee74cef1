// SPDX-License-Identifier: Apache-2.0
// roofline-advise: argument parsing and wiring only; every fact comes from roofline::core.
#include "roofline/atomic_file.hpp"
#include "roofline/comparison.hpp"
#include "roofline/error.hpp"
#include "roofline/gpu_spec.hpp"
#include "roofline/measurement_layer.hpp"
#include "roofline/model_config.hpp"
#include "roofline/model_fit.hpp"
#include "roofline/network.hpp"
#include "roofline/pipeline.hpp"
#include "roofline/spec_catalog.hpp"
#include "roofline/version.hpp"
#include "roofline/writers.hpp"

#include "interrupt.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>
#include <streambuf>
#include <string>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>

namespace {

constexpr int exit_input_error = 2;
constexpr int exit_failure = 1;

struct output_choice {
  std::string format = "table";
  std::string file;
  std::string plot; ///< the roofline chart as SVG
  std::string html; ///< one self-contained page: chart, tables, advice
  /// --emit-yaml: the file, and the network a config built, as YAML.
  std::string network_yaml_file, network_yaml;
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
                              "`; expected table, json, csv, markdown, html or svg");
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

/// Set by main() when the process started with standard output closed (`>&-`): fd 1 then holds
/// /dev/null, so that no file opened later takes its place, and nothing may be written to it.
bool stdout_was_closed = false;

/// What failed writing to standard output, with the OS's reason.
roofline::error stdout_error(int code) {
  return roofline::error(std::string("cannot write to standard output: ") + std::strerror(code));
}

/// Writes `text` whole to standard output, through std::cout's buffer (stdio's stdout, or what a
/// caller of run() put in its place); a closed stdout or a full disk throws with the OS's reason
/// (the report is lost: the exit status must say so).
void write_stdout(std::string_view text) {
  if (stdout_was_closed)
    throw stdout_error(EBADF);
  std::streambuf *const out = std::cout.rdbuf();
  const auto size = static_cast<std::streamsize>(text.size());
  errno = 0; // what stdio's failed write(2) leaves is the reason
  if (out->sputn(text.data(), size) != size || out->pubsync() != 0)
    throw stdout_error(errno != 0 ? errno : EIO);
}

/// Renders fully before writing, so an error never leaves half a report behind; files are written
/// as write_file_atomically says (whole, in place of a regular file only).
template <class Writer> void emit(const output_choice &choice, Writer &&write) {
  const auto render = [&](roofline::output_format format, bool colour) {
    string_buffer buffer;
    std::ostream text(&buffer);
    write(format, text, roofline::write_options{colour});
    return std::move(buffer.text);
  };
  const roofline::output_format format = display_format(choice);
  const bool colour = colour_terminal();
  const std::string display = render(format, colour);
  // Every file rendered before any is written.
  struct file_output {
    std::string option, file, text;
  };
  std::vector<file_output> files;
  const auto add_file = [&](const std::string &option, const std::string &file,
                            roofline::output_format file_format) {
    files.push_back(
        {option, file, file_format == format && !colour ? display : render(file_format, false)});
  };
  const auto checked_format = [](const std::string &option, const std::string &file,
                                 const char *expected) {
    const auto file_format = roofline::format_for_file(file);
    if (!file_format)
      throw roofline::input_error(option + " " + file +
                                  ": cannot tell the format from the extension; use " + expected);
    return *file_format;
  };
  if (!choice.file.empty())
    add_file("--output", choice.file,
             checked_format("--output", choice.file, ".json, .csv, .md, .txt, .html or .svg"));
  if (!choice.plot.empty()) {
    if (checked_format("--plot", choice.plot, ".svg") != roofline::output_format::svg)
      throw roofline::input_error("--plot " + choice.plot + ": the chart is SVG; name it .svg");
    add_file("--plot", choice.plot, roofline::output_format::svg);
  }
  if (!choice.html.empty()) {
    if (checked_format("--html", choice.html, ".html") != roofline::output_format::html)
      throw roofline::input_error("--html " + choice.html + ": the page is HTML; name it .html");
    add_file("--html", choice.html, roofline::output_format::html);
  }
  if (!choice.network_yaml_file.empty())
    files.push_back({"--emit-yaml", choice.network_yaml_file, choice.network_yaml});
  for (const file_output &output : files) {
    try {
      roofline::write_file_atomically(output.file, output.text);
    } catch (const roofline::error &e) {
      throw roofline::input_error(output.option + " " + e.what());
    }
  }
  write_stdout(display);
}

/// A file the command line names: what names it ("--output", "the network file") and its path.
struct named_file {
  std::string name, path;
};

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

/// Refuses, before any work, an output that would replace an input or another output: the
/// network file or a spec file would be lost, or one output silently replace the other.
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
      throw roofline::input_error(output.name + " " + output.path +
                                  " is a symbolic link to a file that does not exist; name the "
                                  "file to write, or create it first");
    for (std::size_t i = 0; i < seen.size(); ++i) {
      const auto &[earlier, earlier_identity] = seen[i];
      if (!identity.overlaps(earlier_identity))
        continue;
      if (i < inputs.size())
        throw roofline::input_error(output.name + " " + output.path + " is " + earlier.name + " " +
                                    earlier.path +
                                    ": writing it would replace what is read; name another file");
      throw roofline::input_error(earlier.name + " " + earlier.path + " and " + output.name + " " +
                                  output.path +
                                  " are the same file: one would replace the other; name two "
                                  "files");
    }
    seen.emplace_back(output, identity);
  }
}

/// The measurement layer, for commands that cannot run without it.
const roofline::measurement_layer &required_layer(const std::string &command) {
  return roofline::required_measurement_layer(
      command,
      ". Analyse against a datasheet spec instead: roofline-advise NETWORK.yaml --gpu h100 "
      "(roofline-advise specs lists them)");
}

/// `--gpu`, with the notice of a fallback on stderr.
roofline::gpu_choice chosen_gpu(const std::string &request, bool sparse,
                                std::optional<roofline::cache_state> operand_cache = {}) {
  roofline::model_options options;
  options.sparse = sparse;
  options.operand_cache = operand_cache;
  roofline::gpu_choice gpu = roofline::choose_gpu(request, options);
  if (!gpu.notice.empty())
    std::cerr << "roofline-advise: " << gpu.notice << '\n';
  return gpu;
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

/// What is wrong with a size given on the command line, "" when nothing: digits only, not zero,
/// and below 2^63 (CLI11's conversion would clamp a larger one to the largest integer).
std::string size_problem(const std::string &text) {
  const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
  if (!digits || text.find_first_not_of('0') == std::string::npos)
    return "is not a positive integer";
  std::int64_t value = 0;
  const char *end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  return error == std::errc{} && stop == end
             ? std::string{}
             : "does not fit in a 64-bit integer (at most 9223372036854775807)";
}

/// Sizes on the command line, as size_problem says (CLI11's range check prints unreadable
/// bounds).
const CLI::Validator positive_integer(
    [](std::string &text) {
      const std::string problem = size_problem(text);
      return problem.empty() ? problem : "`" + text + "` " + problem;
    },
    "POSITIVE");

/// A positive integer from a list option ("--batch 1,8,64").
std::int64_t positive_from(const std::string &text, const std::string &option) {
  if (const std::string problem = size_problem(text); !problem.empty())
    throw roofline::input_error(option + ": `" + text + "` " + problem);
  return std::stoll(text);
}

/// Whether `file` names a model config (config.json) rather than a network YAML.
bool is_model_config(const std::string &file) {
  return file.size() > 5 && file.compare(file.size() - 5, 5, ".json") == 0;
}

/// What the command line says of a model config (a .json network file).
struct config_choice {
  std::string phase, emit_yaml, quantization, kv_cache_dtype, glue;
  std::int64_t seq_len = 0, kv_len = 0, tensor_parallel = 0;
  bool last_logits = false, unfused_attention = false;
};

/// The network in `file`: a network YAML, or a model's config.json built as `config` says
/// (config options given for a YAML are refused: its attention layers say their own lengths).
/// With --emit-yaml, `output` gets the network as YAML, written with the report.
roofline::network read_network(const std::string &file, const config_choice &config,
                               std::int64_t batch, output_choice &output) {
  if (!is_model_config(file)) {
    for (const auto &[given, option] :
         {std::pair{!config.phase.empty(), "--phase"}, std::pair{config.kv_len > 0, "--kv-len"},
          std::pair{config.last_logits, "--last-logits"},
          std::pair{!config.emit_yaml.empty(), "--emit-yaml"},
          std::pair{config.unfused_attention, "--unfused-attention"},
          std::pair{!config.quantization.empty(), "--quantization"},
          std::pair{!config.kv_cache_dtype.empty(), "--kv-cache-dtype"},
          std::pair{!config.glue.empty(), "--glue"}, std::pair{config.tensor_parallel > 0, "--tp"}})
      if (given)
        throw roofline::input_error(std::string(option) +
                                    " applies to a model config (a .json file), not to a network "
                                    "YAML such as " +
                                    file +
                                    ", whose layers say it themselves (docs/network-format.md)");
    roofline::network net = roofline::load_network(file);
    if (batch > 0)
      net.batch = batch;
    if (config.seq_len > 0)
      net.seq_len = config.seq_len;
    // Checked here, where the flags are known: the network's own product was checked as it loaded.
    if (std::int64_t rows = 0;
        (batch > 0 || config.seq_len > 0) && __builtin_mul_overflow(net.batch, net.seq_len, &rows))
      throw roofline::input_error(fmt::format(
          "{} {} × {} {} overflows a 64-bit integer (the rows of a step of {})",
          batch > 0 ? "--batch" : "the network's batch", net.batch,
          config.seq_len > 0 ? "--seq-len" : "the network's seq_len", net.seq_len, file));
    return net;
  }
  roofline::config_options options;
  if (!config.phase.empty()) {
    const auto parsed = roofline::parse_inference_phase(config.phase);
    if (!parsed)
      throw roofline::input_error("unknown --phase `" + config.phase +
                                  "`; expected prefill or decode");
    options.phase = *parsed;
  }
  if (batch > 0)
    options.batch = batch;
  if (config.seq_len > 0)
    options.seq_len = config.seq_len;
  if (config.kv_len > 0 && options.phase != roofline::inference_phase::decode)
    throw roofline::input_error("--kv-len is the cache a decode step reads: give --phase decode "
                                "(a prefill's cache is its prompt, --seq-len)");
  if (config.last_logits && options.phase == roofline::inference_phase::decode)
    throw roofline::input_error("--last-logits applies to a prefill: a decode step's LM head "
                                "already runs for its one new token");
  if (config.kv_len > 0)
    options.kv_len = config.kv_len;
  options.last_logits = config.last_logits;
  options.fused_attention = !config.unfused_attention;
  if (!config.quantization.empty()) {
    options.quantization = roofline::parse_quantization(config.quantization);
    if (!options.quantization)
      throw roofline::input_error("unknown --quantization `" + config.quantization +
                                  "`; expected w8a16, w4a16 or fp8");
  }
  if (!config.kv_cache_dtype.empty()) {
    const auto p = roofline::parse_precision(config.kv_cache_dtype);
    if (!p || roofline::element_bytes(*p) > 2)
      throw roofline::input_error("unknown --kv-cache-dtype `" + config.kv_cache_dtype +
                                  "`; expected fp16, bf16, fp8 or int8");
    if (config.unfused_attention)
      throw roofline::input_error("--kv-cache-dtype needs fused attention: the unfused GEMMs "
                                  "read keys and values in the layer's precision");
    options.kv_cache = p;
  }
  if (!config.glue.empty()) {
    const auto glue = roofline::parse_glue_style(config.glue);
    if (!glue)
      throw roofline::input_error("unknown --glue `" + config.glue + "`; expected eager or fused");
    options.glue = *glue;
  }
  if (config.tensor_parallel > 1024)
    throw roofline::input_error("--tp " + std::to_string(config.tensor_parallel) +
                                ": tensor parallelism is modelled over at most 1024 GPUs");
  if (config.tensor_parallel > 0)
    options.tensor_parallel = static_cast<int>(config.tensor_parallel);
  roofline::network net = roofline::load_model_config(file, options);
  if (!config.emit_yaml.empty()) {
    output.network_yaml_file = config.emit_yaml;
    output.network_yaml = roofline::to_network_yaml(net);
  }
  return net;
}

int run_compare(const std::string &file, const config_choice &config,
                const std::vector<std::string> &gpus, const std::vector<std::string> &batches,
                const std::vector<std::string> &degrees, const std::vector<std::string> &prices,
                bool sparse, const output_choice &output) {
  roofline::compare_request request;
  // The command line's values first: their errors do not wait on reading the network.
  for (const std::string &degree : degrees) {
    const std::int64_t tp = positive_from(degree, "--tp");
    if (tp > 1024)
      throw roofline::input_error("--tp " + degree +
                                  ": tensor parallelism is modelled over at most 1024 GPUs");
    request.tensor_parallel.push_back(static_cast<int>(tp));
  }
  // A config is built anew for every degree and batch (its last-position LM head, for one, is
  // as tall as the batch).
  if (is_model_config(file))
    request.build = [&file, config](int tp, std::int64_t batch) {
      config_choice sharded = config;
      sharded.tensor_parallel = tp;
      sharded.emit_yaml.clear(); // written from the comparison, below
      output_choice unused;
      return read_network(file, sharded, batch, unused);
    };
  request.gpus = gpus;
  request.sparse = sparse;
  request.progress = show_op_progress;
  std::map<std::string, std::string> given; // GPU → its --price entry
  for (const std::string &entry : prices) {
    const auto equals = entry.find('=');
    if (equals == std::string::npos)
      throw roofline::input_error("--price `" + entry + "`: expected GPU=USD/h, e.g. h100=2.49");
    // A number written in full: no `inf`, `nan`, hex or spaces (from_chars reads no '+').
    const std::string number = entry.substr(equals + 1);
    double value = 0;
    const char *end = number.data() + number.size();
    const auto [stop, error] = std::from_chars(number.data(), end, value);
    if (error != std::errc{} || stop != end || !(value >= roofline::min_price_per_hour_usd) ||
        !(value <= roofline::max_price_per_hour_usd))
      throw roofline::input_error(
          fmt::format("--price `{}`: the price must be a number of USD per GPU-hour from {:g} to "
                      "{:g}",
                      entry, roofline::min_price_per_hour_usd, roofline::max_price_per_hour_usd));
    const std::string gpu = entry.substr(0, equals);
    if (const auto [earlier, fresh] = given.emplace(gpu, entry); !fresh)
      throw roofline::input_error("--price `" + earlier->second + "` and `" + entry +
                                  "`: the same GPU priced twice; give it one price");
    request.prices[gpu] = value;
  }
  for (const std::string &b : batches)
    request.batches.push_back(positive_from(b, "--batch"));
  roofline::resolve_compared_gpus(request); // unknown or repeated GPUs, before the network
  output_choice written = output;
  request.net = read_network(file, config, 0, written); // refuses --emit-yaml for a network YAML
  const std::vector<roofline::comparison> comparisons = roofline::compare_gpus(request);
  if (!config.emit_yaml.empty()) // the network the baseline ran, not the one read
    written.network_yaml = roofline::to_network_yaml(comparisons.front().baseline_network);
  emit(written, [&](roofline::output_format format, std::ostream &out,
                    const roofline::write_options &options) {
    roofline::write_comparison(comparisons, format, out, options);
  });
  return 0;
}

int run_calibrate() {
  const roofline::measurement_layer &layer = required_layer("calibrate");
  if (layer.device_count() == 0)
    throw roofline::error("calibrate needs a GPU, and the CUDA runtime sees none");
  roofline::cli::stop_on_interrupt();
  const auto result = layer.calibrate(show_op_progress, roofline::cli::interrupted);
  if (!result.complete) {
    std::cerr << "roofline-advise: calibration interrupted after " << result.measured << " of "
              << result.total << " GEMMs: nothing was fitted, the calibration cache is unchanged\n";
    return roofline::cli::exit_interrupted;
  }
  std::ostringstream summary;
  summary << "fitted the GEMM model to " << result.measured << " cuBLAS timings: median error "
          << std::fixed << std::setprecision(1) << result.median_error * 100 << "%, p90 "
          << result.p90_error * 100 << "%\n"
          << std::defaultfloat << "fitted the memory-bound ops' floors and bandwidths to "
          << result.memory_ops_measured << " timings of our kernels\n"
          << (result.saved_to.empty() ? "not saved (" + result.not_saved + ")"
                                      : "saved to " + result.saved_to + " (used by --gpu auto)")
          << "; as a spec file section:\n\n"
          << roofline::to_yaml(result.fitted);
  write_stdout(summary.str());
  return 0;
}

int run_device(bool measure, bool refresh, const output_choice &output) {
  const roofline::measurement_layer &layer = required_layer("device");
  if (layer.device_count() == 0)
    throw roofline::error(
        "no GPU found (the CUDA runtime sees none). Analyse against a datasheet spec instead: "
        "roofline-advise NETWORK.yaml --gpu h100 (roofline-advise specs lists them)");
  const roofline::device_report report = layer.describe_local_gpu(measure, refresh, show_progress);
  if (isatty(STDERR_FILENO) && (measure || refresh))
    std::cerr << "\r\033[K" << std::flush;
  emit(output, [&](roofline::output_format format, std::ostream &out,
                   const roofline::write_options &options) {
    roofline::write_device_report(report, format, out, options);
  });
  return 0;
}

struct measure_choice {
  bool enabled = false;
  std::string engine = "cublas";
  bool cold_l2 = false, warm_l2 = false;
  bool no_counters = false;
  std::string devices; ///< "all": every local GPU at once
};

/// The analysis pipeline as the command line asks for it.
roofline::pipeline_options pipeline_choice(const measure_choice &choice) {
  const auto engine = roofline::parse_gemm_engine(choice.engine);
  if (!engine)
    throw roofline::input_error("unknown --engine `" + choice.engine +
                                "`; expected cublas, naive, tiled or tensorcore");
  roofline::pipeline_options options;
  if (!choice.devices.empty() && choice.devices != "all")
    throw roofline::input_error("unknown --devices `" + choice.devices +
                                "`; expected all (every local GPU at once)");
  if (!choice.devices.empty() && !choice.enabled)
    throw roofline::input_error("--devices applies to --measure");
  if (!choice.enabled)
    return options;
  roofline::measure_options measuring;
  measuring.engine = *engine;
  measuring.counters = !choice.no_counters;
  measuring.rounds = 3; // a spell of a slower host moves one round, not the result
  measuring.progress = show_op_progress;
  measuring.every_gpu = choice.devices == "all";
  options.measure = measuring;
  return options;
}

/// The analysis written as `output` says; the exit status: 0, or exit_interrupted when Ctrl-C
/// stopped the measurement (the report then holds what was measured).
int analyse(const roofline::network &net, const std::string &gpu, bool sparse,
            const measure_choice &measuring, const output_choice &output) {
  roofline::pipeline_options options = pipeline_choice(measuring);
  // Ctrl-C stops a measurement after the op in flight (without a layer, run_pipeline says why).
  if (options.measure && roofline::measurement_layer_in_use()) {
    roofline::cli::stop_on_interrupt();
    options.measure->stop = roofline::cli::interrupted;
  }
  std::optional<roofline::cache_state> operand_cache; // unset: the step decides
  if (measuring.cold_l2)
    operand_cache = roofline::cache_state::cold;
  if (measuring.warm_l2)
    operand_cache = roofline::cache_state::warm;
  const roofline::report r =
      roofline::run_pipeline(net, chosen_gpu(gpu, sparse, operand_cache), options);
  emit(output, [&](roofline::output_format format, std::ostream &out,
                   const roofline::write_options &write) {
    roofline::write_report(r, format, out, write);
  });
  return r.complete ? 0 : roofline::cli::exit_interrupted;
}

int run(int argc, char **argv) {
  CLI::App app{"roofline-advise: places every GEMM of a network on a GPU's roofline"};
  app.set_version_flag("--version", std::string(roofline::version()));
  app.require_subcommand(0, 1);

  output_choice output;
  std::string gpu = "auto";
  bool sparse = false;
  const auto add_output_options = [&](CLI::App &command) {
    // The core's parsers decide what is valid (parse_output_format, parse_gemm_engine).
    command.add_option("--format,-f", output.format,
                       "table (default), json, csv, markdown, html or svg");
    command.add_option("--output,-o", output.file,
                       "also write the report to this file, in the format its extension names");
  };
  const auto add_chart_options = [&](CLI::App &command) {
    command.add_option("--plot", output.plot, "also draw the roofline chart into this SVG file");
    command.add_option("--html", output.html,
                       "also write one self-contained HTML page: chart, tables, advice");
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
        "run every op it predicts on the local GPU (GEMMs through cuBLAS, convolutions through "
        "cuDNN, memory-bound ops through our kernels): checked, timed and read through "
        "hardware counters");
    command
        .add_option("--engine", measuring.engine,
                    "with --measure: cublas, naive, tiled or tensorcore")
        ->capture_default_str();
    CLI::Option *cold = command.add_flag(
        "--cold-l2", measuring.cold_l2,
        "GEMMs with their operands cold, read from DRAM (the default for a step that moves more "
        "than L2 holds); with --measure, operands rotated through buffers larger than L2");
    command
        .add_flag("--warm-l2", measuring.warm_l2,
                  "GEMMs as back-to-back calls on the same buffers, L2 keeping what fits (the "
                  "default for one GEMM), whatever the step moves")
        ->excludes(cold);
    command.add_flag("--no-counters", measuring.no_counters,
                     "with --measure: event timing only, no CUPTI counters");
    command.add_option("--devices", measuring.devices,
                       "with --measure: `all`, every local GPU at once (a sharded network's "
                       "GEMMs on each, its all-reduces run for real; counters off)");
  };

  std::string network_file;
  std::int64_t batch = 0;
  config_choice config;
  const auto add_config_options = [&](CLI::App &command) {
    command
        .add_option("--seq-len", config.seq_len,
                    "override the network's seq_len (a config's prompt, or its KV cache in decode)")
        ->check(positive_integer);
    command.add_option("--phase", config.phase, "with a config.json: prefill (default) or decode");
    command
        .add_option("--kv-len", config.kv_len,
                    "with a config.json and --phase decode: the KV cache length")
        ->check(positive_integer);
    command.add_flag("--last-logits", config.last_logits,
                     "with a config.json in prefill: the LM head for the last position only");
    command.add_flag("--unfused-attention", config.unfused_attention,
                     "with a config.json: attention as two GEMMs and a softmax, not one fused "
                     "kernel");
    command.add_option("--quantization", config.quantization,
                       "with a config.json: the blocks' linear layers as w8a16 or w4a16 "
                       "(weight-only int8 or int4) or fp8 GEMMs, whatever the config says");
    command.add_option("--kv-cache-dtype", config.kv_cache_dtype,
                       "with a config.json: the KV cache's format (fp16, bf16, fp8, int8)");
    command.add_option("--glue", config.glue,
                       "with a config.json: the kernels around the layers (norms, rotary "
                       "embeddings, cache writes, copies) as PyTorch eager runs transformers' "
                       "code (eager, default) or as a serving engine fuses them (fused)");
    command.add_option("--emit-yaml", config.emit_yaml,
                       "with a config.json: also write the network it builds as YAML to this file");
  };
  app.add_option("network", network_file,
                 "network YAML file (docs/network-format.md), or a model's config.json");
  app.add_option("--batch", batch, "override the network's batch")->check(positive_integer);
  add_config_options(app);
  app.add_option("--tp", config.tensor_parallel,
                 "with a config.json: tensor parallelism over this many GPUs (one GPU's share of "
                 "each block, and the all-reduces between them)")
      ->check(positive_integer);
  add_model_options(app);
  add_output_options(app);
  add_chart_options(app);

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
  add_chart_options(*gemm);

  CLI::App *device = app.add_subcommand(
      "device", "the local GPU: device query, theoretical and measured roofline");
  bool measure = false, refresh = false;
  device->add_flag("--measure", measure, "measure the ceilings (or show the cached measurement)");
  device->add_flag("--refresh", refresh, "measure again even when ceilings are cached");
  add_output_options(*device);

  CLI::App *compare =
      app.add_subcommand("compare", "one network on several GPUs: times, speedups, cost, verdict");
  std::string compare_file;
  std::vector<std::string> gpu_list, batches, price_list, tp_list;
  compare->add_option("network", compare_file, "network YAML file, or a model's config.json")
      ->required();
  add_config_options(*compare);
  compare->get_option("--emit-yaml")
      ->description("with a config.json: also write the baseline's network as YAML to this file "
                    "(the first GPU's, at the first --tp degree and the first --batch, as it was "
                    "analysed)");
  compare
      ->add_option("--gpus", gpu_list,
                   "GPUs to compare, the first is the baseline; `local`: the measured GPU")
      ->delimiter(',')
      ->required();
  compare->add_option("--batch", batches, "batch sizes to compare at (comma-separated)")
      ->delimiter(',');
  compare->add_option("--price", price_list, "GPU=USD/h, overrides a spec's price (repeatable)");
  compare
      ->add_option("--tp", tp_list,
                   "with a config.json: tensor-parallel degrees to set beside every GPU "
                   "(comma-separated, e.g. 1,2,4)")
      ->delimiter(',');
  compare->add_flag("--sparse", sparse,
                    "hold GEMMs against 2:4-sparse tensor peaks where the GPU has them");
  add_output_options(*compare);
  add_chart_options(*compare);

  CLI::App *calibrate =
      app.add_subcommand("calibrate", "time a sweep of GEMMs on the local GPU and fit the "
                                      "performance model to it (saved, used by --gpu auto)");

  CLI::App *specs = app.add_subcommand(
      "specs", "list the GPUs roofline-advise knows, with peaks and ridge points");
  add_output_options(*specs);

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success &e) { // --help, --version: printed to std::cout
    const int status = app.exit(e);
    std::cout.flush();
    if (stdout_was_closed || !std::cout)
      throw stdout_error(stdout_was_closed ? EBADF : errno);
    return status;
  } catch (const CLI::ParseError &e) {
    app.exit(e);
    return exit_input_error;
  }

  std::vector<named_file> inputs;
  if (const std::string &file = compare->parsed() ? compare_file : network_file; !file.empty())
    inputs.push_back({"the network file", file});
  if (roofline::is_spec_path(gpu))
    inputs.push_back({"the --gpu spec file", gpu});
  for (const std::string &entry : gpu_list)
    if (roofline::is_spec_path(entry))
      inputs.push_back({"the --gpus spec file", entry});
  refuse_overlapping_files(inputs, {{"--output", output.file},
                                    {"--plot", output.plot},
                                    {"--html", output.html},
                                    {"--emit-yaml", config.emit_yaml}});

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
    return run_compare(compare_file, config, gpu_list, batches, tp_list, price_list, sparse,
                       output);

  if (gemm->parsed()) {
    const auto p = roofline::parse_precision(precision);
    if (!p)
      throw roofline::input_error("unknown --precision `" + precision +
                                  "`; expected fp32, tf32, fp16, bf16, fp8, int8 or fp64");
    return analyse(roofline::single_gemm(m, n, k, batch_count, *p), gpu, sparse, measuring, output);
  }

  if (network_file.empty()) {
    std::cerr << app.help();
    return exit_input_error;
  }
  const roofline::network net = read_network(network_file, config, batch, output);
  return analyse(net, gpu, sparse, measuring, output);
}

} // namespace

// tests/fuzz/cli_fuzz.cpp includes this file without its main, to fuzz run().
#ifndef ROOFLINE_CLI_NO_MAIN
int main(int argc, char **argv) {
  // A standard stream closed at start (`>&-`) would be the next file opened, and a report meant
  // for stdout would land in it: hold it with /dev/null, and remember stdout's.
  for (const int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO})
    if (::fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
      if (::open("/dev/null", fd == STDIN_FILENO ? O_RDONLY : O_WRONLY) != fd)
        return exit_failure;
      stdout_was_closed = stdout_was_closed || fd == STDOUT_FILENO;
    }
  // A write past the file size limit (ulimit -f) fails with EFBIG, said and cleaned up, instead
  // of killing the process with a temporary file left beside the report.
  std::signal(SIGXFSZ, SIG_IGN);
  // Messages name files and layers: no control sequence of theirs reaches the terminal.
  try {
    return run(argc, argv);
  } catch (const roofline::input_error &e) {
    std::cerr << "roofline-advise: error: " << roofline::printable_text(e.what()) << '\n';
    return exit_input_error;
  } catch (const std::exception &e) {
    std::cerr << "roofline-advise: error: " << roofline::printable_text(e.what()) << '\n';
    return exit_failure;
  }
}
#endif
