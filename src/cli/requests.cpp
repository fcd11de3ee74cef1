// SPDX-License-Identifier: Apache-2.0
#include "requests.hpp"

#include "roofline/common/error.hpp"
#include "roofline/compare/request_file.hpp"
#include "roofline/input/network_yaml.hpp"
#include "roofline/model/gpu_spec.hpp"
#include "roofline/model/precision.hpp"
#include "roofline/model/spec_catalog.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <tuple>
#include <utility>

namespace roofline::cli {

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

std::string number_problem(const std::string &text, double low, double high) {
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  const std::size_t number_end = text.find_first_not_of("0123456789.eE+-");
  if (text.empty() || !(digit(text.front()) || text.front() == '.' || text.front() == '-'))
    return "is not a number";
  if (number_end != std::string::npos)
    return number_end > 0 && text.find_first_of("0123456789") < number_end &&
                   std::isalpha(static_cast<unsigned char>(text[number_end])) &&
                   text.find_first_not_of(" abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ/",
                                          number_end) == std::string::npos
               ? "has a unit after it (give the bare number)"
               : "is not a number";
  double value = 0;
  const char *end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (error == std::errc::result_out_of_range)
    return "is out of range";
  if (error != std::errc{} || stop != end)
    return "is not a number";
  return std::isfinite(value) && value >= low && value <= high ? std::string{} : "is out of range";
}

std::vector<std::string> comma_list(const std::vector<std::string> &given,
                                    const std::string &option) {
  std::vector<std::string> entries;
  for (const std::string &text : given)
    for (std::size_t start = 0;;) {
      const std::size_t comma = text.find(',', start);
      std::string entry = text.substr(start, comma - start);
      if (entry.empty())
        throw input_error(option + " `" + text +
                          "`: an empty entry; expected a comma-separated "
                          "list such as a,b,c");
      entries.push_back(std::move(entry));
      if (comma == std::string::npos)
        break;
      start = comma + 1;
    }
  return entries;
}

std::int64_t positive_from(const std::string &text, const std::string &option) {
  if (const std::string problem = size_problem(text); !problem.empty())
    throw input_error(option + ": `" + text + "` " + problem);
  return std::stoll(text);
}

bool is_model_config(const std::string &file) {
  return file.size() > 5 && file.compare(file.size() - 5, 5, ".json") == 0;
}

namespace {

/// The value of E that `option` names as `text`; input_error "unknown --option `text`; expected
/// …" when none.
template <class E> E named(const std::string &text, const char *option) {
  const std::optional<E> parsed = names_of<E>().parse(text);
  if (!parsed)
    throw input_error(
        fmt::format("unknown {} `{}`; expected {}", option, text, names_of<E>().choices()));
  return *parsed;
}

/// The options only a model config builds with, each with whether it was given, in the order
/// their refusals name them.
std::vector<std::pair<bool, const char *>> config_only_options(const config_choice &config) {
  return {{!config.mode.empty(), "--mode"},
          {!config.phase.empty(), "--phase"},
          {config.kv_len > 0, "--kv-len"},
          {config.last_logits, "--last-logits"},
          {!config.emit_yaml.empty(), "--emit-yaml"},
          {config.unfused_attention, "--unfused-attention"},
          {!config.quantization.empty(), "--quantization"},
          {!config.kv_cache_dtype.empty(), "--kv-cache-dtype"},
          {!config.glue.empty(), "--glue"},
          {config.tensor_parallel > 0, "--tp"},
          {config.sequence_parallel, "--sequence-parallel"},
          {config.pipeline_parallel > 0, "--pp"},
          {config.expert_parallel > 0, "--ep"},
          {config.data_parallel > 0, "--dp"},
          {config.zero_stage >= 0, "--zero"}};
}

/// A network YAML, with --batch and --seq-len; the config options given are refused.
network read_network_yaml(const std::string &file, const config_choice &config,
                          std::int64_t batch) {
  for (const auto &[given, option] : config_only_options(config))
    if (given)
      throw input_error(std::string(option) +
                        " applies to a model config (a .json file), not to a network YAML such "
                        "as " +
                        file + ", whose layers say it themselves (docs/network-format.md)");
  network net = load_network(file);
  // A training step's choices: the command line's over the file's.
  for (const auto &[given, option] : {std::pair{!config.optimizer.empty(), "--optimizer"},
                                      std::pair{!config.recompute.empty(), "--recompute"}})
    if (given && net.mode != run_mode::training)
      throw input_error(std::string(option) + " applies to a training step, and " + file +
                        " is `mode: inference`");
  if (!config.optimizer.empty())
    net.optimizer = named<optimizer>(config.optimizer, "--optimizer");
  if (!config.recompute.empty())
    net.recompute = named<recomputation>(config.recompute, "--recompute");
  if (batch > 0)
    net.batch = batch;
  if (config.seq_len > 0)
    net.seq_len = config.seq_len;
  // Checked here, where the flags are known: the network's own product was checked as it loaded.
  if (std::int64_t rows = 0;
      (batch > 0 || config.seq_len > 0) && __builtin_mul_overflow(net.batch, net.seq_len, &rows))
    throw input_error(
        fmt::format("{} {} × {} {} overflows a 64-bit integer (the rows of a step of {})",
                    batch > 0 ? "--batch" : "the network's batch", net.batch,
                    config.seq_len > 0 ? "--seq-len" : "the network's seq_len", net.seq_len, file));
  return net;
}

/// A captured program (an op trace), where `file` is one; nullopt for a model config. Its shapes
/// are the ones it ran with: the options that would change them are refused.
std::optional<network> read_op_trace(const std::string &file, const config_choice &config,
                                     std::int64_t batch) {
  std::optional<network> traced = load_op_trace(file);
  if (!traced)
    return traced;
  // Its shapes, then what only a config builds with, then its optimizer's choices.
  std::vector<std::pair<bool, const char *>> fixed{{batch > 0, "--batch"},
                                                   {config.seq_len > 0, "--seq-len"}};
  for (const auto &option : config_only_options(config))
    fixed.push_back(option);
  fixed.push_back({!config.optimizer.empty(), "--optimizer"});
  fixed.push_back({!config.recompute.empty(), "--recompute"});
  for (const auto &[given, option] : fixed)
    if (given)
      throw input_error(std::string(option) + " does not apply to " + file +
                        ", a captured program (an op trace): its ops ran at the shapes, "
                        "precisions and optimizer it records (docs/op-trace-format.md)");
  return traced;
}

/// What --mode, --optimizer, --recompute, --phase, --quantization, --kv-cache-dtype and --glue
/// name; input_error when unknown.
void parse_config_names(const config_choice &config, config_options &options) {
  if (!config.mode.empty())
    options.mode = named<run_mode>(config.mode, "--mode");
  if (!config.optimizer.empty())
    options.optimizer = named<optimizer>(config.optimizer, "--optimizer");
  if (!config.recompute.empty())
    options.recompute = named<recomputation>(config.recompute, "--recompute");
  if (!config.phase.empty())
    options.phase = named<inference_phase>(config.phase, "--phase");
  if (!config.quantization.empty()) {
    options.quantization = parse_quantization(config.quantization);
    if (!options.quantization)
      throw input_error("unknown --quantization `" + config.quantization +
                        "`; expected w8a16, w4a16, fp8, nvfp4 or mxfp4");
  }
  if (!config.kv_cache_dtype.empty()) {
    options.kv_cache = parse_precision(config.kv_cache_dtype);
    if (!options.kv_cache) // one wider than 16 bits: check_config_options says so
      throw input_error("unknown --kv-cache-dtype `" + config.kv_cache_dtype +
                        "`; expected fp16, bf16, fp8 or int8");
  }
  if (!config.glue.empty()) {
    const auto glue = parse_glue_style(config.glue);
    if (!glue)
      throw input_error("unknown --glue `" + config.glue + "`; expected eager or fused");
    options.glue = *glue;
  }
}

/// The options a model config is built at, as the command line gives them, checked.
config_options config_options_of(const config_choice &config, std::int64_t batch) {
  config_options options;
  parse_config_names(config, options);
  if (batch > 0)
    options.batch = batch;
  if (config.seq_len > 0)
    options.seq_len = config.seq_len;
  if (config.kv_len > 0)
    options.kv_len = config.kv_len;
  options.last_logits = config.last_logits;
  options.fused_attention = !config.unfused_attention;
  options.sequence_parallel = config.sequence_parallel;
  if (config.tensor_parallel > 0) {
    check_tensor_parallel(config.tensor_parallel); // before it is narrowed
    options.tensor_parallel = static_cast<int>(config.tensor_parallel);
  }
  // Their ranges are CLI11's (app.cpp): narrowed safely.
  if (config.pipeline_parallel > 0)
    options.pipeline_parallel = static_cast<int>(config.pipeline_parallel);
  if (config.expert_parallel > 0)
    options.expert_parallel = static_cast<int>(config.expert_parallel);
  if (config.data_parallel > 0)
    options.data_parallel = static_cast<int>(config.data_parallel);
  if (config.zero_stage >= 0)
    options.zero_stage = config.zero_stage;
  check_config_options(options);
  return options;
}

/// A model config read once, with the options the command line gives (checked before the file
/// is read).
config_source read_config(const std::string &file, const config_choice &config,
                          std::int64_t batch) {
  config_options options = config_options_of(config, batch);
  return {model_config::load(file), std::move(options)};
}

} // namespace

network read_network(const std::string &file, const config_choice &config, std::int64_t batch,
                     output_choice &output) {
  if (!is_model_config(file))
    return read_network_yaml(file, config, batch);
  if (std::optional<network> traced = read_op_trace(file, config, batch))
    return std::move(*traced);
  const config_source source = read_config(file, config, batch);
  network net = source.config.build(source.options);
  if (!config.emit_yaml.empty()) {
    output.network_yaml_file = config.emit_yaml;
    output.network_yaml = to_network_yaml(net);
  }
  return net;
}

network_source read_network_source(const std::string &file, const config_choice &config) {
  if (!is_model_config(file))
    return read_network_yaml(file, config, 0);
  if (std::optional<network> traced = read_op_trace(file, config, 0))
    return std::move(*traced);
  return read_config(file, config, 0);
}

pipeline_options pipeline_options_of(const measure_choice &choice) {
  const auto engine = parse_gemm_engine(choice.engine);
  if (!engine)
    throw input_error("unknown --engine `" + choice.engine + "`; expected " +
                      names_of<gemm_engine>().choices());
  pipeline_options options;
  if (!choice.devices.empty() && choice.devices != "all")
    throw input_error("unknown --devices `" + choice.devices +
                      "`; expected all (every local GPU at once)");
  if (!choice.devices.empty() && !choice.enabled)
    throw input_error("--devices applies to --measure");
  if (!choice.enabled)
    return options;
  measure_options measuring;
  measuring.engine = *engine;
  measuring.counters = !choice.no_counters;
  measuring.rounds = 3; // a spell of a slower host moves one round, not the result
  // Half a second to settle, half a second read: past the power controller's settling (tens of
  // ms), long enough for NVML's energy counter to resolve a few percent.
  measuring.held_s = choice.no_power ? 0 : 0.5;
  measuring.progress = show_op_progress;
  measuring.every_gpu = choice.devices == "all";
  options.measure = measuring;
  return options;
}

std::optional<cache_state> operand_cache_of(const measure_choice &choice) {
  if (choice.warm_l2)
    return cache_state::warm;
  if (choice.cold_l2)
    return cache_state::cold;
  return std::nullopt;
}

namespace {

/// `--price GPU=USD/h` entries by GPU as named; input_error for a malformed entry, a price out of
/// bounds, or a GPU priced twice under one name.
/// A price written in full (no `inf`, `nan`, hex or spaces: from_chars reads no '+') and in
/// range; none otherwise.
std::optional<double> price_of(const std::string &number) {
  double value = 0;
  const char *end = number.data() + number.size();
  const auto [stop, error] = std::from_chars(number.data(), end, value);
  if (error != std::errc{} || stop != end || !price_in_range(value))
    return std::nullopt;
  return value;
}

std::map<std::string, double> prices_of(const std::vector<std::string> &entries) {
  std::map<std::string, double> prices;
  std::map<std::string, std::string> given; // GPU → its --price entry
  for (const std::string &entry : entries) {
    const auto equals = entry.find('=');
    if (equals == std::string::npos)
      throw input_error("--price `" + entry + "`: expected GPU=USD/h, e.g. h100=2.49");
    const std::optional<double> value = price_of(entry.substr(equals + 1));
    if (!value)
      throw input_error(
          fmt::format("--price `{}`: the price must be a number of USD per GPU-hour from {:g} to "
                      "{:g}",
                      entry, min_price_per_hour_usd, max_price_per_hour_usd));
    const std::string gpu = entry.substr(0, equals);
    if (const auto [earlier, fresh] = given.emplace(gpu, entry); !fresh)
      throw input_error("--price `" + earlier->second + "` and `" + entry +
                        "`: the same GPU priced twice; give it one price");
    prices[gpu] = *value;
  }
  return prices;
}

} // namespace

std::map<std::string, double> training_prices_of(const train_choice &choice) {
  std::map<std::string, double> prices;
  for (const std::string &entry : choice.prices) {
    const auto equals = entry.find('=');
    const std::string name = equals == std::string::npos ? "" : entry.substr(0, equals);
    const std::optional<double> usd =
        price_of(equals == std::string::npos ? entry : entry.substr(equals + 1));
    if (!usd)
      throw input_error("--price `" + entry +
                        "`: expected USD per GPU-hour from 0.001 to 10000, "
                        "or CLUSTER=USD/h");
    if (name.empty() && choice.clusters.size() > 1)
      throw input_error("--price `" + entry + "` with several clusters: say whose, CLUSTER=USD/h");
    if (!name.empty() &&
        std::find(choice.clusters.begin(), choice.clusters.end(), name) == choice.clusters.end())
      throw input_error("--price `" + entry + "`: `" + name + "` is not a --cluster");
    prices[name.empty() ? choice.clusters.front() : name] = *usd;
  }
  return prices;
}

std::optional<serving_question> serving_question_of(const compare_choice &choice,
                                                    const config_choice &config) {
  const bool asked =
      choice.prompt_tokens > 0 || choice.output_tokens > 0 || !choice.request_file.empty();
  if (!asked) {
    for (const auto &[given, option] : {std::pair{choice.ttft_given, "--ttft"},
                                        {choice.tpot_given, "--tpot"},
                                        {choice.eager, "--eager"},
                                        {choice.rate > 0, "--rate"},
                                        {choice.concurrency > 0, "--concurrency"},
                                        {choice.shared_prefix > 0, "--shared-prefix"}})
      if (given)
        throw input_error(std::string(option) +
                          " applies to a serving question: give --prompt-tokens and "
                          "--output-tokens too");
    return std::nullopt;
  }
  serving_question q;
  if (!choice.request_file.empty()) {
    q.requests = load_request_file(choice.request_file);
    std::tie(q.prompt_tokens, q.output_tokens) = mean_lengths(q.requests);
  }
  if (choice.prompt_tokens > 0)
    q.prompt_tokens = choice.prompt_tokens;
  if (choice.output_tokens > 0)
    q.output_tokens = choice.output_tokens;
  if (q.prompt_tokens == 0 || q.output_tokens == 0)
    throw input_error("a serving question needs both --prompt-tokens and --output-tokens (or "
                      "--requests FILE)");
  for (const auto &[given, option] : {std::pair{!config.phase.empty(), "--phase"},
                                      {config.seq_len > 0, "--seq-len"},
                                      {config.kv_len > 0, "--kv-len"},
                                      {config.last_logits, "--last-logits"},
                                      {!config.emit_yaml.empty(), "--emit-yaml"},
                                      {!config.mode.empty(), "--mode"},
                                      {!config.optimizer.empty(), "--optimizer"},
                                      {!config.recompute.empty(), "--recompute"},
                                      {config.data_parallel > 0, "--dp"},
                                      {config.zero_stage >= 0, "--zero"}})
    if (given)
      throw input_error(std::string(option) +
                        " with --prompt-tokens: a serving question builds each request's "
                        "prefill and decode steps itself");
  if (choice.ttft_given)
    q.ttft_s = choice.ttft_ms / 1e3;
  if (choice.tpot_given)
    q.tpot_s = choice.tpot_ms / 1e3;
  q.eager = choice.eager;
  if (choice.rate > 0)
    q.rate_per_s = choice.rate;
  if (choice.concurrency > 0)
    q.concurrency = choice.concurrency;
  q.simulated_requests = choice.num_requests;
  q.percentile = choice.percentile;
  q.max_running = choice.max_running;
  q.shared_prefix_tokens = choice.shared_prefix;
  if (choice.pipeline_parallel > 0)
    q.pipeline_parallel = choice.pipeline_parallel;
  check_serving_question(q);
  return q;
}

compare_request compare_request_of(const compare_choice &choice, const config_choice &config) {
  compare_request request;
  for (const std::string &degree : choice.degrees) {
    const std::int64_t tp = positive_from(degree, "--tp");
    check_tensor_parallel(tp); // before it is narrowed
    request.tensor_parallel.push_back(static_cast<int>(tp));
  }
  request.gpus = choice.gpus;
  request.sparse = choice.sparse;
  request.clock = choice.clock == "burst" ? clock_regime::burst : clock_regime::sustained;
  request.progress = show_op_progress;
  request.prices = prices_of(choice.prices);
  if (choice.memory_reserve_gb)
    request.memory_reserve = *choice.memory_reserve_gb * 1e9;
  request.energy_usd_per_kwh = choice.energy_usd_per_kwh;
  for (const std::string &b : choice.batches)
    request.batches.push_back(positive_from(b, "--batch"));
  if (!choice.cluster.empty())
    request.network = network_of(cluster_and_gpu(choice.cluster).first);
  resolve_compared_gpus(request); // unknown or repeated GPUs, before the network
  // Without a serving question, --pp is the stage every setup's step is of.
  config_choice built = config;
  if (choice.prompt_tokens == 0 && choice.output_tokens == 0 && choice.request_file.empty())
    built.pipeline_parallel = choice.pipeline_parallel;
  request.source = read_network_source(choice.file, built); // refuses --emit-yaml for a YAML
  return request;
}

std::pair<cluster_spec, const gpu_spec *> cluster_and_gpu(const std::string &name) {
  cluster_spec cluster = find_cluster_spec(name);
  const gpu_spec *spec = spec_catalog::builtin().find(cluster.gpu);
  if (!spec)
    throw input_error({cluster.origin}, "cluster `gpu` " + cluster.gpu +
                                            ": no GPU spec of that name (roofline-advise "
                                            "specs lists them)");
  return {std::move(cluster), spec};
}

} // namespace roofline::cli
