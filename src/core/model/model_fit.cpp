// SPDX-License-Identifier: Apache-2.0
#include "roofline/model/model_fit.hpp"

#include "json_reader.hpp"
#include "kernel_choice.hpp"
#include "roofline/common/error.hpp"
#include "roofline/common/median.hpp"
#include "roofline/model/attention_model.hpp"
#include "roofline/model/ceilings.hpp"
#include "roofline/model/conv_model.hpp"
#include "roofline/model/gemm_model.hpp"
#include "roofline/model/interconnect.hpp"
#include "roofline/model/memory_op_model.hpp"

#include <nlohmann/json.hpp>
#include <nlopt.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>
#include <memory>
#include <random>
#include <set>
#include <utility>

namespace roofline {

namespace {

/// 2: parameter overrides fitted to device time (1 held eager times' launch floors).
constexpr int calibration_format_version = 2;

double predicted(const timed_gemm &sample, const gpu_spec &gpu,
                 const model_parameters &parameters) {
  return estimate_gemm(sample.shape, sample.prec, gpu.peak_flop_per_s(sample.prec), gpu, parameters,
                       sample.operands, reasons::without)
      .device_time_s;
}

double predicted(const timed_linear &sample, const gpu_spec &gpu,
                 const model_parameters &parameters) {
  return linear_time_s(sample, gpu, parameters);
}

double predicted(const timed_attention &sample, const gpu_spec &gpu,
                 const model_parameters &parameters) {
  return estimate_attention(sample.shape, sample.prec, sample.bytes, gpu, parameters,
                            cache_state::warm, reasons::without)
      .device_time_s;
}

double predicted(const timed_memory_op &sample, const gpu_spec &gpu,
                 const model_parameters &parameters) {
  return memory_op_time_s(sample.kind, sample.bytes, gpu, parameters, sample.rows);
}

double predicted(const timed_conv &sample, const gpu_spec &gpu,
                 const model_parameters &parameters) {
  return estimate_conv(sample.shape, sample.implicit, sample.prec, sample.bytes, gpu, parameters,
                       cache_state::warm, reasons::without)
      .device_time_s;
}

double predicted(const timed_all_reduce &sample, const gpu_spec &gpu,
                 const model_parameters &parameters) {
  return modelled_all_reduce_s(sample.bytes, sample.gpus, *gpu.interconnect, parameters);
}

/// A sample's measured device time.
template <class Sample> double measured(const Sample &sample) {
  return sample.time_s;
}
double measured(const timed_linear &sample) {
  return sample.gemm.time_s;
}

/// Median plus mean of |log(predicted / measured)|: the median for the typical shape, the mean so
/// that the tail is not ignored; logs so that ×2 too slow and ×2 too fast weigh the same.
template <class Sample>
double loss(const std::vector<Sample> &samples, const gpu_spec &gpu,
            const model_parameters &parameters) {
  std::vector<double> errors;
  errors.reserve(samples.size());
  double sum = 0;
  for (const Sample &sample : samples) {
    const double error = std::fabs(std::log(predicted(sample, gpu, parameters) / measured(sample)));
    errors.push_back(error);
    sum += error;
  }
  const double mean = sum / static_cast<double>(errors.size());
  return upper_median(std::move(errors)) + mean;
}

template <class Sample>
std::function<double(const model_parameters &)> samples_loss(const std::vector<Sample> &samples,
                                                             const gpu_spec &gpu) {
  return [&samples, &gpu](const model_parameters &p) { return loss(samples, gpu, p); };
}

template <class Sample>
std::vector<double> errors_of(const std::vector<Sample> &samples, const gpu_spec &gpu,
                              const model_parameters &parameters) {
  std::vector<double> errors;
  for (const Sample &sample : samples)
    errors.push_back(std::fabs(predicted(sample, gpu, parameters) - measured(sample)) /
                     measured(sample));
  std::sort(errors.begin(), errors.end());
  return errors;
}

template <class Sample>
std::vector<double> ratios_of(const std::vector<Sample> &samples, const gpu_spec &gpu,
                              const model_parameters &parameters) {
  std::vector<double> ratios;
  for (const Sample &sample : samples)
    ratios.push_back(measured(sample) / predicted(sample, gpu, parameters));
  std::sort(ratios.begin(), ratios.end());
  return ratios;
}

} // namespace

std::vector<double> relative_errors(const std::vector<timed_gemm> &samples, const gpu_spec &gpu,
                                    const model_parameters &parameters) {
  return errors_of(samples, gpu, parameters);
}

std::vector<double> relative_errors(const std::vector<timed_linear> &samples, const gpu_spec &gpu,
                                    const model_parameters &parameters) {
  return errors_of(samples, gpu, parameters);
}

std::vector<double> relative_errors(const std::vector<timed_attention> &samples,
                                    const gpu_spec &gpu, const model_parameters &parameters) {
  return errors_of(samples, gpu, parameters);
}

std::vector<double> relative_errors(const std::vector<timed_memory_op> &samples,
                                    const gpu_spec &gpu, const model_parameters &parameters) {
  return errors_of(samples, gpu, parameters);
}

std::vector<double> relative_errors(const std::vector<timed_conv> &samples, const gpu_spec &gpu,
                                    const model_parameters &parameters) {
  return errors_of(samples, gpu, parameters);
}

std::vector<double> relative_errors(const std::vector<timed_all_reduce> &samples,
                                    const gpu_spec &gpu, const model_parameters &parameters) {
  if (!gpu.interconnect)
    throw error(gpu.name + " gives no interconnect to model an all-reduce over");
  return errors_of(samples, gpu, parameters);
}

std::vector<double> measured_over_predicted(const std::vector<timed_attention> &samples,
                                            const gpu_spec &gpu,
                                            const model_parameters &parameters) {
  return ratios_of(samples, gpu, parameters);
}

std::vector<double> measured_over_predicted(const std::vector<timed_memory_op> &samples,
                                            const gpu_spec &gpu,
                                            const model_parameters &parameters) {
  return ratios_of(samples, gpu, parameters);
}

std::vector<double> measured_over_predicted(const std::vector<timed_conv> &samples,
                                            const gpu_spec &gpu,
                                            const model_parameters &parameters) {
  return ratios_of(samples, gpu, parameters);
}

namespace {

/// `value` held inside the parameter's bounds (parameter_table): efficiencies stay fractions of a
/// peak, slowdowns slow down; a fit beyond them would only trade against the fixed costs.
double bounded(parameter id, double value) {
  const parameter_info &row = info(id);
  return std::clamp(value, row.min, row.max);
}

/// What a fit minimises: a loss of the parameters over its samples.
using objective = std::function<double(const model_parameters &)>;

/// NLopt's subplex from `p` (a bounded Nelder-Mead on subspaces: no gradient, and tolerant of
/// the loss's jumps where a tile or split-K choice flips), each free parameter in log space
/// between its bounds (a lower bound of 0 taken as 1e-4 of the upper one). Returns the loss.
double descend(model_parameters &p, const std::vector<parameter> &free, const objective &loss) {
  struct context {
    const model_parameters &start;
    const std::vector<parameter> &free;
    const objective &loss;
    model_parameters at(const double *x) const {
      model_parameters trial = start;
      for (std::size_t i = 0; i < free.size(); ++i)
        trial.set(free[i], bounded(free[i], std::exp(x[i])));
      return trial;
    }
  } const problem{p, free, loss};
  const auto evaluate = [](unsigned, const double *x, double *, void *data) {
    const auto &c = *static_cast<const context *>(data);
    return c.loss(c.at(x));
  };
  const unsigned n = static_cast<unsigned>(free.size());
  std::vector<double> x(n), lower(n), upper(n), step(n, 0.2);
  for (unsigned i = 0; i < n; ++i) {
    const parameter_info &row = info(free[i]);
    lower[i] = std::log(std::max(row.min, row.max * 1e-4));
    upper[i] = std::log(row.max);
    x[i] = std::clamp(std::log(std::max(p[free[i]], row.max * 1e-4)), lower[i], upper[i]);
  }
  const std::unique_ptr<nlopt_opt_s, void (*)(nlopt_opt)> opt(nlopt_create(NLOPT_LN_SBPLX, n),
                                                              nlopt_destroy);
  const auto check = [](nlopt_result status, const char *what) {
    // Round-off ending the search early still leaves its best point: keep it.
    if (status < 0 && status != NLOPT_ROUNDOFF_LIMITED)
      throw error(std::string("NLopt: ") + what + " failed (" + nlopt_result_to_string(status) +
                  ")");
  };
  if (!opt)
    throw error("NLopt: cannot create the optimizer");
  check(nlopt_set_lower_bounds(opt.get(), lower.data()), "set_lower_bounds");
  check(nlopt_set_upper_bounds(opt.get(), upper.data()), "set_upper_bounds");
  check(nlopt_set_min_objective(opt.get(), evaluate, const_cast<context *>(&problem)),
        "set_min_objective");
  check(nlopt_set_initial_step(opt.get(), step.data()), "set_initial_step");
  check(nlopt_set_xtol_rel(opt.get(), 1e-3), "set_xtol_rel");
  check(nlopt_set_maxeval(opt.get(), 3000), "set_maxeval");
  double minimum = 0;
  check(nlopt_optimize(opt.get(), x.data(), &minimum), "optimize");
  p = problem.at(x.data());
  return minimum;
}

/// The split-K rule's thresholds that classify the samples' launch counts best: a reduction launch
/// (two kernels or more) where the rule says so, for the samples the model gives a kernel without
/// TMA. Grid search; of equally good thresholds per precision the middle one (as far from the
/// samples on either side as the grid allows), or 0 (never) where 0 is among them: no sample
/// asked for a reduction; of deep rules the first.
void fit_split_rule(model_parameters &p, const std::vector<timed_gemm> &samples,
                    const gpu_spec &gpu) {
  struct observed {
    const timed_gemm *sample;
    bool reduced;
  };
  std::vector<observed> ruled; // samples whose kernel the rule applies to
  for (const timed_gemm &sample : samples) {
    if (sample.launches == 0)
      continue;
    const kernel_family family =
        estimate_gemm(sample.shape, sample.prec, gpu.peak_flop_per_s(sample.prec), gpu, p,
                      sample.operands)
            .family;
    if (family == kernel_family::fallback || family == kernel_family::simt)
      ruled.push_back({&sample, sample.launches > 1});
  }
  if (ruled.empty())
    return;
  constexpr double below_waves[] = {0,    0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1,
                                    0.15, 0.2,   0.25, 0.3,  0.4,  0.5,  0.75,  1};
  constexpr double deep_below_waves[] = {0.25, 0.5, 0.75, 1, 1.25, 1.5, 2, 3, 4};
  constexpr double deep_min_k[] = {64, 128, 256, 384, 512, 768, 1024, 2048, 4096};
  std::set<precision> precisions;
  for (const observed &o : ruled)
    precisions.insert(o.sample->prec);
  const auto agreeing = [&](const model_parameters &trial, precision prec) {
    int right = 0;
    for (const observed &o : ruled)
      if (o.sample->prec == prec && reduces_split_k(o.sample->shape, prec, gpu, trial) == o.reduced)
        ++right;
    return right;
  };
  // One threshold of one precision, the others held: the samples it decides are its own.
  const auto fit_threshold = [&](model_parameters &trial, precision prec, parameter group) {
    const parameter threshold = parameter_at(group, prec);
    int most = -1;
    std::vector<double> best;
    for (double waves : below_waves) {
      trial.set(threshold, waves);
      const int right = agreeing(trial, prec);
      if (right > most)
        best.clear();
      if (right >= most) {
        most = right;
        best.push_back(waves);
      }
    }
    trial.set(threshold, best.front() == 0 ? 0 : best[best.size() / 2]);
    return most;
  };
  int best_right = -1;
  model_parameters best = p;
  for (double deep_waves : deep_below_waves)
    for (double min_k : deep_min_k) {
      model_parameters trial = p;
      trial.set(parameter::deep_split_k_below_waves, deep_waves);
      trial.set(parameter::deep_split_k_min_k, min_k);
      int right = 0;
      for (precision prec : precisions) {
        fit_threshold(trial, prec, parameter::split_k_below_waves);
        right += fit_threshold(trial, prec, parameter::narrow_split_k_below_waves);
      }
      if (right > best_right) {
        best_right = right;
        best = trial;
      }
    }
  p = best;
}

} // namespace

namespace {

/// `start` with `free` fitted to `samples`: a descent, restarts from perturbed optima, and what
/// the samples barely decide returned to where it started.
model_parameters fit_free(const objective &loss, const model_parameters &start,
                          model_parameters best, const std::vector<parameter> &free) {
  double best_loss = descend(best, free, loss);
  // The loss is piecewise (tile and split-K choices jump): restart from perturbed optima so that
  // one shallow valley does not decide (on the H200's sweep 8 restarts still ended in valleys
  // that differ by seed; 24 rarely do). Seeded: calibration is reproducible.
  // Gaussian jitter (σ 0.3 in log space) by Box-Muller from the engine's raw bits, which the
  // standard fixes, not from std::normal_distribution, whose output differs between libraries.
  constexpr double pi = 3.14159265358979323846;
  std::mt19937_64 random(20261122);
  const auto uniform = [&] { return (static_cast<double>(random() >> 11) + 0.5) * 0x1.0p-53; };
  const auto jitter = [&] {
    return 0.3 * std::sqrt(-2.0 * std::log(uniform())) * std::cos(2.0 * pi * uniform());
  };
  for (int restart = 0; restart < 24; ++restart) {
    model_parameters trial = best;
    for (parameter id : free)
      trial.set(id, bounded(id, best[id] * std::exp(jitter())));
    if (const double l = descend(trial, free, loss); l < best_loss) {
      best_loss = l;
      best = trial;
    }
  }
  // A parameter the samples barely decide (no calibration shape exercises it) would keep wherever
  // the restarts left it: it returns to where it started.
  for (parameter id : free) {
    model_parameters trial = best;
    trial.set(id, start[id]);
    if (const double l = loss(trial); l <= best_loss + 1e-4) {
      best_loss = std::min(best_loss, l);
      best = trial;
    }
  }
  return best;
}

/// `id` set to the one of `candidates` with the least loss (the first of equals), the rest held.
/// Returns whether it moved.
bool choose(model_parameters &p, parameter id, std::initializer_list<double> candidates,
            const objective &loss) {
  const double was = p[id];
  double best = was, least = loss(p);
  for (const double candidate : candidates) {
    model_parameters trial = p;
    trial.set(id, candidate);
    if (const double l = loss(trial); l < least) {
      least = l;
      best = candidate;
    }
  }
  p.set(id, best);
  return best != was;
}

constexpr parameter cold_operand_parameters[] = {parameter::cold_dram_efficiency,
                                                 parameter::cold_dram_latency_s};

bool is_cold_operand_parameter(parameter id) {
  return std::find(std::begin(cold_operand_parameters), std::end(cold_operand_parameters), id) !=
         std::end(cold_operand_parameters);
}

} // namespace

model_parameters fit_model(const std::vector<timed_gemm> &samples, const gpu_spec &gpu,
                           model_parameters start) {
  if (samples.empty())
    return start;
  // Only parameters some sample depends on are fitted: those of the precisions and row
  // alignments the samples have, and the cold-operand ones where some sample was cold.
  std::set<precision> precisions;
  std::set<parameter> alignments;
  bool cold = false;
  for (const timed_gemm &sample : samples) {
    precisions.insert(sample.prec);
    if (const int alignment = row_alignment_bytes(sample.shape, sample.prec); alignment < 16)
      alignments.insert(misalignment_slowdown_at(alignment));
    cold = cold || sample.operands == cache_state::cold;
  }
  const auto decided = [&](parameter id) {
    for (parameter group : {parameter::efficiency, parameter::wave_overhead_s})
      for (precision p : all_precisions)
        if (id == parameter_at(group, p))
          return precisions.count(p) > 0;
    for (int alignment : misaligned_row_bytes)
      if (id == misalignment_slowdown_at(alignment))
        return alignments.count(id) > 0;
    return cold || !is_cold_operand_parameter(id);
  };
  // cuBLAS's split-K rule: from what it launched, not from time.
  model_parameters best = start;
  fit_split_rule(best, samples, gpu);
  std::vector<parameter> free;
  for (const parameter_info &row : parameter_table())
    if (row.fit == parameter_fit::time && decided(row.id))
      free.push_back(row.id);
  return fit_free(samples_loss(samples, gpu), start, best, free);
}

double linear_time_s(const timed_linear &sample, const gpu_spec &gpu,
                     const model_parameters &parameters) {
  const timed_gemm &g = sample.gemm;
  const double gemm = estimate_gemm(g.shape, g.prec, gpu.peak_flop_per_s(g.prec), gpu, parameters,
                                    g.operands, reasons::without)
                          .device_time_s;
  return sample.quantize_bytes > 0 ? gemm + memory_op_time_s(memory_op_kind::quantize,
                                                             sample.quantize_bytes, gpu, parameters)
                                   : gemm;
}

model_parameters fit_linear(const std::vector<timed_linear> &samples, const gpu_spec &gpu,
                            model_parameters start, const std::vector<parameter> &free) {
  if (samples.empty() || free.empty())
    return start;
  return fit_free(samples_loss(samples, gpu), start, start, free);
}

model_parameters fit_cold_operands(const std::vector<timed_gemm> &samples, const gpu_spec &gpu,
                                   model_parameters start) {
  if (samples.empty())
    return start;
  return fit_free(samples_loss(samples, gpu), start, start,
                  {std::begin(cold_operand_parameters), std::end(cold_operand_parameters)});
}

model_parameters fit_attention(const std::vector<timed_attention> &samples, const gpu_spec &gpu,
                               model_parameters start) {
  // Two stages: the forward kernels' parameters on the forward calls, then the backward's own on
  // the backward calls, the forward's kept (its tiling and efficiency are the backward's base).
  // Only what some sample depends on moves: the efficiencies of the head dims present and of
  // their neighbours (interpolation), the decode ones with a decode call.
  std::vector<timed_attention> forward, backward;
  for (const timed_attention &sample : samples)
    (sample.shape.backward ? backward : forward).push_back(sample);
  const auto head_dims_of = [](const std::vector<timed_attention> &set, parameter group) {
    std::set<parameter> decided;
    for (const timed_attention &sample : set)
      for (std::size_t i = 0; i < attention_head_dims.size(); ++i) {
        const bool above = i == 0 || sample.shape.head_dim > attention_head_dims[i - 1];
        const bool below = i + 1 == attention_head_dims.size() ||
                           sample.shape.head_dim < attention_head_dims[i + 1];
        if (above && below)
          decided.insert(attention_efficiency_at(attention_head_dims[i], group));
      }
    return decided;
  };
  const bool decode = std::any_of(forward.begin(), forward.end(), [](const timed_attention &x) {
    return x.shape.q_len < attention_decode_below_q_len;
  });
  const bool prefill = std::any_of(forward.begin(), forward.end(), [](const timed_attention &x) {
    return x.shape.q_len >= attention_decode_below_q_len;
  });
  model_parameters best = start;
  if (!forward.empty()) {
    std::vector<parameter> free;
    for (const parameter id : head_dims_of(forward, parameter::attention_efficiency))
      free.push_back(id);
    if (prefill)
      free.insert(free.end(),
                  {parameter::attention_kernel_overhead_s, parameter::attention_dram_efficiency,
                   parameter::attention_tile_overhead_s, parameter::attention_wave_quantization,
                   parameter::attention_causal_imbalance, parameter::attention_masked_block_cost,
                   parameter::attention_stream_overlap});
    if (decode) {
      std::vector<timed_attention> decodes;
      std::copy_if(
          forward.begin(), forward.end(), std::back_inserter(decodes),
          [](const timed_attention &x) { return x.shape.q_len < attention_decode_below_q_len; });
      for (const parameter id : head_dims_of(decodes, parameter::attention_decode_dram_efficiency))
        free.push_back(id);
      free.insert(free.end(),
                  {parameter::attention_decode_chunk, parameter::attention_decode_overhead_s,
                   parameter::attention_decode_floor_s, parameter::attention_decode_wave_overhead_s,
                   parameter::attention_decode_group_wave_overhead_s,
                   parameter::attention_l2_speedup});
    }
    const objective forward_loss = samples_loss(forward, gpu);
    best = fit_free(forward_loss, start, best, free);
    // The largest GQA group the decode kernel serves: a threshold the loss jumps at, which the
    // descent cannot follow. Chosen on the fitted values, then the rest fitted again with it.
    if (decode && choose(best, parameter::attention_decode_max_group,
                         {1024, 128, 96, 64, 48, 32, 24, 16, 8}, forward_loss))
      best = fit_free(forward_loss, start, best, free);
  }
  if (!backward.empty()) {
    std::vector<parameter> free;
    for (const parameter id : head_dims_of(backward, parameter::attention_backward_efficiency))
      free.push_back(id);
    free.insert(free.end(), {parameter::attention_backward_dram_efficiency,
                             parameter::attention_backward_tile_overhead_s});
    best = fit_free(samples_loss(backward, gpu), start, best, free);
  }
  return best;
}

model_parameters fit_memory_ops(const std::vector<timed_memory_op> &samples, const gpu_spec &gpu,
                                model_parameters start) {
  // The kinds share no parameter: each is fitted on its own samples, two parameters at a time.
  model_parameters best = start;
  for (const std::string_view name : memory_op_names()) {
    const memory_op_kind kind = *parse_memory_op_kind(name);
    std::vector<timed_memory_op> own;
    std::copy_if(samples.begin(), samples.end(), std::back_inserter(own),
                 [&](const timed_memory_op &x) { return x.kind == kind; });
    if (own.empty())
      continue;
    std::vector<parameter> free{memory_parameter_at(parameter::memory_floor_s, kind),
                                memory_parameter_at(parameter::memory_efficiency, kind)};
    // The row terms where the samples say how many rows they had (row-wise kinds).
    if (std::any_of(own.begin(), own.end(), [](const timed_memory_op &x) { return x.rows > 0; })) {
      const parameter per_row = memory_parameter_at(parameter::memory_row_s, kind);
      const parameter row_rate = memory_parameter_at(parameter::memory_row_bytes_per_s, kind);
      free.insert(free.end(), {per_row, row_rate});
      // From "no row cost" (0), a search would not see that a row term helps: start inside.
      if (!(best[per_row] > 0))
        best.set(per_row, 1e-9);
      if (!(best[row_rate] > 0))
        best.set(row_rate, 5e9);
    }
    best = fit_free(samples_loss(own, gpu), start, best, free);
  }
  return best;
}

model_parameters fit_conv(const std::vector<timed_conv> &samples, const gpu_spec &gpu,
                          model_parameters start) {
  // The forward variants share no parameter: each on its own samples. The gradients' slowdowns
  // scale their variant's rate, so they come after it.
  const auto of = [&](auto keep) {
    std::vector<timed_conv> own;
    std::copy_if(samples.begin(), samples.end(), std::back_inserter(own), keep);
    return own;
  };
  model_parameters best = start;
  const std::vector<timed_conv> implicit = of([](const timed_conv &x) {
    return x.shape.pass == pass::forward && variant_of(x.shape) != conv_variant::grouped;
  });
  if (!implicit.empty()) {
    // The variants share the per-call overhead: fitted together, each slowdown only where a
    // sample of its variant decides it.
    std::vector<parameter> free{parameter::conv_overhead_s};
    for (int v = 0; v < conv_gemm_variant_count; ++v)
      if (std::any_of(implicit.begin(), implicit.end(), [&](const timed_conv &x) {
            return variant_of(x.shape) == static_cast<conv_variant>(v);
          }))
        free.push_back(conv_slowdown_at(static_cast<conv_variant>(v)));
    if (std::any_of(implicit.begin(), implicit.end(), [](const timed_conv &x) {
          return variant_of(x.shape) == conv_variant::small_channel && x.prec == precision::bf16;
        }))
      free.push_back(parameter::conv_small_channel_bf16_slowdown);
    best = fit_free(samples_loss(implicit, gpu), start, best, free);
  }
  const std::vector<timed_conv> grouped = of([](const timed_conv &x) {
    return x.shape.pass == pass::forward && variant_of(x.shape) == conv_variant::grouped;
  });
  if (!grouped.empty())
    best = fit_free(samples_loss(grouped, gpu), start, best,
                    {parameter::conv_grouped_floor_s, parameter::conv_grouped_efficiency,
                     parameter::conv_grouped_dram_efficiency});
  for (const auto &[p, slowdown] :
       {std::pair{pass::data_grad, parameter::conv_data_grad_slowdown},
        std::pair{pass::weight_grad, parameter::conv_weight_grad_slowdown}}) {
    // Each variant's gradient kernels are cuDNN's own (a strided dgrad scatters, a C = 3 wgrad
    // has no padded loads to slow it): each slowdown on its own variant's samples.
    for (int v = 0; v < conv_gemm_variant_count; ++v) {
      const std::vector<timed_conv> own = of([&, p = p](const timed_conv &x) {
        return x.shape.pass == p && variant_of(x.shape) == static_cast<conv_variant>(v);
      });
      if (!own.empty())
        best = fit_free(samples_loss(own, gpu), start, best,
                        {conv_slowdown_at(static_cast<conv_variant>(v), slowdown)});
    }
  }
  return best;
}

model_parameters fit_all_reduce(const std::vector<timed_all_reduce> &samples, const gpu_spec &gpu,
                                model_parameters start) {
  if (!gpu.interconnect)
    throw error(gpu.name + " gives no interconnect to fit an all-reduce over");
  if (samples.empty())
    return start;
  // A count's own values move where some sample lies between its neighbours (interpolation).
  std::vector<parameter> free;
  for (std::size_t i = 0; i < all_reduce_gpu_counts.size(); ++i)
    if (std::any_of(samples.begin(), samples.end(), [&](const timed_all_reduce &x) {
          return (i == 0 || x.gpus > all_reduce_gpu_counts[i - 1]) &&
                 (i + 1 == all_reduce_gpu_counts.size() || x.gpus < all_reduce_gpu_counts[i + 1]);
        }))
      for (const parameter group :
           {parameter::all_reduce_latency_s, parameter::all_reduce_link_efficiency})
        free.push_back(all_reduce_parameter_at(group, all_reduce_gpu_counts[i]));
  // The one-shot kernel's threshold, where the loss jumps: the rest fitted for each size of a
  // grid (0: never, then 64 KiB to 64 MiB), the best kept. A few dozen samples: cheap.
  const objective loss = samples_loss(samples, gpu);
  model_parameters best = start;
  double least = 0;
  for (const double below : {0.0, 65536.0, 262144.0, 1048576.0, 2097152.0, 4194304.0, 8388608.0,
                             16777216.0, 33554432.0, 67108864.0}) {
    model_parameters trial = start;
    trial.set(parameter::all_reduce_oneshot_below_bytes, below);
    trial = fit_free(loss, start, trial, free);
    if (const double l = loss(trial); below == 0 || l < least) {
      least = l;
      best = trial;
    }
  }
  return best;
}

namespace {

std::string calibration_cache_name(const std::string &uuid) {
  return "model-" + uuid + ".json";
}

} // namespace

std::optional<std::filesystem::path> calibration_cache_file(const std::string &uuid) {
  return cache_file(calibration_cache_name(uuid));
}

std::filesystem::path save_calibration(const std::string &uuid,
                                       const parameter_overrides &calibration) {
  nlohmann::json values = nlohmann::json::object();
  for (const auto &[id, value] : calibration.values)
    values[info(id).name] = value;
  const nlohmann::json doc{{"format_version", calibration_format_version},
                           {"uuid", uuid},
                           {"origin", calibration.origin},
                           {"parameters", values}};
  return write_cache_file(calibration_cache_name(uuid), doc.dump(2) + "\n");
}

parameter_overrides parse_calibration(const std::string &json_text, const std::string &origin) {
  const auto damaged = [&](const std::string &why) {
    return input_error({origin}, "damaged model calibration (re-run calibrate): " + why);
  };
  try {
    const nlohmann::json doc = detail::parse_json_once_per_key(
        json_text, [&](const std::string &why) -> void { throw damaged(why); });
    if (doc.at("format_version").get<int>() != calibration_format_version)
      throw damaged("written by an older version, which fitted eager times");
    parameter_overrides calibration;
    calibration.origin = doc.at("origin").get<std::string>();
    for (const auto &[name, value] : doc.at("parameters").items()) {
      const std::optional<parameter> id = find_parameter(name);
      if (!id)
        throw damaged("unknown model parameter `" + name + "`");
      if (const auto why = out_of_bounds(*id, value.get<double>()))
        throw damaged(*why);
      calibration.values.emplace_back(*id, value.get<double>());
    }
    return calibration;
  } catch (const nlohmann::json::exception &e) {
    throw damaged(e.what());
  }
}

std::optional<parameter_overrides> load_calibration(const std::string &uuid) {
  return load_cache_file(calibration_cache_name(uuid), parse_calibration);
}

} // namespace roofline
