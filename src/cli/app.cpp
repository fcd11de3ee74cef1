// SPDX-License-Identifier: Apache-2.0
#include "app.hpp"

#include "commands.hpp"
#include "output.hpp"
#include "requests.hpp"

#include "roofline/common/error.hpp"
#include "roofline/common/version.hpp"
#include "roofline/compare/serving.hpp"
#include "roofline/model/spec_catalog.hpp"
#include "roofline/output/output_format.hpp"

#include <CLI/CLI.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <functional>
#include <set>

#include <tuple>

#include <algorithm>
#include <cerrno>
#include <iostream>

namespace roofline::cli {

namespace {

/// Sizes on the command line, as size_problem says (CLI11's range check prints unreadable
/// bounds).
const CLI::Validator positive_integer(
    [](std::string &text) {
      const std::string problem = size_problem(text);
      return problem.empty() ? problem : "`" + text + "` " + problem;
    },
    "POSITIVE");

/// A number written in full and plainly, as `unit` (what the message asks for): CLI11 alone
/// would read `0x32` as 50 and ` 50` as 50, and a unit after it ("2s") needs saying.
CLI::Validator plain_number(const std::string &unit, double low, double high) {
  return CLI::Validator(
      [=](std::string &text) {
        const std::string problem = number_problem(text, low, high);
        return problem.empty() ? problem
                               : fmt::format("`{}` {}: expected a number of {} from {} to {}", text,
                                             problem, unit, low, high);
      },
      "NUMBER");
}

/// An output file's name: an empty one (a script's unset variable) would lose the report.
const CLI::Validator file_name(
    [](std::string &text) {
      return text.empty() ? "an empty file name; expected a path to write to" : std::string{};
    },
    "FILE");

/// Everything the command line may say, as CLI11 fills it.
struct command_line {
  output_choice output;
  model_choice model;
  measure_choice measuring;
  config_choice config;
  std::string network_file;
  std::int64_t batch = 0;
  // gemm
  std::int64_t m = 0, n = 0, k = 0, batch_count = 1;
  std::string precision = "fp16";
  // device
  bool measure = false, refresh = false;
  compare_choice comparing;
  train_choice training;
};

/// The commands of the command line, to tell which one was given.
struct commands {
  CLI::App *gemm, *device, *compare, *train, *calibrate, *specs;
};

void add_output_options(CLI::App &command, output_choice &output) {
  // The core's parsers decide what is valid (parse_output_format, parse_gemm_engine).
  command.add_option("--format,-f", output.format,
                     "table (default), json, csv, markdown, html or svg");
  command
      .add_option("--output,-o", output.file,
                  "also write the report to this file, in the format its extension names")
      ->check(file_name);
  command.add_flag("--wide", output.wide,
                   "the table format: every column, long lines unbroken (default: the key "
                   "columns, lines wrapped at 120)");
  command.add_option("--columns", output.columns,
                     "the table format: these columns (headers or JSON keys, comma-separated) "
                     "after each table's first");
}

void add_chart_options(CLI::App &command, output_choice &output) {
  command.add_option("--plot", output.plot, "also draw the roofline chart into this SVG file")
      ->check(file_name);
  command
      .add_option("--html", output.html,
                  "also write one self-contained HTML page: chart, tables, advice")
      ->check(file_name);
}

/// `--memory-reserve GB` into `gb`: analyze and compare alike.
void add_memory_reserve_option(CLI::App &command, std::optional<double> &gb) {
  command
      .add_option("--memory-reserve", gb,
                  "GB of GPU memory kept back for the framework's workspace, the CUDA context and "
                  "fragmentation (default: 10% of the GPU's memory, as vLLM's "
                  "gpu_memory_utilization 0.9 leaves)")
      ->check(plain_number("GB", 0, 1e6))
      ->type_name("GB");
}

void add_clock_option(CLI::App &command, std::string &clock) {
  command
      .add_option("--clock", clock,
                  "sustained: the clock the GPU's power limit lets it hold under load (real "
                  "programs); burst: the boost clock of a short run from idle")
      ->check(CLI::IsMember({"sustained", "burst"}))
      ->capture_default_str();
}

void add_model_options(CLI::App &command, model_choice &model, measure_choice &measuring) {
  command
      .add_option("--gpu,-g", model.gpu,
                  "GPU name, alias or spec file; `auto`: the local GPU, else the default")
      ->capture_default_str();
  command.add_flag("--sparse", model.sparse,
                   "hold GEMMs against 2:4-sparse tensor peaks where the GPU has them");
  add_clock_option(command, model.clock);
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
  command.add_flag("--no-power", measuring.no_power,
                   "with --measure: do not hold each op at the power limit (NVML: its energy per "
                   "call and sustained time; about 1 s an op)");
  command.add_option("--devices", measuring.devices,
                     "with --measure: `all`, every local GPU at once (a sharded network's "
                     "GEMMs on each, its all-reduces run for real; counters off)");
}

void add_config_options(CLI::App &command, config_choice &config) {
  command
      .add_option("--seq-len", config.seq_len,
                  "override the network's seq_len (a config's prompt, or its KV cache in decode)")
      ->check(positive_integer);
  command.add_option("--mode", config.mode,
                     "with a config.json: inference (default) or training (a whole --seq-len "
                     "forward and backward, the LM head at every position, no KV cache)");
  command.add_option("--optimizer", config.optimizer,
                     "training: the optimizer state memory counts, adamw (default: fp32 master "
                     "weights and two fp32 moments, 12 bytes a parameter) or sgd (with momentum: "
                     "8 bytes)");
  command.add_option("--recompute", config.recompute,
                     "training: the forward results kept for the backward pass, none (default: "
                     "every one) or full (each block's input; its forward runs again)");
  command.add_option("--phase", config.phase, "with a config.json: prefill (default) or decode");
  command
      .add_option("--kv-len", config.kv_len,
                  "with a config.json and --phase decode: the KV cache length")
      ->check(positive_integer);
  command.add_flag("--last-logits", config.last_logits,
                   "with a config.json in prefill: the LM head for the last position only");
  command
      .add_option("--ep", config.expert_parallel,
                  "with a config.json of a mixture of experts: its experts spread over this many "
                  "GPUs. Served: with --tp, whole over the tensor-parallel group (the same "
                  "degree), else over GPUs of data-parallel attention joined by all-to-alls; in "
                  "training, carved from --dp as Megatron does, each expert split by --tp")
      ->check(CLI::Range(std::int64_t{1}, max_collective_gpus));
  command
      .add_option("--dp", config.data_parallel,
                  "with a config.json in training: one GPU of this many data-parallel ones (its "
                  "gradients reduced and weights gathered over them, counted in full)")
      ->check(CLI::Range(std::int64_t{1}, max_collective_gpus));
  command
      .add_option("--zero", config.zero_stage,
                  "with --dp: ZeRO's stage, 0 (DDP), 1 (optimizer state sharded, the default), 2 "
                  "(gradients too), 3 (weights too: FSDP)")
      ->check(CLI::Range(0, 3));
  command.add_flag("--sequence-parallel", config.sequence_parallel,
                   "with a config.json, training under --tp: Megatron's sequence parallelism "
                   "(the norms and residual adds split along the sequence)");
  command.add_flag("--unfused-attention", config.unfused_attention,
                   "with a config.json: attention as two GEMMs and a softmax, not one fused "
                   "kernel");
  command.add_option("--quantization", config.quantization,
                     "with a config.json: the blocks' linear layers as w8a16 or w4a16 "
                     "(weight-only int8 or int4), fp8 GEMMs, or nvfp4 or mxfp4 GEMMs (fp4 "
                     "on Blackwell), whatever the config says");
  command.add_option("--kv-cache-dtype", config.kv_cache_dtype,
                     "with a config.json: the KV cache's format (fp16, bf16, fp8, int8)");
  command.add_option("--glue", config.glue,
                     "with a config.json: the kernels around the layers (norms, rotary "
                     "embeddings, cache writes, copies) as PyTorch eager runs transformers' "
                     "code (eager: training's default) or as a serving engine fuses them "
                     "(fused: inference's default)");
  command
      .add_option("--emit-yaml", config.emit_yaml,
                  "with a config.json: also write the network it builds as YAML to this file")
      ->check(file_name);
}

/// The main command: a network analysed.
void add_network_options(CLI::App &app, command_line &line) {
  app.add_option("network", line.network_file,
                 "network YAML file (docs/network-format.md), or a model's config.json");
  app.add_option("--batch", line.batch, "override the network's batch")->check(positive_integer);
  add_config_options(app, line.config);
  app.add_option("--tp", line.config.tensor_parallel,
                 "with a config.json: tensor parallelism over this many GPUs (one GPU's share of "
                 "each block, and the all-reduces between them)")
      ->check(positive_integer);
  app.add_option("--pp", line.config.pipeline_parallel,
                 "with a config.json: one stage of a pipeline of this many (its share of the "
                 "layers; in training, its sends and 1F1B's activations in flight)")
      ->check(CLI::Range(1, 1024));
  app.add_option("--cluster", line.model.cluster,
                 "a cluster (a name of clusters/ or a YAML file): its GPU, and the network that "
                 "joins its nodes for collectives that span them");
  add_model_options(app, line.model, line.measuring);
  add_memory_reserve_option(app, line.model.memory_reserve_gb);
  add_output_options(app, line.output);
  add_chart_options(app, line.output);
}

CLI::App *add_gemm_command(CLI::App &app, command_line &line) {
  CLI::App *gemm = app.add_subcommand("gemm", "analyse one GEMM: C[M,N] = A[M,K]·B[K,N]");
  gemm->add_option("M", line.m, "rows of A and C")->required()->check(positive_integer);
  gemm->add_option("N", line.n, "columns of B and C")->required()->check(positive_integer);
  gemm->add_option("K", line.k, "the reduction dimension")->required()->check(positive_integer);
  gemm->add_option("--precision,-p", line.precision, "fp32, tf32, fp16, bf16, fp8, int8 or fp64")
      ->capture_default_str();
  gemm->add_option("--batch-count", line.batch_count, "batched GEMM count")
      ->check(positive_integer);
  add_model_options(*gemm, line.model, line.measuring);
  add_output_options(*gemm, line.output);
  add_chart_options(*gemm, line.output);
  return gemm;
}

CLI::App *add_device_command(CLI::App &app, command_line &line) {
  CLI::App *device = app.add_subcommand(
      "device", "the local GPU: device query, theoretical and measured roofline");
  device->add_flag("--measure", line.measure,
                   "measure the ceilings (or show the cached measurement)");
  device->add_flag("--refresh", line.refresh, "measure again even when ceilings are cached");
  add_output_options(*device, line.output);
  return device;
}

/// A serving question's simulated load: its arrivals, its requests, the engine's scheduler.
void add_simulation_options(CLI::App &compare, compare_choice &choice) {
  CLI::Option *rate =
      compare
          .add_option("--rate", choice.rate,
                      "with --prompt-tokens: simulate requests arriving at this many a second "
                      "(Poisson), continuously batched: TTFT, TPOT, ITL and latency percentiles, "
                      "and the highest rate meeting --ttft and --tpot")
          ->check(plain_number("requests a second", 1e-6, 1e6))
          ->type_name("REQUESTS/S");
  compare
      .add_option("--concurrency", choice.concurrency,
                  "with --prompt-tokens: simulate this many requests in flight at once (a "
                  "closed loop), and search the most meeting --ttft and --tpot")
      ->check(positive_integer)
      ->excludes(rate);
  compare
      .add_option("--requests", choice.request_file,
                  "simulate the requests of this CSV file (prompt_tokens,output_tokens and "
                  "arrival_s, if given: docs/network-format.md): at their own arrivals, or "
                  "with --rate or --concurrency at that load; --prompt-tokens and "
                  "--output-tokens default to their means")
      ->type_name("FILE");
  compare
      .add_option("--num-requests", choice.num_requests,
                  "with --rate or --concurrency: how many requests of --prompt-tokens and "
                  "--output-tokens to simulate")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1'000'000}))
      ->capture_default_str();
  compare
      .add_option("--percentile", choice.percentile,
                  "a simulated load meets --ttft and --tpot at this percentile: 50, 90 or 99")
      ->check(CLI::IsMember({50, 90, 99}))
      ->capture_default_str();
  compare
      .add_option("--max-running", choice.max_running,
                  "the simulated engine's cap on running requests (vLLM's max_num_seqs)")
      ->check(CLI::Range(std::int64_t{1}, max_serving_batch))
      ->capture_default_str();
  compare
      .add_option("--shared-prefix", choice.shared_prefix,
                  "prefix caching: the first this many prompt tokens of every simulated "
                  "request are the same, computed once")
      ->check(CLI::Range(std::int64_t{0}, max_serving_tokens))
      ->type_name("TOKENS");
}

CLI::App *add_compare_command(CLI::App &app, command_line &line) {
  CLI::App *compare =
      app.add_subcommand("compare", "one network on several GPUs: times, speedups, cost, verdict");
  compare_choice &choice = line.comparing;
  compare->add_option("network", choice.file, "network YAML file, or a model's config.json")
      ->required();
  add_config_options(*compare, line.config);
  compare->get_option("--emit-yaml")
      ->description("with a config.json: also write the baseline's network as YAML to this file "
                    "(the first GPU's, at the first --tp degree and the first --batch, as it was "
                    "analysed)");
  compare
      ->add_option("--gpus", choice.gpus,
                   "GPUs to compare, the first is the baseline; `local`: the measured GPU")
      ->required();
  compare->add_option("--batch", choice.batches, "batch sizes to compare at (comma-separated)");
  compare->add_option("--price", choice.prices,
                      "GPU=USD/h, overrides a spec's price (comma-separated or repeated)");
  compare
      ->add_option("--energy-price", choice.energy_usd_per_kwh,
                   "USD per kWh of the energy the GPUs draw: added to the cost per token")
      ->check(plain_number("USD/kWh", 0, 100))
      ->type_name("USD/kWh");
  compare->add_option("--tp", choice.degrees,
                      "with a config.json: tensor-parallel degrees to set beside every GPU "
                      "(comma-separated, e.g. 1,2,4)");
  compare
      ->add_option("--prompt-tokens", choice.prompt_tokens,
                   "with a config.json: serve requests of this many prompt tokens (with "
                   "--output-tokens): each setup at the largest batch that fits and meets "
                   "--ttft and --tpot")
      ->check(positive_integer);
  compare
      ->add_option("--output-tokens", choice.output_tokens,
                   "with --prompt-tokens: the tokens each request generates")
      ->check(positive_integer);
  // The targets' bounds are the core's, checked here so that a malformed number is told why.
  const CLI::Validator latency_target =
      plain_number("milliseconds", min_latency_target_s * 1e3, max_latency_target_s * 1e3);
  compare
      ->add_option("--ttft", choice.ttft_ms,
                   "with --prompt-tokens: target time to the first token, in ms")
      ->check(latency_target);
  compare
      ->add_option("--tpot", choice.tpot_ms,
                   "with --prompt-tokens: target time per output token after the first, in ms")
      ->check(latency_target);
  compare
      ->add_option("--pp", choice.pipeline_parallel,
                   "pipeline stages of every setup, each a --tp group: with --prompt-tokens, "
                   "served as a pipeline (a model too big for one host's GPUs); else each "
                   "setup's step is one stage's")
      ->check(CLI::Range(1, 64));
  compare->add_option("--cluster", choice.cluster,
                      "a cluster (a name of clusters/ or a YAML file) whose network joins every "
                      "setup's nodes: for collectives and pipeline sends that span them");
  compare->add_flag("--eager", choice.eager,
                    "with --prompt-tokens: every step launched eagerly by the host (default: "
                    "replayed from CUDA graphs, as serving engines run them)");
  add_simulation_options(*compare, choice);
  add_memory_reserve_option(*compare, choice.memory_reserve_gb);
  // One --sparse, before the command or after it (dispatch hands it to the comparison).
  compare->add_flag("--sparse", line.model.sparse,
                    "hold GEMMs against 2:4-sparse tensor peaks where the GPU has them");
  add_clock_option(*compare, line.model.clock);
  add_output_options(*compare, line.output);
  add_chart_options(*compare, line.output);
  return compare;
}

CLI::App *add_train_command(CLI::App &app, command_line &line) {
  CLI::App *train = app.add_subcommand(
      "train", "a model trained on a cluster: the layouts (TP, PP, DP, CP, EP, micro-batch, "
               "ZeRO, recomputation) ranked by step time, with tokens/s, MFU, memory, days, "
               "energy and cost");
  train_choice &t = line.training;
  train->add_option("network", t.file, "a model's config.json")->required();
  train
      ->add_option("--cluster", t.clusters,
                   "a cluster (a name of clusters/ or a YAML file), or several to compare "
                   "(comma-separated)")
      ->required()
      ->delimiter(',');
  train->add_option("--gpus", t.gpus, "GPUs to train on (default: the cluster's)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{10'000'000}));
  train->add_option("--global-batch", t.global_batch, "sequences a step")
      ->required()
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 30));
  train->add_option("--seq-len", t.seq_len, "tokens a sequence")
      ->required()
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 24));
  train->add_option("--tokens", t.tokens, "tokens to train on: the run's days, energy and cost")
      ->check(plain_number("tokens", 1, 1e18));
  for (const auto &[flag, value, what] :
       {std::tuple{"--tp", &t.tp, "tensor-parallel degree"},
        {"--pp", &t.pp, "pipeline stages"},
        {"--dp", &t.dp, "data-parallel degree"},
        {"--cp", &t.cp, "context-parallel degree"},
        {"--ep", &t.ep, "expert-parallel degree (a mixture of experts)"},
        {"--micro-batch", &t.micro_batch, "sequences a micro-batch"},
        {"--virtual-stages", &t.virtual_stages, "interleaved 1F1B: model chunks a GPU"}})
    train->add_option(flag, *value, std::string(what) + " (default: searched)")
        ->check(CLI::Range(1, 1 << 20));
  train
      ->add_option("--zero", t.zero_stage,
                   "ZeRO stage: 0 (DDP), 1 (distributed optimizer), 2, "
                   "3 (FSDP) (default: 1 and 3 searched)")
      ->check(CLI::Range(0, 3));
  train->add_option("--recompute", t.recompute, "none or full (default: both searched)")
      ->check(CLI::IsMember({"none", "full"}));
  train
      ->add_option("--expert-imbalance", t.expert_imbalance,
                   "a MoE layer's busiest GPU gets this many times the mean tokens")
      ->check(plain_number("times the mean", 1, 100))
      ->capture_default_str();
  train
      ->add_option("--price", t.prices,
                   "USD per GPU-hour, or CLUSTER=USD/h for each of several (default: the "
                   "cluster's, else the GPU's)")
      ->delimiter(',');
  add_clock_option(*train, t.clock);
  add_output_options(*train, line.output);
  return train;
}

commands add_commands(CLI::App &app, command_line &line) {
  commands added;
  added.gemm = add_gemm_command(app, line);
  added.device = add_device_command(app, line);
  added.compare = add_compare_command(app, line);
  added.train = add_train_command(app, line);
  added.calibrate =
      app.add_subcommand("calibrate", "time a sweep of GEMMs on the local GPU and fit the "
                                      "performance model to it (saved, used by --gpu auto)");
  added.specs = app.add_subcommand(
      "specs", "list the GPUs roofline-advise knows, with peaks and ridge points");
  add_output_options(*added.specs, line.output);
  return added;
}

/// Refuses, before any work, an output that would replace an input (the network file, a spec
/// file) or another output.
void refuse_overwrites(const command_line &line, bool comparing) {
  std::vector<named_file> inputs;
  if (const std::string &file = comparing ? line.comparing.file : line.network_file; !file.empty())
    inputs.push_back({"the network file", file});
  if (is_spec_path(line.model.gpu))
    inputs.push_back({"the --gpu spec file", line.model.gpu});
  for (const std::string &entry : line.comparing.gpus)
    if (is_spec_path(entry))
      inputs.push_back({"the --gpus spec file", entry});
  refuse_overlapping_files(inputs, {{"--output", line.output.file},
                                    {"--plot", line.output.plot},
                                    {"--html", line.output.html},
                                    {"--emit-yaml", line.config.emit_yaml}});
}

/// The long names ("--seq-len") of the options `add` gives a command.
std::set<std::string> option_names(const std::function<void(CLI::App &)> &add) {
  CLI::App scratch;
  add(scratch);
  std::set<std::string> names;
  for (const CLI::Option *option : scratch.get_options())
    for (const std::string &name : option->get_lnames())
      names.insert("--" + name);
  return names;
}

/// Refuses an option of the network analysis given before a command that does not read it from
/// the same choice (it would be dropped): the options a command shares with the analysis are
/// its output's, and for `gemm` the model's, for `compare` a config's (and --sparse, --clock).
void refuse_options_before(const CLI::App &app) {
  const std::vector<CLI::App *> parsed = app.get_subcommands();
  if (parsed.empty())
    return;
  const std::vector<const CLI::Option *> before = app.get_options([](const CLI::Option *o) {
    return o->count() > 0 && !o->get_lnames().empty() && o->get_lnames()[0] != "help";
  });
  if (before.empty()) // the usual case: no names to gather
    return;
  const CLI::App &command = *parsed.front();
  command_line scratch;
  std::set<std::string> shared = option_names([&](CLI::App &a) {
    add_output_options(a, scratch.output);
    add_chart_options(a, scratch.output);
  });
  const std::string name = command.get_name();
  if (name == "gemm")
    shared.merge(
        option_names([&](CLI::App &a) { add_model_options(a, scratch.model, scratch.measuring); }));
  if (name == "compare") {
    shared.merge(option_names([&](CLI::App &a) { add_config_options(a, scratch.config); }));
    shared.insert({"--sparse", "--clock"});
  }
  for (const CLI::Option *option : before) {
    const std::string given = "--" + option->get_lnames()[0];
    if (shared.count(given) > 0)
      continue;
    throw input_error(
        command.get_option_no_throw(given)
            ? fmt::format("{} before `{}`: give it after the command (roofline-advise {} … {} …), "
                          "where the command reads it",
                          given, name, name, given)
            : fmt::format("{} before `{}`: the network analysis's, which `{}` takes none of", given,
                          name, name));
  }
}

/// The command the command line names, run.
int dispatch(const CLI::App &app, const commands &given, command_line &line) {
  refuse_options_before(app);
  if (given.specs->parsed())
    return list_specs(line.output);
  if (given.device->parsed())
    return describe_device(line.measure, line.refresh, line.output);
  if (given.calibrate->parsed())
    return calibrate();
  if (given.train->parsed())
    return train(line.training, line.output);
  if (given.compare->parsed()) {
    line.comparing.sparse = line.model.sparse;
    line.comparing.clock = line.model.clock;
    line.comparing.ttft_given = given.compare->get_option("--ttft")->count() > 0;
    line.comparing.tpot_given = given.compare->get_option("--tpot")->count() > 0;
    return compare(line.comparing, line.config, line.output);
  }
  if (given.gemm->parsed()) {
    const auto p = parse_precision(line.precision);
    if (!p)
      throw input_error("unknown --precision `" + line.precision + "`; expected " +
                        names_of<precision>().choices(
                            {precision::fp32, precision::tf32, precision::fp16, precision::bf16,
                             precision::fp8, precision::int8, precision::fp64}));
    return analyse(single_gemm(line.m, line.n, line.k, line.batch_count, *p), line.model,
                   line.measuring, line.output);
  }
  if (line.network_file.empty()) {
    std::cerr << app.help();
    return exit_input_error;
  }
  const model_choice model = with_cluster(line.model); // its errors before the network's
  const network net = read_network(line.network_file, line.config, line.batch, line.output);
  return analyse(net, model, line.measuring, line.output);
}

/// Where CLI11 says only "The following argument was not expected": an option of other commands
/// says which ones it belongs to, an unknown one the closest of its command's options.
std::string unexpected_argument(const CLI::App &app, const std::string &argument) {
  const CLI::App *command = app.get_subcommands().empty() ? &app : app.get_subcommands().front();
  const auto command_name = [&](const CLI::App *c) {
    return c == &app ? std::string("the analysis of a network")
                     : "`roofline-advise " + c->get_name() + " …`";
  };
  const std::string name = argument.substr(0, argument.find('='));
  std::vector<const CLI::App *> commands{&app};
  for (const CLI::App *sub : app.get_subcommands([](const CLI::App *) { return true; }))
    commands.push_back(sub);
  std::vector<std::string> owners;
  for (const CLI::App *other : commands)
    if (other != command && other->get_option_no_throw(name))
      owners.push_back(command_name(other));
  if (!owners.empty() && name.rfind("--", 0) == 0)
    return fmt::format("{} belongs to {}, not to {}", shown_value(name), fmt::join(owners, " and "),
                       command_name(command));
  std::vector<std::string> known; // the command's own options, as typed
  for (const CLI::Option *option : command->get_options())
    for (const std::string &lname : option->get_lnames())
      known.push_back("--" + lname);
  if (name.rfind("--", 0) == 0)
    return fmt::format("unknown option {} for {}{}", shown_value(name), command_name(command),
                       did_you_mean(name, known));
  return fmt::format("unexpected argument `{}` for {}", shown_value(argument),
                     command_name(command));
}

} // namespace

int run(int argc, char **argv) {
  CLI::App app{"roofline-advise: places every GEMM of a network on a GPU's roofline"};
  app.set_version_flag("--version", std::string(version()));
  app.require_subcommand(0, 1);
  command_line line;
  add_network_options(app, line);
  const commands given = add_commands(app, line);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success &e) { // --help, --version: printed to std::cout
    const int status = app.exit(e);
    std::cout.flush();
    if (stdout_closed() || !std::cout)
      throw error(stdout_problem(stdout_closed() ? EBADF : errno));
    return status;
  } catch (const CLI::ExtrasError &e) {
    const std::vector<std::string> extras = app.remaining(true);
    if (extras.empty())
      throw input_error(e.what());
    throw input_error(unexpected_argument(app, extras.front()));
  } catch (const CLI::ParseError &e) {
    app.exit(e);
    return exit_input_error;
  }
  compare_choice &c = line.comparing;
  c.gpus = comma_list(c.gpus, "--gpus");
  c.batches = comma_list(c.batches, "--batch");
  c.prices = comma_list(c.prices, "--price");
  c.degrees = comma_list(c.degrees, "--tp");
  line.output.columns = comma_list(line.output.columns, "--columns");
  refuse_overwrites(line, given.compare->parsed());
  return dispatch(app, given, line);
}

} // namespace roofline::cli
