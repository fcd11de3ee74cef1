// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/model/accuracy.hpp"
#include "roofline/model/collectives.hpp"
#include "roofline/model/gemm_model.hpp"
#include "roofline/model/gpu_spec.hpp"
#include "roofline/model/host_floor.hpp"
#include "roofline/model/interconnect.hpp"
#include "roofline/model/model_parameters.hpp"
#include "roofline/model/op.hpp"
#include "roofline/model/power_model.hpp"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace roofline {

/// Which resource limits an op: DRAM bandwidth or arithmetic.
/// What holds an op back: DRAM bandwidth, the peak rate, or (an all-reduce) the links between
/// GPUs.
enum class bound { memory, compute, communication };

std::string_view to_string(bound b);

/// Choices that change which roof an op is held against and how time is predicted.
struct model_options {
  /// Hold GEMMs against 2:4-sparse peaks where the GPU has them: the roofline placement only;
  /// predicted times stay dense (model_notes says so).
  bool sparse = false;
  bool roofline_only = false; ///< predict the plain roofline bound instead of the GEMM model
  /// The GEMM model's parameters; unset: the GPU's own (gpu_spec::parameters).
  std::optional<model_parameters> parameters;
  /// The host's cost of issuing calls; unset: typical_host_floor().
  std::optional<roofline::host_floor> host;
  /// NCCL's all-reduce measured on this host; unset: the spec's links (modelled_all_reduce_s).
  std::optional<all_reduce_table> all_reduce;
  /// The network between nodes (a cluster's): collectives over GPUs of several nodes cross it.
  /// Unset: a collective stays inside one host (interconnect_spec::max_gpus).
  std::optional<node_network> network;
  /// Where GEMM operands are when each call starts. Unset: analyze() decides for the step it
  /// analyses (step_operand_cache); a model used outside an analysis takes them warm.
  std::optional<cache_state> operand_cache;
  /// The clock a step is predicted at: what its power limit lets the GPU hold (analyze() slows
  /// its clock-bound ops), or the boost clock of a burst from idle. predict() alone is the
  /// boost clock's.
  clock_regime clock = clock_regime::sustained;
};

/// Where a step's GEMM operands are when each runs: cold when the rest of the step (its ops'
/// bytes, repeats included, beyond any one op's own) moves more than the GPU's L2 holds, so that
/// a layer's weights have been evicted since their last use; else warm. One GEMM alone, called
/// back to back, is warm.
cache_state step_operand_cache(const std::vector<op> &ops, const gpu_spec &gpu);

/// What the model says of one op on one GPU.
struct prediction {
  /// Per run, eagerly issued: max(device_time_s, host_floor_s), what back-to-back calls take.
  double time_s = 0;
  /// Per run on the GPU, with no host gap (graph replay): what the model predicts.
  double device_time_s = 0;
  double host_floor_s = 0;   ///< the host's cost of issuing the run (0 with roofline_only)
  bool launch_bound = false; ///< host_floor_s > device_time_s: the host, not the GPU, decides
  /// device_time_s × its class's accuracy band (gpu_spec::accuracy): where the GPU's time is
  /// expected eight times in ten. A point where nothing was modelled: roofline_only, an
  /// all-reduce measured on this host.
  time_range device_range;
  /// time_s's interval: each end max(device_range's, host_floor_s). The host floor is measured
  /// or typical, not the model's, so it is not widened: a launch-bound op's interval narrows
  /// to the floor.
  time_range range;

  double roofline_time_s = 0; ///< per run: max(FLOPs / peak, bytes / bandwidth), a lower bound
  /// The bandwidth roofline_time_s holds the bytes against: DRAM's, or L2's for a memory-bound
  /// op whose tensors a step leaves in L2 (the whole step moves less than L2 holds, and the op's
  /// fitted time beats DRAM's bound).
  bool l2_roof = false;
  double peak_flop_per_s = 0; ///< the roof of the unit that runs the op
  bool sparse_peak = false;   ///< that roof is a 2:4-sparse figure
  double ridge_intensity = 0; ///< peak / DRAM bandwidth (FLOP/byte)
  double attainable_flop_per_s = 0; ///< min(peak, intensity × bandwidth)
  double flop_per_s = 0;            ///< the rate at the predicted time: FLOPs / time_s
  roofline::bound bound = bound::compute;
  std::vector<std::string> factors;  ///< why: one short phrase per effect that shaped time_s
  std::optional<gemm_estimate> gemm; ///< the GEMM model's view (GEMMs, unless roofline_only)
};

/// The estimate that predicts `o`, whose accuracy band its interval takes.
op_class class_of(const op &o);

/// The performance model of one GPU on one host. The roofline places each op (intensity against
/// the ridge: memory- or compute-bound); the device time it predicts is the GEMM model's
/// (estimate_gemm) for GEMMs and the roofline with achievable bandwidth plus a kernel's fixed cost
/// for memory-bound ops; the eager time adds the host's floor (host_floor).
/// GEMMs are held against the precision's unit (tensor cores for fp16/bf16/tf32/fp8/int8);
/// memory-bound ops run on the CUDA cores, so against the fp32 (SIMT) peak.
/// A model remembers what it predicted (networks repeat their shapes): predict() and estimate()
/// compute each distinct op once. The memo is safe to use from several threads at once, and
/// copies of a model share it (a model never changes after construction), as do the models
/// with_operand_cache() derives (the memo's keys hold where the operands are).
class perf_model {
public:
  explicit perf_model(gpu_spec spec, model_options options = {});

  const gpu_spec &spec() const noexcept { return m_spec; }
  const model_options &options() const noexcept { return m_options; }
  /// The GEMM model's parameters in use.
  const model_parameters &parameters() const noexcept { return m_parameters; }
  const roofline::host_floor &host() const noexcept { return m_host; }
  /// Where GEMM operands are when each call starts: the options' choice, else warm.
  cache_state operand_cache() const noexcept {
    return m_options.operand_cache.value_or(cache_state::warm);
  }
  /// This model with the operands placed `operands`, sharing this model's memo.
  perf_model with_operand_cache(cache_state operands) const;

  /// Throws input_error when the GPU has no rate for the op's precision. The prediction depends
  /// only on the op's GEMM shape, precision, FLOPs and bytes, not on its name or count. With
  /// reasons::without, `factors` (the prediction's and its GEMM estimate's) stay empty.
  prediction predict(const op &o, reasons why = reasons::with) const;

  /// The GEMM model's view of one GEMM (device time): what predict() uses for GEMMs.
  gemm_estimate estimate(const gemm_shape &shape, precision p, reasons why = reasons::with) const;
  /// The same, computed each time and not remembered: for searches over shapes that seldom
  /// repeat (the memo would only grow), which may then run on several threads without its lock.
  gemm_estimate estimate_once(const gemm_shape &shape, precision p,
                              reasons why = reasons::with) const;

private:
  prediction compute(const op &o, reasons why) const;
  /// compute()'s prediction with its intervals (device_range, range).
  prediction with_interval(prediction p, const op &o) const;
  prediction collective(const op &o, reasons why) const;
  /// A collective's GPUs, and how many share a node (what the GPU's links and host join).
  rank_group group_of(const op &o) const;
  /// An all-reduce inside one node that NCCL measured on this host: its time; else none.
  std::optional<double> measured_collective_s(const op &o) const;
  /// A memory-bound op as its kernel runs, into compute()'s `result` (its roofline placed): its
  /// device time, host floor and, where the step leaves its tensors in L2, the L2 roof.
  void place_memory_op(const op &o, reasons why, prediction &result) const;

  gpu_spec m_spec;
  gpu_spec m_basis; ///< model_basis(m_spec): the numbers the GEMM model's parameters go with
  model_options m_options;
  model_parameters m_parameters;
  roofline::host_floor m_host;
  struct memo;
  std::shared_ptr<memo> m_memo; ///< what predict() and estimate() computed, shared by copies
};

/// Where `model` puts the GEMM operands of the step `ops`: its options' choice where they make
/// one, else the step's (step_operand_cache). What analyze() predicts, and what measuring the
/// step must time.
cache_state operand_cache_for(const perf_model &model, const std::vector<op> &ops);

/// What a reader of `model`'s predictions of `ops` must know of its options, one sentence each;
/// empty without model_options::sparse. With it: that the 2:4-sparse peaks place the GEMMs on the
/// roofline only (ridge, bound, roofline time) while bytes and predicted times stay dense (the
/// GEMM model has no sparse timings to be fitted on), and that --sparse changes nothing for GEMMs
/// whose precision has no 2:4-sparse peak on this GPU (a V100: none), or when there is no GEMM.
std::vector<std::string> model_notes(const perf_model &model, const std::vector<op> &ops);

} // namespace roofline
