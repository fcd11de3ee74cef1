// SPDX-License-Identifier: Apache-2.0
#include "option_words.hpp"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <utility>

namespace roofline::cli {

namespace {

/// The one table from the library's option fields to the CLI's words, sorted by field.
constexpr std::pair<std::string_view, std::string_view> option_words[] = {
    {"choose_gpu::request", "--gpu"},
    {"compare_request::batches", "--batch"},
    {"compare_request::gpus", "--gpus"},
    {"compare_request::memory_reserve", "--memory-reserve"},
    {"compare_request::prices", "--price"},
    {"compare_request::tensor_parallel", "--tp"},
    {"config_options::batch", "--batch"},
    {"config_options::data_parallel", "--dp"},
    {"config_options::expert_parallel", "--ep"},
    {"config_options::glue", "--glue"},
    {"config_options::kv_cache", "--kv-cache-dtype"},
    {"config_options::kv_len", "--kv-len"},
    {"config_options::last_logits", "--last-logits"},
    {"config_options::mode", "--mode"},
    {"config_options::optimizer", "--optimizer"},
    {"config_options::phase", "--phase"},
    {"config_options::pipeline_parallel", "--pp"},
    {"config_options::quantization", "--quantization"},
    {"config_options::recompute", "--recompute"},
    {"config_options::seq_len", "--seq-len"},
    {"config_options::sequence_parallel", "--sequence-parallel"},
    {"config_options::tensor_parallel", "--tp"},
    {"config_options::zero_stage", "--zero"},
    {"describe_local_gpu::measure", "roofline-advise device --measure"},
    {"describe_local_gpu::refresh", "--refresh"},
    {"model_options::network", "--cluster"},
    {"model_options::operand_cache", "--warm-l2"},
    {"model_options::sparse", "--sparse"},
    {"output_format::json", "--format json"},
    {"pipeline_options::memory_reserve", "--memory-reserve"},
    {"serving_question::max_running", "--max-running"},
    {"serving_question::output_tokens", "--output-tokens"},
    {"serving_question::percentile", "--percentile"},
    {"serving_question::pipeline_parallel", "--pp"},
    {"serving_question::prompt_tokens", "--prompt-tokens"},
    {"serving_question::requests", "--requests"},
    {"serving_question::shared_prefix_tokens", "--shared-prefix"},
    {"serving_question::simulated_requests", "--num-requests"},
    {"serving_question::tpot_s", "--tpot"},
    {"serving_question::ttft_s", "--ttft"},
    {"spec_catalog::specs", "roofline-advise specs"},
    {"training_question::expert_imbalance", "--expert-imbalance"},
    {"training_question::global_batch", "--global-batch"},
    {"training_question::price_per_gpu_hour", "--price"},
    {"training_question::seq_len", "--seq-len"},
};

/// lower_bound needs the table in order: a field out of it would silently go unmapped.
constexpr bool sorted_by_field() {
  for (std::size_t i = 1; i < std::size(option_words); ++i)
    if (!(option_words[i - 1].first < option_words[i].first))
      return false;
  return true;
}
static_assert(sorted_by_field(), "option_words must be sorted by field, each field once");

bool word_character(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

} // namespace

std::string in_cli_words(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t copied = 0;
  for (std::size_t colons = text.find("::"); colons != std::string_view::npos;
       colons = text.find("::", colons + 2)) {
    std::size_t start = colons, end = colons + 2;
    while (start > copied && word_character(text[start - 1]))
      --start;
    while (end < text.size() && word_character(text[end]))
      ++end;
    const std::string_view field = text.substr(start, end - start);
    const auto *found = std::lower_bound(
        std::begin(option_words), std::end(option_words), field,
        [](const auto &entry, std::string_view name) { return entry.first < name; });
    if (found == std::end(option_words) || found->first != field)
      continue;
    out.append(text, copied, start - copied);
    out.append(found->second);
    copied = end;
    colons = end - 2;
  }
  out.append(text, copied);
  return out;
}

} // namespace roofline::cli
