// SPDX-License-Identifier: Apache-2.0
// `roofline-advise train CONFIG --cluster C`: the layouts ranked, each step's parts, the verdict.
#include "document.hpp"
#include "json_fields.hpp"
#include "roofline/cluster/training.hpp"
#include "roofline/output/writers.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace roofline {

namespace {

using detail::align;
using detail::cell;
using detail::text_table;

/// The layouts shown: the first `shown` ranked.
constexpr std::size_t shown = 12;

cell seconds(double s) {
  return {detail::duration(s), detail::raw(s)};
}

cell share(double part, double whole) {
  return {detail::percent(part / whole), detail::raw(part)};
}

/// The run's days, MWh and cost at `e`: "—" where no run length (or no price) was asked.
std::vector<cell> run_cells(const training_answer &a, const training_estimate &e) {
  const cell none{"—", std::string{}};
  const bool run = a.question.tokens > 0;
  return {run ? cell{detail::significant(e.days), detail::raw(e.days)} : none,
          run ? cell{detail::significant(e.energy_mwh), detail::raw(e.energy_mwh)} : none,
          e.usd ? cell{fmt::format("{:.3g}M", *e.usd / 1e6), detail::raw(*e.usd)} : none};
}

text_table layouts_table(const training_answer &a) {
  text_table t;
  t.columns = {{"#", "rank"},
               {"layout", "layout", align::left},
               {"fits", "fits", align::left},
               {"step", "step_s"},
               {"tokens/s", "tokens_per_s"},
               {"TFLOP/s/GPU", "model_tflop_per_s_per_gpu"},
               {"MFU", "mfu"},
               {"bubble", "bubble_s"},
               {"exposed comm", "exposed_communication_s"},
               {"optimizer", "optimizer_s", align::right, true},
               {"memory of usable", "total_bytes"},
               {"days", "days"},
               {"MWh", "energy_mwh", align::right, true},
               {"$", "usd"}};
  for (std::size_t i = 0; i < std::min(shown, a.ranked.size()); ++i) {
    const training_estimate &e = a.ranked[i];
    const double comm =
        e.pipeline_send_s + e.context_exchange_s + e.expert_exchange_s + e.data_parallel_s;
    t.rows.push_back({
        {std::to_string(i + 1)},
        {describe(e.layout)},
        {e.fits ? "fits" : "no", std::nullopt, e.fits ? detail::tone::plain : detail::tone::warn},
        seconds(e.step_s),
        {detail::significant(e.tokens_per_s), detail::raw(e.tokens_per_s)},
        {detail::significant(e.model_tflop_per_s_per_gpu),
         detail::raw(e.model_tflop_per_s_per_gpu)},
        {detail::percent(e.mfu), detail::raw(e.mfu)},
        share(e.bubble_s, e.step_s),
        share(comm, e.step_s),
        share(e.optimizer_s, e.step_s),
        {fmt::format("{} of {}", detail::gigabytes(e.total_bytes),
                     detail::gigabytes(e.usable_bytes)),
         detail::raw(e.total_bytes), e.fits ? detail::tone::plain : detail::tone::warn},
    });
    const std::vector<cell> run = run_cells(a, e);
    t.rows.back().insert(t.rows.back().end(), run.begin(), run.end());
  }
  return t;
}

nlohmann::json estimate_json(const training_estimate &e) {
  const parallel_layout &l = e.layout;
  return {{"layout",
           {{"tp", l.tp},
            {"pp", l.pp},
            {"dp", l.dp},
            {"cp", l.cp},
            {"ep", l.ep},
            {"micro_batch", l.micro_batch},
            {"virtual_stages", l.virtual_stages},
            {"zero_stage", l.zero_stage},
            {"recompute", to_string(l.recompute)}}},
          {"micro_batches", e.micro_batches},
          {"step_s", e.step_s},
          {"compute_s", e.compute_s},
          {"bubble_s", e.bubble_s},
          {"pipeline_send_s", e.pipeline_send_s},
          {"context_exchange_s", e.context_exchange_s},
          {"expert_exchange_s", e.expert_exchange_s},
          {"data_parallel_s", e.data_parallel_s},
          {"optimizer_s", e.optimizer_s},
          {"tokens_per_s", e.tokens_per_s},
          {"model_tflop_per_s_per_gpu", e.model_tflop_per_s_per_gpu},
          {"mfu", e.mfu},
          {"memory",
           {{"weights_bytes", e.weights_bytes},
            {"gradient_bytes", e.gradient_bytes},
            {"optimizer_bytes", e.optimizer_bytes},
            {"activation_bytes", e.activation_bytes},
            {"total_bytes", e.total_bytes},
            {"usable_bytes", e.usable_bytes},
            {"fits", e.fits}}},
          {"joules_per_step", e.joules_per_step},
          {"days", e.days},
          {"energy_mwh", e.energy_mwh},
          {"usd", e.usd ? nlohmann::json(*e.usd) : nlohmann::json(nullptr)}};
}

/// One answer's part of the JSON.
nlohmann::json answer_json(const training_answer &a) {
  nlohmann::json ranked = nlohmann::json::array();
  for (std::size_t i = 0; i < std::min(shown, a.ranked.size()); ++i)
    ranked.push_back(estimate_json(a.ranked[i]));
  return {{"cluster",
           {{"name", a.cluster.name},
            {"gpu", a.gpu},
            {"gpus_per_node", a.cluster.gpus_per_node},
            {"network_gb_per_s_per_gpu", a.cluster.network_bytes_per_s / 1e9},
            {"origin", a.cluster.origin}}},
          {"gpus", a.gpus},
          {"searched", a.searched},
          {"ranked", ranked},
          {"verdict", a.verdict}};
}

/// The clusters side by side at their best layouts.
text_table clusters_table(const training_comparison &c) {
  text_table t;
  t.columns = {{"cluster", "cluster", align::left},
               {"GPUs", "gpus"},
               {"best layout", "layout", align::left},
               {"step", "step_s"},
               {"tokens/s", "tokens_per_s"},
               {"MFU", "mfu"},
               {"days", "days"},
               {"MWh", "energy_mwh"},
               {"$", "usd"}};
  for (const training_answer &a : c.answers) {
    const training_estimate &e = a.ranked.front();
    t.rows.push_back({
        {a.cluster.name},
        {std::to_string(a.gpus)},
        {describe(e.layout) + (e.fits ? "" : " (does not fit)"), std::nullopt,
         e.fits ? detail::tone::plain : detail::tone::warn},
        seconds(e.step_s),
        {detail::significant(e.tokens_per_s), detail::raw(e.tokens_per_s)},
        {detail::percent(e.mfu), detail::raw(e.mfu)},
    });
    const std::vector<cell> run = run_cells(a, e);
    t.rows.back().insert(t.rows.back().end(), run.begin(), run.end());
  }
  return t;
}

class training_document final : public detail::document {
public:
  explicit training_document(const training_comparison &c) : m_comparison(c) {}

  detail::text_document text() const override {
    const training_comparison &c = m_comparison;
    const training_answer &first = c.answers.front();
    detail::text_document doc;
    const std::string steps = fmt::format(
        "steps of {} sequences × {} tokens{}", first.question.global_batch, first.question.seq_len,
        first.question.tokens > 0 ? fmt::format(", {:.3g} tokens in all", first.question.tokens)
                                  : "");
    if (c.answers.size() > 1) {
      doc.title(
          {fmt::format("{} trained on {} clusters", first.network_name, c.answers.size()), steps});
      doc.table(clusters_table(c));
      doc.lines({c.verdict}, true);
    }
    for (const training_answer &a : c.answers) {
      doc.title({fmt::format("{} trained on {} × {} ({})", a.network_name, a.gpus, a.gpu,
                             a.cluster.display_name),
                 fmt::format("{}; {} layouts priced, the first {} shown", steps, a.searched,
                             std::min(shown, a.ranked.size()))});
      doc.table(layouts_table(a));
      doc.lines({a.verdict}, true);
    }
    for (const std::string &note : first.notes)
      doc.note(note);
    return doc;
  }
  text_table csv() const override {
    return m_comparison.answers.size() > 1 ? clusters_table(m_comparison)
                                           : layouts_table(m_comparison.answers.front());
  }
  std::vector<detail::json_field> json() const override {
    const training_comparison &c = m_comparison;
    const training_answer &first = c.answers.front();
    nlohmann::json answers = nlohmann::json::array();
    for (const training_answer &a : c.answers)
      answers.push_back(answer_json(a));
    return detail::fields_of({{"kind", "training"},
                              {"network",
                               {{"name", first.network_name},
                                {"layers", first.layers},
                                {"flops_per_sequence", first.flops_per_sequence}}},
                              {"question",
                               {{"global_batch", first.question.global_batch},
                                {"seq_len", first.question.seq_len},
                                {"tokens", first.question.tokens},
                                {"expert_imbalance", first.question.expert_imbalance}}},
                              {"answers", answers},
                              {"verdict", c.verdict},
                              {"notes", first.notes}});
  }

private:
  const training_comparison &m_comparison;
};

} // namespace

void write_training(const training_comparison &training, output_format format, std::ostream &out,
                    const write_options &options) {
  detail::write_document(training_document(training), format, out, options);
}

} // namespace roofline
