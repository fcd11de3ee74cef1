// SPDX-License-Identifier: Apache-2.0
#include "roofline/analysis/pipeline.hpp"

#include "roofline/analysis/advisor.hpp"
#include "roofline/analysis/analysis.hpp"
#include "roofline/analysis/measurement_layer.hpp"
#include "roofline/common/error.hpp"
#include "roofline/model/spec_catalog.hpp"

#include <exception>
#include <string>

namespace roofline {

gpu_choice choose_gpu(const std::string &request, const model_options &options,
                      const measurement_layer_ref &layer) {
  const spec_catalog &catalog = spec_catalog::builtin();
  model_options chosen = options;
  if (request != "auto") {
    if (!chosen.host)
      chosen.host = cached_host_floor();
    return {perf_model(catalog.resolve(request), chosen), "choose_gpu::request " + request, {}};
  }
  std::string why = layer.missing;
  if (layer) {
    if (auto local = layer.layer->find_local_gpu()) {
      if (!chosen.host)
        chosen.host = local->host;
      if (!chosen.all_reduce)
        chosen.all_reduce = local->all_reduce;
      return {perf_model(local->spec, chosen), local->selection, {}};
    }
    why = "no local GPU found";
  }
  if (!chosen.host)
    chosen.host = typical_host_floor();
  return {perf_model(*catalog.find(spec_catalog::default_gpu), chosen), "default: " + why,
          why + "; using the default spec " + std::string(spec_catalog::default_gpu) +
              " (choose one with choose_gpu::request, see `spec_catalog::specs`)"};
}

report run_pipeline(const network &net, const gpu_choice &gpu, const pipeline_options &options) {
  analysis analysed = analyze(net, gpu.model, gpu.selection, options.memory_reserve);
  std::optional<advice> advised;
  if (options.advise)
    advised = advise(analysed, options.min_padding_speedup);
  std::optional<measurements> measured_ops, measured_padding;
  if (options.measure) {
    const measurement_layer &layer = options.layer.required("measuring");
    std::vector<op> ops;
    ops.reserve(analysed.ops.size());
    for (const analysed_op &entry : analysed.ops)
      ops.push_back(entry.op);
    // Timed where the model predicted the operands to be.
    measure_options measuring = *options.measure;
    measuring.cold_l2 = analysed.model.options().operand_cache == cache_state::cold;
    measured_ops = layer.measure(ops, measuring);
    // A stopped run goes no further: its report is written with what it measured.
    if (advised && !advised->padding.empty() && measured_ops->complete) {
      // Each suggestion's two GEMMs, timed the same way; no counters needed.
      std::vector<op> pairs;
      for (const padding_advice &p : advised->padding) {
        pairs.push_back(make_gemm_op(p.layer, p.original, p.prec));
        pairs.push_back(make_gemm_op(p.layer, p.padded, p.prec));
      }
      measure_options timing = measuring;
      timing.counters = false;
      timing.trace_kernels = false;
      timing.rounds = 1;
      timing.every_gpu = false; // GPU 0's padding question, not the sharded step's
      timing.progress = nullptr;
      try {
        measured_padding = layer.measure(pairs, timing);
      } catch (const std::exception &e) {
        // What the ops showed stands: a GPU whose context a faulting kernel left unusable (a
        // sticky CUDA error) cannot start another run, and must not take the report with it.
        measured_ops->notes.push_back(std::string("padding suggestions not measured: ") + e.what());
      }
    }
  }
  return assemble_report(std::move(analysed), std::move(advised), std::move(measured_ops),
                         std::move(measured_padding));
}

} // namespace roofline
