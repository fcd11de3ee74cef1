// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the benches fitting one architecture at a time on ../shared/data/aic share (aic_data.hpp
// holds the GPUs and the fit/score split): their command line, the spec of each GPU of the data,
// a second hash to subsample the fit half with, and the error summary of their tables.

#include "roofline/common/error.hpp"
#include "roofline/model/gpu_spec.hpp"
#include "roofline/model/model_parameters.hpp"
#include "roofline/model/spec_catalog.hpp"

#include "aic_data.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace roofline::bench {

/// The GPU of the data an architecture is fitted on; empty: not refitted by this bench.
struct architecture_fit {
  std::string_view architecture, fit_gpu;
};

/// The command line: --data DIR, --arch ARCH (only that one), --fit-rows N (per phase),
/// --spec GPU=FILE (repeatable: the spec of a GPU the catalog does not hold yet), --dump FILE.
struct aic_command {
  std::string data = "build-rel/aic", architecture, dump;
  std::size_t fit_rows = 1600;
  std::map<std::string, std::string> spec_files; ///< GPU (its files' name) → spec file
};

/// Throws roofline::error with `usage` for an unknown flag or one without its value.
inline aic_command parse_aic_command(int argc, char **argv, const std::string &usage) {
  aic_command c;
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (i + 1 >= argc)
      throw error("usage: " + usage);
    const std::string value = argv[i + 1];
    if (flag == "--data")
      c.data = value;
    else if (flag == "--arch")
      c.architecture = value;
    else if (flag == "--fit-rows")
      c.fit_rows = static_cast<std::size_t>(std::stoul(value));
    else if (flag == "--dump")
      c.dump = value;
    else if (flag == "--spec" && value.find('=') != std::string::npos)
      c.spec_files[value.substr(0, value.find('='))] = value.substr(value.find('=') + 1);
    else
      throw error("unknown option " + flag + "; usage: " + usage);
  }
  return c;
}

/// The spec of a GPU of the data: --spec's file, else the catalog's; nullopt when neither.
inline std::optional<gpu_spec> aic_spec(const aic_command &c, const aic_gpu &gpu) {
  if (const auto file = c.spec_files.find(std::string(gpu.files)); file != c.spec_files.end())
    return spec_catalog::builtin().resolve(file->second);
  if (const gpu_spec *spec = spec_catalog::builtin().find(gpu.spec))
    return *spec;
  return std::nullopt;
}

/// Calls `score(gpu, spec, result)` for each GPU of the data (aic_gpus() order) whose spec
/// resolves (aic_spec), has links where `needs_links`, and whose architecture `results` holds; a
/// GPU without such a spec gets a line in `notes`.
template <class Result, class Score>
void score_every_gpu(const aic_command &c, const std::map<std::string, Result> &results,
                     bool needs_links, std::vector<std::string> &notes, Score score) {
  for (const aic_gpu &gpu : aic_gpus()) {
    const std::optional<gpu_spec> spec = aic_spec(c, gpu);
    if (!spec || (needs_links && !spec->interconnect)) {
      notes.push_back(fmt::format("{}: not scored: no spec `{}`{} in specs/ (--spec {}=FILE)",
                                  gpu.files, gpu.spec, needs_links ? " with its links" : "",
                                  gpu.files));
      continue;
    }
    if (const auto result = results.find(spec->architecture); result != results.end())
      score(gpu, *spec, result->second);
  }
}

/// The GPU of the data whose files are named `files` ("b200_sxm").
inline const aic_gpu &aic_gpu_named(std::string_view files) {
  for (const aic_gpu &gpu : aic_gpus())
    if (gpu.files == files)
      return gpu;
  throw error("no GPU " + std::string(files) + " in the shared data");
}

/// `params` with every parameter fitted as `kind` at the table's default: what a GPU of an
/// architecture with no such fit has, and where a fit starts.
inline model_parameters table_defaults(model_parameters params, parameter_fit kind) {
  for (const parameter_info &row : parameter_table())
    if (row.fit == kind)
      params.set(row.id, row.default_value);
  return params;
}

/// Every parameter fitted as `kind`, at its value in `fitted`, those the fit left at their start
/// too: an architecture file that lists them all inherits none of them from another
/// architecture (`inherits:`), so its GPUs predict what the fit scored.
inline parameter_overrides all_of_kind(const model_parameters &fitted, parameter_fit kind,
                                       std::string origin) {
  parameter_overrides all{std::move(origin), {}};
  for (const parameter_info &row : parameter_table())
    if (row.fit == kind)
      all.values.emplace_back(row.id, fitted[row.id]);
  return all;
}

/// Whether the parameters a GPU of `architecture` resolves to (`spec`: its arch file's) hold the
/// `fitted` values of every parameter fitted as `kind`, to the 6 digits a `model:` section keeps:
/// a line saying so, or naming those that differ (the arch file wants the printed lines).
inline std::string written_note(std::string_view architecture, const model_parameters &fitted,
                                const model_parameters &spec, parameter_fit kind) {
  std::string differ;
  for (const parameter_info &row : parameter_table())
    if (row.fit == kind && std::fabs(spec[row.id] - fitted[row.id]) >
                               1e-5 * std::max(std::fabs(fitted[row.id]), 1e-30))
      differ += (differ.empty() ? "" : ", ") + row.name;
  if (differ.empty())
    return fmt::format("specs/arch/{}.yaml holds these values", architecture);
  return fmt::format("specs/arch/{}.yaml does not hold these values (it differs in {})",
                     architecture, differ);
}

/// FNV-1a of `text` with another seed than in_fit_half's: a second, independent coin, to
/// subsample the fit half the same way on every machine.
inline std::uint64_t subsample_hash(std::string_view text) {
  std::uint64_t h = 0xcbf29ce484222325ULL ^ 0x5eed5eedULL;
  for (const char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h ^ (h >> 31);
}

/// The errors of a set of predictions: median and p90 of |predicted − measured| / measured, and
/// the median signed error (bias: positive when the model is slower than measured).
struct error_summary {
  std::size_t n = 0;
  double median = 0, p90 = 0, bias = 0;
};

/// The summary of (predicted, measured) pairs.
inline error_summary summarize(const std::vector<std::pair<double, double>> &predicted_measured) {
  std::vector<double> absolute, signed_error;
  for (const auto &[predicted, measured] : predicted_measured) {
    signed_error.push_back(predicted / measured - 1);
    absolute.push_back(std::fabs(signed_error.back()));
  }
  error_summary s;
  s.n = absolute.size();
  if (s.n == 0)
    return s;
  std::sort(absolute.begin(), absolute.end());
  std::sort(signed_error.begin(), signed_error.end());
  s.median = absolute[s.n / 2];
  s.p90 = absolute[std::min(s.n - 1, s.n * 9 / 10)];
  s.bias = signed_error[s.n / 2];
  return s;
}

/// "4.1% | 12% | -0.3%": median, p90 and bias as markdown cells.
inline std::string cells(const error_summary &s) {
  return fmt::format("{:.1f}% | {:.0f}% | {:+.1f}%", 100 * s.median, 100 * s.p90, 100 * s.bias);
}

} // namespace roofline::bench
