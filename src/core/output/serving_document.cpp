// SPDX-License-Identifier: Apache-2.0
// `roofline-advise compare --prompt-tokens P --output-tokens N`: each setup at its serving batch,
// the verdict, and the throughput–latency curves.
#include "document.hpp"
#include "json_fields.hpp"
#include "roofline/compare/serving.hpp"
#include "roofline/output/writers.hpp"
#include "serving_chart.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace roofline {

namespace {

using detail::align;
using detail::cell;
using detail::text_table;

/// The setup's standing against the targets: meets, misses (even at batch 1), does not fit.
std::string status_of(const serving_setup &s) {
  if (!s.unsupported.empty())
    return "cannot run";
  if (!s.chosen)
    return "does not fit";
  return s.meets_targets() ? "meets" : "misses";
}

text_table setups_table(const serving_comparison &c) {
  text_table table;
  table.columns = {{"setup", "setup", align::left},
                   {"targets", "status", align::left},
                   {"batch", "batch"},
                   {"limited by", "limited_by", align::left},
                   {"TTFT", "ttft_ms"},
                   {"TPOT", "tpot_ms"},
                   {"requests/s", "requests_per_s"},
                   {"out tokens/s", "output_tokens_per_s"},
                   {"per GPU", "output_tokens_per_s_per_gpu"},
                   {"J/out token", "joules_per_output_token"},
                   {"tokens/kWh", "output_tokens_per_kwh"},
                   {"$/h", "usd_per_hour"},
                   {"$/M out tokens", "usd_per_million_output_tokens"},
                   {"KV cache", "kv_cache_bytes"},
                   {"memory of usable", "memory_total_bytes"}};
  for (const serving_setup &s : c.setups) {
    std::vector<cell> row{
        {s.name},
        {status_of(s), std::nullopt, s.meets_targets() ? detail::tone::plain : detail::tone::warn}};
    if (s.chosen) {
      const serving_point &p = *s.chosen;
      row.insert(
          row.end(),
          {{std::to_string(p.batch)},
           {s.limited_by},
           {detail::duration_range(p.ttft_s, p.ttft_range.low_s, p.ttft_range.high_s),
            detail::raw(p.ttft_s * 1e3), p.meets_ttft ? detail::tone::plain : detail::tone::warn},
           p.has_tpot
               ? cell{detail::duration_range(p.tpot_s, p.tpot_range.low_s, p.tpot_range.high_s),
                      detail::raw(p.tpot_s * 1e3),
                      p.meets_tpot ? detail::tone::plain : detail::tone::warn}
               : cell{"—", std::string{}},
           {detail::significant(p.requests_per_s), detail::raw(p.requests_per_s)},
           {detail::significant(p.output_tokens_per_s), detail::raw(p.output_tokens_per_s)},
           {detail::significant(p.output_tokens_per_s_per_gpu),
            detail::raw(p.output_tokens_per_s_per_gpu)},
           {detail::significant(p.joules_per_output_token), detail::raw(p.joules_per_output_token)},
           {detail::significant(joules_per_kwh / p.joules_per_output_token),
            detail::raw(joules_per_kwh / p.joules_per_output_token)}});
    } else {
      for (int i = 0; i < 9; ++i)
        row.push_back({"—", std::string{}});
    }
    row.push_back(detail::usd_cell(s.usd_per_hour, detail::usd_amount::per_hour));
    row.push_back(
        detail::usd_cell(s.usd_per_million_output_tokens, detail::usd_amount::per_million_tokens));
    if (!s.memory) { // a setup that cannot run the model at all
      row.push_back({"—", std::string{}});
      row.push_back({"—", std::string{}});
      table.rows.push_back(std::move(row));
      continue;
    }
    row.push_back(
        {detail::gigabytes(s.memory->kv_cache_bytes), detail::raw(s.memory->kv_cache_bytes)});
    row.push_back({fmt::format("{} of {}", detail::gigabytes(s.memory->total_bytes),
                               detail::gigabytes(s.memory->usable_bytes())),
                   detail::raw(s.memory->total_bytes),
                   s.memory->fits ? detail::tone::plain : detail::tone::warn});
    table.rows.push_back(std::move(row));
  }
  // The key columns fit a terminal: $/M where prices are known, per GPU where a setup has more
  // than one; requests/s, the KV cache and $/h with --wide.
  const bool priced = std::any_of(c.setups.begin(), c.setups.end(), [](const serving_setup &s) {
    return s.usd_per_hour.has_value();
  });
  const bool sharded = std::any_of(c.setups.begin(), c.setups.end(),
                                   [](const serving_setup &s) { return s.gpus() > 1; });
  for (detail::column &col : table.columns)
    col.wide = col.key == "requests_per_s" || col.key == "kv_cache_bytes" ||
               col.key == "usd_per_hour" || col.key == "output_tokens_per_kwh" ||
               col.key == "joules_per_output_token" ||
               (col.key == "output_tokens_per_s_per_gpu" && !sharded) ||
               (col.key == "usd_per_million_output_tokens" && !priced);
  return table;
}

nlohmann::json range_ms(const time_range &r) {
  return {{"low", r.low_s * 1e3}, {"high", r.high_s * 1e3}};
}

/// A point's fields, into the object open in `w`.
void write_point_fields(detail::json_writer &w, const serving_point &p) {
  w.field("batch", p.batch);
  w.field("ttft_ms", p.ttft_s * 1e3);
  w.field("ttft_range_ms", range_ms(p.ttft_range));
  // One output token has no TPOT: null, as a target not given is.
  w.field("tpot_ms", p.has_tpot ? nlohmann::json(p.tpot_s * 1e3) : nlohmann::json());
  w.field("tpot_range_ms", p.has_tpot ? range_ms(p.tpot_range) : nlohmann::json());
  w.field("request_latency_ms", p.request_latency_s * 1e3);
  w.field("requests_per_s", p.requests_per_s);
  w.field("output_tokens_per_s", p.output_tokens_per_s);
  w.field("output_tokens_per_s_range",
          nlohmann::json{{"low", p.output_tokens_per_s_low}, {"high", p.output_tokens_per_s_high}});
  w.field("output_tokens_per_s_per_gpu", p.output_tokens_per_s_per_gpu);
  w.field("joules_per_output_token", p.joules_per_output_token);
  w.field("joules_per_request", p.joules_per_request);
  w.field("output_tokens_per_kwh", joules_per_kwh / p.joules_per_output_token);
  w.field("average_power_w", p.average_power_w);
  w.field("meets_ttft", p.meets_ttft);
  w.field("meets_tpot", p.meets_tpot);
  w.field("meets_targets", p.meets_targets());
}

/// "p50 12.3 ms, p90 …, p99 …" of a set of times.
std::string percentiles_text(const percentiles &p) {
  return fmt::format("p50 {}, p90 {}, p99 {}", detail::duration(p.p50), detail::duration(p.p90),
                     detail::duration(p.p99));
}

/// "; meets TTFT ≤ 1.00 s and TPOT ≤ 50.0 ms at p90", or "; misses" and the targets missed;
/// "" without targets.
std::string percentile_verdict(const serving_question &q, const simulation_result &r) {
  const std::optional<bool> meets = meets_at_percentile(q, r);
  if (!meets)
    return {};
  // The targets to name: all of them where all are met, else those missed.
  const auto named = [&](std::optional<double> target, const percentiles &p) {
    return target && (p.at(q.percentile) <= *target) == *meets ? target : std::nullopt;
  };
  serving_question shown;
  shown.ttft_s = named(q.ttft_s, r.ttft);
  shown.tpot_s = named(q.tpot_s, r.tpot);
  return fmt::format("; {} {} at p{}", *meets ? "meets" : "misses", targets_phrase(shown),
                     q.percentile);
}

/// "1000 requests arriving at 4/s (Poisson)", "… 16 at a time (a closed loop)", "… at their
/// listed arrivals".
std::string load_phrase(const serving_question &q, std::size_t requests) {
  const std::string lengths = q.requests.empty()
                                  ? ""
                                  : fmt::format(" (the file's lengths, mean {} + {} tokens)",
                                                q.prompt_tokens, q.output_tokens);
  if (q.rate_per_s)
    return fmt::format("{} requests{} arriving at {}/s (Poisson)", requests, lengths,
                       detail::significant(*q.rate_per_s));
  if (q.concurrency)
    return fmt::format("{} requests{} {} at a time (a closed loop)", requests, lengths,
                       *q.concurrency);
  return fmt::format("{} requests{} at their listed arrivals", requests, lengths);
}

/// " Goodput 3.9 requests/s (97% meet TTFT ≤ … and TPOT ≤ …)"; "" without targets.
std::string goodput_phrase(const serving_question &q, const simulation_result &r) {
  if (!q.ttft_s && !q.tpot_s)
    return {};
  const std::int64_t meeting = requests_meeting(r, q.ttft_s, q.tpot_s);
  return fmt::format(
      "; goodput {} requests/s ({} meet both)",
      detail::significant(static_cast<double>(meeting) / r.duration_s),
      detail::percent(static_cast<double>(meeting) / static_cast<double>(r.requests.size())));
}

/// Each setup's simulated load (its percentiles, throughput, goodput), and the highest load
/// meeting the targets, a line each.
std::vector<std::string> simulation_lines(const serving_comparison &c) {
  std::vector<std::string> lines;
  const serving_question &q = c.question;
  for (const serving_setup &s : c.setups) {
    if (!s.simulated)
      continue;
    const simulation_result &r = *s.simulated;
    lines.push_back(fmt::format(
        "{} simulated, {}: TTFT {}; TPOT {}; ITL {}; latency {}; {} output tokens/s{}{}{}", s.name,
        load_phrase(q, r.requests.size()), percentiles_text(r.ttft), percentiles_text(r.tpot),
        percentiles_text(r.itl), percentiles_text(r.latency),
        detail::significant(r.output_tokens_per_s),
        r.preemptions > 0 ? fmt::format("; {} preemptions (KV cache full)", r.preemptions) : "",
        goodput_phrase(q, r), percentile_verdict(q, r)));
    if (!(q.ttft_s || q.tpot_s) || !(q.rate_per_s || q.concurrency))
      continue;
    if (!s.highest_load) {
      lines.push_back(fmt::format("{} misses {} at p{} at every steady load tried, down to {}",
                                  s.name, targets_phrase(q), q.percentile,
                                  q.rate_per_s
                                      ? detail::significant(s.lowest_load_tried) + " requests/s"
                                      : fmt::format("{} at a time", s.lowest_load_tried)));
      continue;
    }
    const serving_setup::load_limit &l = *s.highest_load;
    lines.push_back(fmt::format(
        "{} meets {} at p{} up to {}{}: {} output tokens/s ({} per GPU){}", s.name,
        targets_phrase(q), q.percentile,
        q.rate_per_s ? detail::significant(l.load) + " requests/s"
                     : fmt::format("{} requests at a time", l.load),
        l.limited_by_requests
            ? fmt::format(" (the most {} simulated requests hold steady: simulate more to search "
                          "higher)",
                          l.simulated.requests.size())
            : "",
        detail::significant(l.simulated.output_tokens_per_s),
        detail::significant(l.simulated.output_tokens_per_s / s.gpus()),
        l.usd_per_million_output_tokens
            ? fmt::format(", ${:.4g} per million output tokens", *l.usd_per_million_output_tokens)
            : ""));
  }
  return lines;
}

void write_percentiles(detail::json_writer &w, const char *key, const percentiles &p) {
  w.key(key);
  w.begin_object();
  w.field("p50", p.p50 * 1e3);
  w.field("p90", p.p90 * 1e3);
  w.field("p99", p.p99 * 1e3);
  w.end_object();
}

void write_setup(detail::json_writer &w, const serving_setup &s, const serving_question &question) {
  w.begin_object();
  nlohmann::json device = detail::device_json(s.analysis.model.spec());
  device["selection"] = s.analysis.device_selection;
  w.field("device", device);
  w.field("name", s.name);
  w.field("tensor_parallel", s.tensor_parallel);
  w.field("pipeline_parallel", s.pipeline_parallel);
  w.field("attention_ranks", s.attention_ranks);
  w.field("parameters_origin", s.analysis.model.parameters().origin);
  w.field("largest_fitting_batch", s.largest_fitting_batch);
  w.field("unsupported", s.unsupported.empty() ? std::nullopt : std::optional(s.unsupported));
  w.key("simulation");
  if (s.simulated) {
    w.begin_object();
    w.field("requests", static_cast<std::int64_t>(s.simulated->requests.size()));
    w.field("steps", s.simulated->steps);
    w.field("duration_s", s.simulated->duration_s);
    w.field("output_tokens_per_s", s.simulated->output_tokens_per_s);
    write_percentiles(w, "ttft_ms", s.simulated->ttft);
    write_percentiles(w, "tpot_ms", s.simulated->tpot);
    write_percentiles(w, "itl_ms", s.simulated->itl);
    write_percentiles(w, "latency_ms", s.simulated->latency);
    w.field("preemptions", s.simulated->preemptions);
    w.field("kv_capacity_tokens", s.kv_capacity_tokens);
    w.field("meets_targets", meets_at_percentile(question, *s.simulated));
    const bool targets = question.ttft_s || question.tpot_s;
    const std::int64_t meeting = requests_meeting(*s.simulated, question.ttft_s, question.tpot_s);
    w.field("requests_meeting_targets", targets ? std::optional(meeting) : std::nullopt);
    w.field("goodput_requests_per_s",
            targets ? std::optional(static_cast<double>(meeting) / s.simulated->duration_s)
                    : std::nullopt);
    w.end_object();
  } else {
    w.null();
  }
  w.key("highest_load");
  if (s.highest_load) {
    const serving_setup::load_limit &l = *s.highest_load;
    w.begin_object();
    w.field("kind", question.rate_per_s ? "rate_per_s" : "concurrency");
    w.field("load", l.load);
    w.field("output_tokens_per_s", l.simulated.output_tokens_per_s);
    w.field("output_tokens_per_s_per_gpu", l.simulated.output_tokens_per_s / s.gpus());
    w.field("usd_per_million_output_tokens", l.usd_per_million_output_tokens);
    w.field("goodput_requests_per_s",
            static_cast<double>(l.meeting_targets) / l.simulated.duration_s);
    w.field("limited_by_requests", l.limited_by_requests);
    write_percentiles(w, "ttft_ms", l.simulated.ttft);
    write_percentiles(w, "tpot_ms", l.simulated.tpot);
    write_percentiles(w, "itl_ms", l.simulated.itl);
    w.end_object();
  } else {
    w.null();
  }
  w.key("most_throughput");
  if (s.most_throughput) {
    w.begin_object();
    w.field("batch", s.most_throughput->batch);
    w.field("output_tokens_per_s", s.most_throughput->output_tokens_per_s);
    w.field("output_tokens_per_s_per_gpu", s.most_throughput->output_tokens_per_s_per_gpu);
    w.end_object();
  } else {
    w.null();
  }
  w.key("serving");
  if (s.chosen) {
    w.begin_object();
    write_point_fields(w, *s.chosen);
    w.field("limited_by", s.limited_by);
    w.field("usd_per_hour", s.usd_per_hour);
    w.field("usd_per_million_output_tokens", s.usd_per_million_output_tokens);
    w.key("usd_per_million_output_tokens_range");
    if (const auto &r = s.usd_per_million_output_tokens_range)
      w.value(nlohmann::json{{"low", r->first}, {"high", r->second}});
    else
      w.null();
    w.end_object();
  } else {
    w.null();
  }
  w.key("memory");
  detail::write_memory(w, s.memory);
  w.key("curve");
  w.begin_array();
  for (const serving_point &p : s.curve) {
    w.begin_object();
    write_point_fields(w, p);
    w.end_object();
  }
  w.end_array();
  w.field("notes", s.analysis.notes);
  w.end_object();
}

std::optional<double> ms(const std::optional<double> &seconds) {
  return seconds ? std::optional(*seconds * 1e3) : std::nullopt;
}

std::vector<detail::json_field> serving_fields(const serving_comparison &c) {
  const serving_question &q = c.question;
  nlohmann::json verdict = {
      {"cheapest",
       c.verdict.cheapest ? nlohmann::json(*c.verdict.cheapest) : nlohmann::json(nullptr)},
      {"fastest", c.verdict.fastest ? nlohmann::json(*c.verdict.fastest) : nlohmann::json(nullptr)},
      {"cheapest_within_error", c.verdict.cheapest_within_error},
      {"fastest_within_error", c.verdict.fastest_within_error},
      {"text", c.verdict.text}};
  const auto nullable = [](std::optional<double> v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  std::vector<detail::json_field> fields = detail::fields_of(
      {{"kind", "serving"},
       {"network", {{"name", c.network_name}}},
       {"question",
        {{"prompt_tokens", q.prompt_tokens},
         {"output_tokens", q.output_tokens},
         {"ttft_ms", nullable(ms(q.ttft_s))},
         {"tpot_ms", nullable(ms(q.tpot_s))},
         {"launches", q.eager ? "eager" : "cuda_graphs"},
         {"kv_cache", c.kv_cache.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.kv_cache)},
         {"rate_per_s", nullable(q.rate_per_s)},
         {"concurrency", q.concurrency ? nlohmann::json(*q.concurrency) : nlohmann::json(nullptr)},
         {"simulated_requests",
          q.simulates()
              ? nlohmann::json(q.requests.empty() ? q.simulated_requests
                                                  : static_cast<std::int64_t>(q.requests.size()))
              : nlohmann::json(nullptr)},
         {"percentile", q.percentile},
         {"max_running", q.max_running},
         {"shared_prefix_tokens", q.shared_prefix_tokens}}},
       {"verdict", std::move(verdict)}});
  fields.push_back({"setups", [&c](detail::json_writer &w) {
                      w.begin_array();
                      for (const serving_setup &s : c.setups)
                        write_setup(w, s, c.question);
                      w.end_array();
                    }});
  return fields;
}

/// "requests of 2048 prompt + 256 output tokens, KV cache bf16, TTFT ≤ 500 ms and TPOT ≤ 50.0 ms,
/// steps replayed from CUDA graphs"
std::string question_line(const serving_comparison &c) {
  const serving_question &q = c.question;
  std::string text =
      fmt::format("requests of {} prompt + {} output tokens", q.prompt_tokens, q.output_tokens);
  if (!c.kv_cache.empty())
    text += ", KV cache " + c.kv_cache;
  if (const std::string targets = targets_phrase(q); !targets.empty())
    text += ", " + targets;
  return text + (q.eager ? ", every kernel launched eagerly" : ", steps replayed from CUDA graphs");
}

class serving_document final : public detail::document {
public:
  explicit serving_document(const serving_comparison &c) : m_serving(c) {}

  detail::text_document text() const override {
    const serving_comparison &c = m_serving;
    detail::text_document doc;
    doc.title({fmt::format("{} served on {} setup{}: {}", c.network_name, c.setups.size(),
                           c.setups.size() == 1 ? "" : "s", question_line(c))});
    doc.table(setups_table(c));
    if (const std::vector<std::string> simulated = simulation_lines(c); !simulated.empty())
      doc.lines(simulated, true);
    doc.lines({c.verdict.text}, true);
    doc.lines({fmt::format(
        "per setup: the largest batch (requests decoding at once, at most {}) whose KV cache at "
        "{} tokens fits and that meets the targets, batched continuously; TPOT: a decode step "
        "at the mean cache length ({} tokens) plus its share of the prefills of the requests "
        "that replace finished ones (batch / {} of one); TTFT: one prompt's prefill plus a "
        "decode step it shares; requests/s: batch / (TTFT + {} · TPOT); $/M out tokens: only "
        "where the targets are met; a target is met at the predicted time, (low–high) being the "
        "model's held-out p10–p90; memory of usable: the GPU's less "
        "compare_request::memory_reserve",
        max_serving_batch, c.question.prompt_tokens + c.question.output_tokens,
        c.question.prompt_tokens + c.question.output_tokens / 2, c.question.output_tokens,
        c.question.output_tokens - 1)});
    doc.lines(detail::parameter_origins(
        c.setups, [](const serving_setup &s) -> const perf_model & { return s.analysis.model; }));
    doc.note("steady state at the setup's rate: a request waits in no queue (bursts of arrivals "
             "add queueing to TTFT), and its prefill is not split into chunks");
    if (!c.setups.empty())
      for (const std::string &note : c.setups.front().analysis.notes)
        doc.note(note);
    return doc;
  }
  text_table csv() const override { return setups_table(m_serving); }
  std::vector<detail::json_field> json() const override { return serving_fields(m_serving); }
  std::optional<std::string> figure() const override {
    return detail::serving_curve_svg(m_serving);
  }

private:
  const serving_comparison &m_serving;
};

} // namespace

void write_serving(const serving_comparison &serving, output_format format, std::ostream &out,
                   const write_options &options) {
  detail::write_document(serving_document(serving), format, out, options);
}

} // namespace roofline
