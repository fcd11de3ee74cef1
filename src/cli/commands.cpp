// SPDX-License-Identifier: Apache-2.0
#include "commands.hpp"

#include "interrupt.hpp"
#include "measurement_plugin.hpp"
#include "option_words.hpp"

#include "roofline/analysis/measurement_layer.hpp"
#include "roofline/analysis/pipeline.hpp"
#include "roofline/cluster/training.hpp"
#include "roofline/common/error.hpp"
#include "roofline/compare/comparison.hpp"
#include "roofline/compare/serving.hpp"
#include "roofline/input/network_yaml.hpp"
#include "roofline/model/model_fit.hpp"
#include "roofline/model/spec_catalog.hpp"
#include "roofline/output/writers.hpp"

#include <algorithm>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>
#include <unistd.h>

namespace roofline::cli {

namespace {

/// The measurement layer, for commands that cannot run without it.
const measurement_layer &required_layer(const std::string &command) {
  return measurement_plugin().required(
      command,
      ". Analyse against a datasheet spec instead: roofline-advise NETWORK.yaml --gpu h100 "
      "(roofline-advise specs lists them)");
}

/// `--gpu`, with the notice of a fallback on stderr.
gpu_choice chosen_gpu(const model_choice &model, std::optional<cache_state> operand_cache,
                      const measurement_layer_ref &layer) {
  model_options options;
  options.sparse = model.sparse;
  options.clock = model.clock == "burst" ? clock_regime::burst : clock_regime::sustained;
  options.operand_cache = operand_cache;
  options.network = model.network;
  gpu_choice gpu = choose_gpu(model.gpu, options, layer);
  if (!gpu.notice.empty())
    std::cerr << "roofline-advise: " << in_cli_words(gpu.notice) << '\n';
  return gpu;
}

} // namespace

model_choice with_cluster(model_choice model) {
  if (model.cluster.empty())
    return model;
  const auto [cluster, spec] = cluster_and_gpu(model.cluster);
  if (model.gpu != "auto")
    throw input_error("--gpu " + model.gpu + " with --cluster " + model.cluster +
                      ", whose GPU is " + spec->name + ": give one or the other");
  model.gpu = spec->name;
  model.network = network_of(cluster);
  return model;
}

int analyse(const network &net, const model_choice &model, const measure_choice &measuring,
            const output_choice &output) {
  pipeline_options options = pipeline_options_of(measuring);
  if (model.memory_reserve_gb)
    options.memory_reserve = *model.memory_reserve_gb * 1e9;
  // The plugin is loaded only where it is used: `--gpu auto` (where a GPU may be) and --measure.
  // A datasheet analysis loads no CUDA library.
  const measurement_layer_ref layer = options.measure       ? measurement_plugin()
                                      : model.gpu == "auto" ? local_gpu_plugin()
                                                            : measurement_layer_ref{};
  if (options.measure) {
    options.layer = layer;
    // Ctrl-C stops a measurement after the op in flight (without a layer, run_pipeline says why).
    if (layer) {
      stop_on_interrupt();
      options.measure->stop = interrupted;
    }
  }
  const report r =
      run_pipeline(net, chosen_gpu(model, operand_cache_of(measuring), layer), options);
  emit(output, [&](output_format format, std::ostream &out, const write_options &write) {
    write_report(r, format, out, write);
  });
  return r.complete ? 0 : exit_interrupted;
}

int compare(const compare_choice &choice, const config_choice &config,
            const output_choice &output) {
  const std::optional<serving_question> serving = serving_question_of(choice, config);
  compare_request request = compare_request_of(choice, config);
  if (serving) {
    const serving_comparison answer = serve(request, *serving);
    emit(output, [&](output_format format, std::ostream &out, const write_options &options) {
      write_serving(answer, format, out, options);
    });
    return 0;
  }
  if (std::find(request.gpus.begin(), request.gpus.end(), "local") != request.gpus.end())
    request.layer = measurement_plugin();
  const std::vector<comparison> comparisons = compare_gpus(request);
  output_choice written = output;
  if (!config.emit_yaml.empty()) { // the network the baseline ran, not the one read
    written.network_yaml_file = config.emit_yaml;
    written.network_yaml = to_network_yaml(comparisons.front().baseline_network);
  }
  emit(written, [&](output_format format, std::ostream &out, const write_options &options) {
    write_comparison(comparisons, format, out, options);
  });
  return 0;
}

int train(const train_choice &choice, const output_choice &output) {
  model_options options;
  options.clock = choice.clock == "burst" ? clock_regime::burst : clock_regime::sustained;
  const std::map<std::string, double> prices = training_prices_of(choice);

  const parallel_layout pinned{choice.tp,
                               choice.pp,
                               choice.dp,
                               choice.cp,
                               choice.ep,
                               choice.micro_batch,
                               choice.virtual_stages,
                               std::max(0, choice.zero_stage),
                               choice.recompute == "full" ? recomputation::full
                                                          : recomputation::none};
  // The clusters first (small files, each checked), then the config.
  std::vector<std::pair<cluster_spec, const gpu_spec *>> clusters;
  for (const std::string &name : choice.clusters)
    clusters.push_back(cluster_and_gpu(name));
  const model_config config = model_config::load(choice.file);
  std::vector<training_answer> answers;
  for (std::size_t i = 0; i < clusters.size(); ++i) {
    const auto &[cluster, spec] = clusters[i];
    const std::string &name = choice.clusters[i];
    training_question q;
    q.global_batch = choice.global_batch;
    q.seq_len = choice.seq_len;
    q.tokens = choice.tokens;
    q.gpus = choice.gpus;
    q.expert_imbalance = choice.expert_imbalance;
    if (const auto price = prices.find(name); price != prices.end())
      q.price_per_gpu_hour = price->second;
    training_planner planner({config, {}}, cluster, perf_model(*spec, options), q);
    answers.push_back(
        plan_training(planner, pinned, !choice.recompute.empty(), choice.zero_stage >= 0));
  }
  const training_comparison compared = compare_training(std::move(answers));
  emit(output, [&](output_format format, std::ostream &out, const write_options &write) {
    write_training(compared, format, out, write);
  });
  return 0;
}

int describe_device(bool measure, bool refresh, const output_choice &output) {
  const measurement_layer &layer = required_layer("device");
  if (layer.device_count() == 0)
    throw error("no GPU found (the CUDA runtime sees none). Analyse against a datasheet spec "
                "instead: roofline-advise NETWORK.yaml --gpu h100 (roofline-advise specs lists "
                "them)");
  const device_report report = layer.describe_local_gpu(measure, refresh, show_progress);
  if (isatty(STDERR_FILENO) && (measure || refresh))
    std::cerr << "\r\033[K" << std::flush;
  emit(output, [&](output_format format, std::ostream &out, const write_options &options) {
    write_device_report(report, format, out, options);
  });
  return 0;
}

int calibrate() {
  const measurement_layer &layer = required_layer("calibrate");
  if (layer.device_count() == 0)
    throw error("calibrate needs a GPU, and the CUDA runtime sees none");
  stop_on_interrupt();
  const auto result = layer.calibrate(show_op_progress, interrupted);
  if (!result.complete) {
    std::cerr << "roofline-advise: calibration interrupted after " << result.measured << " of "
              << result.total << " GEMMs: nothing was fitted, the calibration cache is unchanged\n";
    return exit_interrupted;
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
          << to_yaml(result.fitted);
  write_stdout(summary.str());
  return 0;
}

int list_specs(const output_choice &output) {
  const auto &catalog = spec_catalog::builtin();
  emit(output, [&](output_format format, std::ostream &out, const write_options &options) {
    write_spec_list(catalog.specs(), format, out, options);
  });
  return 0;
}

} // namespace roofline::cli
