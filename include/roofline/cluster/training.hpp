// SPDX-License-Identifier: Apache-2.0
#pragma once
// A training run on a cluster: a model config's step spread over tensor (TP), pipeline (PP),
// data (DP, with a ZeRO stage), context (CP) and expert (EP) parallelism, priced from one GPU's
// analysis of a micro-batch and the cluster's collectives; and the search for the fastest layout
// that fits (docs/network-format.md, "Training on a cluster").

#include "roofline/analysis/analysis.hpp"
#include "roofline/cluster/cluster_spec.hpp"
#include "roofline/input/model_config.hpp"
#include "roofline/model/collectives.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace roofline {

/// How a step is spread over GPUs, Megatron-LM's way: TP innermost (inside a node), then CP, then
/// DP (EP carved from DP × CP), PP outermost. `gpus()` of them in all.
struct parallel_layout {
  int tp = 1, pp = 1, dp = 1, cp = 1, ep = 1;
  int micro_batch = 1;    ///< sequences per micro-batch
  int virtual_stages = 1; ///< interleaved 1F1B: model chunks per GPU (1: plain 1F1B)
  /// 0: plain data parallelism (every GPU all state); 1: optimizer state sharded over DP × CP
  /// (Megatron's distributed optimizer, ZeRO-1); 2: gradients too; 3: weights too (FSDP).
  int zero_stage = 1;
  recomputation recompute = recomputation::none;

  std::int64_t gpus() const { return std::int64_t{tp} * pp * dp * cp; }
};

/// "TP 8 · PP 16 · DP 64 · CP 2 · mb 1 · v 1 · ZeRO-1 · recompute full"
std::string describe(const parallel_layout &l);

/// What a training question asks: steps of `global_batch` sequences of `seq_len` tokens until
/// `tokens` (0: no run length asked), on `gpus` of the cluster (0: all of them).
struct training_question {
  std::int64_t global_batch = 0;
  std::int64_t seq_len = 0;
  double tokens = 0;
  std::int64_t gpus = 0;
  /// A MoE layer's busiest GPU receives this many times the mean of its tokens (routing's
  /// imbalance): its expert GEMMs and all-to-alls take as much longer.
  double expert_imbalance = 1.0;
  std::optional<double> price_per_gpu_hour; ///< USD; none: the cluster's, else the GPU spec's
};

/// One layout's step, per GPU where not said otherwise.
struct training_estimate {
  parallel_layout layout;
  std::int64_t micro_batches = 0; ///< per pipeline, per step
  double step_s = 0;
  /// The step's parts (their sum is step_s): the pipeline's micro-batches on its slowest stage
  /// (TP all-reduces inside), its bubble, the sends between stages, the context and expert
  /// exchanges not hidden behind compute, the data-parallel gradient and weight traffic not
  /// hidden behind the backward pass, and the optimizer.
  double compute_s = 0, bubble_s = 0, pipeline_send_s = 0, context_exchange_s = 0,
         expert_exchange_s = 0, data_parallel_s = 0, optimizer_s = 0;
  double tokens_per_s = 0;
  double model_tflop_per_s_per_gpu = 0; ///< model FLOPs (no recomputation) over step time
  double mfu = 0;                       ///< of the GPU's dense peak at its precision
  /// Memory per GPU (the first stage, whose activations are the most).
  double weights_bytes = 0, gradient_bytes = 0, optimizer_bytes = 0, activation_bytes = 0;
  double total_bytes = 0, usable_bytes = 0;
  bool fits = false;
  double joules_per_step = 0; ///< all GPUs
  double days = 0, energy_mwh = 0;
  std::optional<double> usd; ///< the run, where tokens and a price are known
};

/// A layout that cannot be run, and why (in words), or none where it can.
std::optional<std::string> layout_refusal(const parallel_layout &l, const training_question &q,
                                          const network &model, const cluster_spec &cluster);

/// Prices layouts of one model on one cluster, memoising the per-GPU analyses they share (one
/// per TP degree, micro-batch, context split and recomputation).
class training_planner {
public:
  /// `source`: the config (trained in its dtype); `model`: the cluster GPU's model (sustained or
  /// burst as its options say). Throws input_error for a question of no batch or sequence, an
  /// imbalance outside [1, 100], a GPU without links, or a model with no repeated block.
  training_planner(config_source source, cluster_spec cluster, perf_model model,
                   training_question question);

  /// `layout`'s step (input_error where layout_refusal refuses it).
  training_estimate estimate(const parallel_layout &layout);

  /// Every layout of the cluster's GPUs that the pinned dimensions allow (a pinned value: one
  /// not 0 in `pinned`; its other fields searched: TP 1–8 within a node, PP dividing the layers,
  /// CP up to 16, EP dividing the experts, micro-batches of 1, 2, 4, 1–4 virtual stages, ZeRO 1
  /// and 3, recomputation none and full), those that fit first, each group fastest first.
  std::vector<training_estimate> search(const parallel_layout &pinned, bool pin_recompute = false,
                                        bool pin_zero = false);

  const cluster_spec &cluster() const noexcept { return m_cluster; }
  const training_question &question() const noexcept { return m_question; }
  const network &model_network() const noexcept { return m_network; }
  const std::string &config_origin() const noexcept { return m_source.config.origin(); }
  const perf_model &model() const noexcept { return m_model; }
  std::int64_t layers() const noexcept { return m_layers; }
  /// Model FLOPs of one sequence, forward and backward, no recomputation.
  double flops_per_sequence() const noexcept { return m_flops_per_sequence; }

private:
  struct stage_costs;
  const stage_costs &costs(int tp, int micro_batch, int cp, recomputation recompute);
  /// The data-parallel traffic of `l`'s step not hidden behind its compute.
  double data_parallel_time(const parallel_layout &l, const stage_costs &c, const memory_use &state,
                            double compute_s, double micro_batches) const;

  config_source m_source;
  cluster_spec m_cluster;
  perf_model m_model;
  training_question m_question;
  cluster_links m_links;
  network m_network; ///< at TP 1, one sequence: the model's shape
  std::int64_t m_layers = 0;
  double m_flops_per_sequence = 0;
  /// costs(), by TP degree, micro-batch, context split and recomputation.
  std::map<std::tuple<int, int, int, recomputation>, std::shared_ptr<stage_costs>> m_costs;
};

/// A training question answered: the layouts ranked (those that fit first, fastest first), and
/// the verdict in words.
struct training_answer {
  std::string network_name;
  cluster_spec cluster;
  std::string gpu;       ///< the cluster GPU's display name
  std::int64_t gpus = 0; ///< asked, or the cluster's
  training_question question;
  std::int64_t layers = 0;
  double flops_per_sequence = 0;
  std::vector<training_estimate> ranked;
  std::int64_t searched = 0; ///< layouts priced
  std::string verdict;
  std::vector<std::string> notes;
};

/// Plans `question` on `planner`'s cluster: every layout `pinned` allows (training_planner::
/// search), ranked, with the verdict. Throws input_error where no layout is possible at all.
training_answer plan_training(training_planner &planner, const parallel_layout &pinned,
                              bool pin_recompute, bool pin_zero);

/// The same training question on several clusters: each one's answer, and which is fastest,
/// cheapest and least hungry for energy at its best layout that fits.
struct training_comparison {
  std::vector<training_answer> answers;
  std::string verdict; ///< one cluster: its answer's verdict
};

training_comparison compare_training(std::vector<training_answer> answers);

} // namespace roofline
