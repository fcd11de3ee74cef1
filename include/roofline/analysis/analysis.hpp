// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/analysis/memory_fit.hpp"
#include "roofline/input/network.hpp"
#include "roofline/model/gpu_spec.hpp"
#include "roofline/model/op.hpp"
#include "roofline/model/perf_model.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace roofline {

/// An op and what the model predicts for it.
struct analysed_op {
  roofline::op op;
  roofline::prediction prediction;
  double total_time_s = 0; ///< prediction.time_s × op.count (eager)
  time_range total_range;  ///< prediction.range × op.count
  double time_share = 0;   ///< of the network's step time, 0..1
  /// Per run: its work's dynamic energy plus the idle draw over its time (power_model.hpp).
  double energy_j = 0;
};

/// Sums over one step of the network (every op × its count).
struct step_totals {
  double time_s = 0;        ///< eagerly issued: Σ predicted time (max of device time, host floor)
  double device_time_s = 0; ///< Σ device time: the step replayed from a CUDA graph
  /// Σ of the ops' intervals, end by end (time_range::operator+=: one class's errors on one GPU
  /// share a fitted bias, so they add up rather than cancel): time_s's and device_time_s's.
  time_range range, device_range;
  double flops = 0;
  double bytes = 0;
  double memory_bound_time_s = 0;
  double memory_bound_share = 0;     ///< of time_s, 0..1
  double launch_bound_time_s = 0;    ///< of ops the host's floor decides
  double launch_bound_share = 0;     ///< of time_s, 0..1
  std::int64_t launch_bound_ops = 0; ///< distinct ops (rows) the host's floor decides
  double gemm_time_s = 0;
  double communication_time_s = 0; ///< in all-reduces between GPUs
  double communication_share = 0;  ///< of time_s, 0..1
  std::int64_t op_count = 0;       ///< distinct ops (rows)
  std::int64_t gemm_count = 0;     ///< GEMM runs per step, counts included
  /// A captured program's: the host time PyTorch eager spends dispatching its aten ops
  /// (host_floor::framework_op_s each); where it passes the ops' own time, the step is that long
  /// (time_s and range raised to it). 0 for a network or a config.
  double dispatch_s = 0;
};

/// One network on one GPU as the model sees it: the ops with their predictions and the step's
/// totals. The first stage's value; advice, measurements and the report are built from it, and
/// read the network and the model from it rather than copies of their pieces.
struct analysis {
  /// The network analysed; an analysis of bare ops (analyze_ops) has only its name.
  roofline::network network;
  /// The model that predicted the ops, with the operand cache the step decided: its spec, options,
  /// parameters (and their origin) and host floor are the ones used. It shares its memo with the
  /// model given to analyze(), so the advice's predictions reuse the analysis's.
  perf_model model{gpu_spec{}};
  std::string device_selection; ///< how the GPU was chosen: "choose_gpu::request v100", "default:
                                ///< no local GPU"
  std::vector<analysed_op> ops;
  step_totals totals;
  /// Weights, KV cache and activations against the GPU's memory (a network's analysis; an
  /// analysis of bare ops has none).
  std::optional<memory_use> memory;
  std::vector<std::string> notes; ///< what the reader must know of the model's choices
  /// What the GPU may draw, and how the step holds under it: its ops' predictions are at the
  /// clock power.regime says (sustained: the clock-bound ones slowed by power.slowdown).
  power_budget budget;
  power_draw power;
};

/// Lowers `net`, predicts every op with `model` and sums the totals; its memory keeps
/// `memory_reserve` bytes back (memory_reserve_bytes: unset, the default share).
analysis analyze(const network &net, const perf_model &model, std::string device_selection,
                 std::optional<double> memory_reserve = std::nullopt);

/// Whether a power limit can slow `o` (predicted `p` at the boost clock): its device time is the
/// GPU's, not the host's (launch-bound) nor the links' (an all-reduce).
bool stretchable(const op &o, const prediction &p);

/// How many of its own steps one batch takes through the served pipeline whose stage `stage` is
/// (network::pipeline_stages, in inference): every stage's repeated blocks once, the ops outside
/// them (the embedding and the LM head, which each stage's network holds: a bound on either) once
/// in all. 1 without a pipeline, and for a training stage (1F1B keeps every stage busy).
double pipeline_passes(const analysis &stage);

/// `p` (`o`'s prediction at the boost clock) as a step held to its power limit runs it: slowed
/// by power.slowdown where the step slows it (its compute-bound ops, or with power.whole_step
/// every stretchable one); as it is otherwise.
prediction held_to(prediction p, const op &o, const power_draw &power);

/// An analysis of ops built elsewhere (the calibration sweep, a benchmark's shapes).
analysis analyze_ops(std::string name, std::vector<op> ops, const perf_model &model,
                     std::string device_selection);

} // namespace roofline
