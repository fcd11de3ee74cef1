// SPDX-License-Identifier: Apache-2.0
#include "roofline/model/interconnect.hpp"

#include "roofline/common/error.hpp"

#include "interpolation.hpp"
#include "json_reader.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace roofline {

double algorithm_bandwidth(std::int64_t bytes, double time_s) {
  return time_s > 0 ? static_cast<double>(bytes) / time_s : 0.0;
}

double bus_bandwidth(std::int64_t bytes, double time_s, int gpus) {
  return gpus > 1 ? algorithm_bandwidth(bytes, time_s) * 2.0 * (gpus - 1) / gpus : 0.0;
}

double all_reduce_parameter(const model_parameters &params, parameter group, int gpus) {
  return detail::interpolated_in_log2(
      static_cast<double>(gpus), all_reduce_gpu_counts, [&](std::size_t i) {
        return params[all_reduce_parameter_at(group, all_reduce_gpu_counts[i])];
      });
}

double all_reduce_traffic_bytes(std::int64_t bytes, int gpus, const model_parameters &params) {
  if (gpus < 2)
    return 0;
  // TensorRT-LLM's and NCCL's small-message kernels skip the ring's reduce-scatter: each GPU
  // pulls every peer's whole message and reduces it itself, fewer steps for more traffic.
  const bool oneshot =
      static_cast<double>(bytes) < params[parameter::all_reduce_oneshot_below_bytes];
  return static_cast<double>(bytes) * (oneshot ? gpus - 1.0 : 2.0 * (gpus - 1) / gpus);
}

double modelled_all_reduce_s(std::int64_t bytes, int gpus, const interconnect_spec &links,
                             const model_parameters &params) {
  if (gpus < 2)
    return 0;
  return all_reduce_parameter(params, parameter::all_reduce_latency_s, gpus) +
         all_reduce_traffic_bytes(bytes, gpus, params) /
             (all_reduce_parameter(params, parameter::all_reduce_link_efficiency, gpus) *
              links.bytes_per_s_over(gpus));
}

std::optional<double> measured_all_reduce_s(std::int64_t bytes, int gpus,
                                            const all_reduce_table &table) {
  const std::vector<all_reduce_sample> &s = table.samples;
  if (table.gpus != gpus || s.empty())
    return std::nullopt;
  if (bytes <= s.front().bytes)
    return s.front().time_s;
  if (bytes >= s.back().bytes)
    return s.back().time_s * static_cast<double>(bytes) / static_cast<double>(s.back().bytes);
  const auto above = std::upper_bound(
      s.begin(), s.end(), bytes,
      [](std::int64_t b, const all_reduce_sample &sample) { return b < sample.bytes; });
  const all_reduce_sample &low = *(above - 1), &high = *above;
  const double where = std::log(static_cast<double>(bytes) / static_cast<double>(low.bytes)) /
                       std::log(static_cast<double>(high.bytes) / static_cast<double>(low.bytes));
  return std::exp(std::log(low.time_s) + where * (std::log(high.time_s) - std::log(low.time_s)));
}

std::string to_json_text(const all_reduce_table &table) {
  nlohmann::json samples = nlohmann::json::array();
  for (const all_reduce_sample &s : table.samples)
    samples.push_back({{"bytes", s.bytes},
                       {"time_s", s.time_s},
                       {"algbw_bytes_per_s", algorithm_bandwidth(s.bytes, s.time_s)},
                       {"busbw_bytes_per_s", bus_bandwidth(s.bytes, s.time_s, table.gpus)}});
  const nlohmann::json doc{{"format", "roofline-advise all-reduce table"},
                           {"format_version", 1},
                           {"gpus", table.gpus},
                           {"precision", table.precision},
                           {"library", table.library},
                           {"origin", table.origin},
                           {"samples", samples}};
  return doc.dump(2);
}

all_reduce_table parse_all_reduce_table(const std::string &json_text, const std::string &origin) {
  try {
    const nlohmann::json doc =
        detail::parse_json_once_per_key(json_text, [&](const std::string &why) {
          throw input_error({origin, 1, 1}, "all-reduce table: " + why);
        });
    if (doc.value("format", "") != "roofline-advise all-reduce table" ||
        doc.value("format_version", 0) != 1)
      throw input_error({origin, 1, 1}, "not an all-reduce table of format_version 1");
    // Integers checked as such: a float read as an integer could be out of its range.
    const auto integer = [&](const nlohmann::json &value) {
      if (!value.is_number_integer())
        throw input_error({origin, 1, 1},
                          "all-reduce table: expected an integer, got " + value.dump());
      return value.get<std::int64_t>();
    };
    all_reduce_table table;
    const std::int64_t gpus = integer(doc.at("gpus"));
    if (gpus < 2 || gpus > 1024)
      throw input_error({origin, 1, 1}, "an all-reduce table spans 2 to 1024 GPUs");
    table.gpus = static_cast<int>(gpus);
    table.precision = doc.at("precision").get<std::string>();
    table.library = doc.at("library").get<std::string>();
    table.origin = doc.at("origin").get<std::string>();
    for (const nlohmann::json &s : doc.at("samples")) {
      if (!s.at("time_s").is_number())
        throw input_error({origin, 1, 1}, "all-reduce table: `time_s` must be a number");
      all_reduce_sample sample{integer(s.at("bytes")), s.at("time_s").get<double>()};
      // Times from a nanosecond to an hour: what one all-reduce can take, and no 1e-300.
      if (sample.bytes <= 0 || !(sample.time_s >= 1e-9 && sample.time_s <= 3600) ||
          (!table.samples.empty() && sample.bytes <= table.samples.back().bytes))
        throw input_error({origin, 1, 1}, "all-reduce samples must have positive, increasing "
                                          "bytes and times from 1 ns to 1 h");
      table.samples.push_back(sample);
    }
    return table;
  } catch (const nlohmann::json::exception &e) {
    throw input_error({origin, 1, 1}, std::string("not an all-reduce table: ") + e.what());
  }
}

} // namespace roofline
