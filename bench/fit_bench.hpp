// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the fitting benches (attention_fit, memory_op_fit, conv_fit) share: their command line,
// the fit of one file's `fit` half and the scoring of the rest, the error table they print, and
// the fitted values they print last.

#include "roofline/common/error.hpp"
#include "roofline/model/gpu_spec.hpp"
#include "roofline/model/model_fit.hpp"
#include "roofline/model/model_parameters.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace roofline::bench {

/// Median, p90 and max |predicted − measured| / measured of `samples` (each with a `kind` and a
/// `timed` sample relative_errors takes), by kind and in all, with `before` and `after`.
template <class Sample>
void report(const std::string &title, const std::vector<Sample> &samples, const gpu_spec &gpu,
            const model_parameters &before, const model_parameters &after) {
  std::map<std::string, std::vector<decltype(Sample::timed)>> by_kind;
  for (const Sample &x : samples) {
    by_kind[x.kind].push_back(x.timed);
    by_kind["all"].push_back(x.timed);
  }
  std::printf("%s\n%-18s %5s  %22s  %22s\n", title.c_str(), "calls", "n", "before: median p90 max",
              "fitted: median p90 max");
  for (const auto &[kind, timed] : by_kind) {
    const auto line = [&](const model_parameters &p) {
      const std::vector<double> e = relative_errors(timed, gpu, p);
      return fmt::format("{:6.1f}% {:6.1f}% {:6.0f}%", 100 * e[e.size() / 2],
                         100 * e[std::min(e.size() - 1, e.size() * 9 / 10)], 100 * e.back());
    };
    std::printf("%-18s %5zu  %22s  %22s\n", kind.c_str(), timed.size(), line(before).c_str(),
                line(after).c_str());
  }
  // The prediction interval's inputs (specs/arch `accuracy:`), added below the table so that
  // the lines above stay as they were.
  std::printf("measured / predicted, fitted: p10 p90\n");
  for (const auto &[kind, timed] : by_kind) {
    const std::vector<double> r = measured_over_predicted(timed, gpu, after);
    std::printf("%-18s %5zu  %6.3f %6.3f\n", kind.c_str(), timed.size(), r[r.size() / 10],
                r[std::min(r.size() - 1, r.size() * 9 / 10)]);
  }
  std::printf("\n");
}

/// The command line of a fitting bench: --gpu GPU, --fit FILE, --score FILE (repeatable), and
/// the flags of `extra` (name → default), whose values it holds.
struct fit_command {
  std::string gpu, fit_file;
  std::vector<std::string> score_files;
  std::map<std::string, std::string> extra;
};

/// Throws roofline::error with `usage` when a flag is unknown, --gpu is missing, or there is
/// neither a file to fit nor one to score.
inline fit_command parse_fit_command(int argc, char **argv,
                                     std::map<std::string, std::string> extra,
                                     const std::string &usage) {
  fit_command c;
  c.extra = std::move(extra);
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--gpu")
      c.gpu = value;
    else if (flag == "--fit")
      c.fit_file = value;
    else if (flag == "--score")
      c.score_files.push_back(value);
    else if (c.extra.count(flag))
      c.extra[flag] = value;
    else
      throw error("unknown option " + flag + "; usage: " + usage);
  }
  if (c.gpu.empty() || (c.fit_file.empty() && c.score_files.empty()))
    throw error("usage: " + usage);
  return c;
}

/// The parameters of one run and the files it scored, with their samples (the --fit file's
/// first, when there is one).
template <class Sample> struct fit_run {
  model_parameters before, start, after; ///< the GPU's; the fit's start; fitted (else before)
  std::vector<std::pair<std::string, std::vector<Sample>>> scored;
  std::size_t fitted = 0; ///< samples the fit used
};

/// With --fit, fits `kind`'s parameters by `fit(samples, basis, start)` to the `fit` half of its
/// file, from the table's defaults (the GPU's for the rest), so that the values do not depend on
/// what the architecture file holds now; then prints the errors of the fitted half, the held-out
/// half and every --score file, before (the GPU's parameters) and after. `read(file, fitting)`
/// gives a file's samples, `fitting` marking its `fit` half.
template <class Sample, class Read, class Fit>
fit_run<Sample> fit_and_score(const fit_command &c, const gpu_spec &basis,
                              const model_parameters &gpu_parameters, parameter_fit kind, Read read,
                              Fit fit) {
  fit_run<Sample> run{gpu_parameters, gpu_parameters, gpu_parameters, {}, 0};
  if (!c.fit_file.empty()) {
    std::vector<Sample> all = read(c.fit_file, true);
    std::vector<decltype(Sample::timed)> fit_set;
    std::vector<Sample> fitted_on, held_out;
    for (const Sample &x : all) {
      (x.fit ? fitted_on : held_out).push_back(x);
      if (x.fit)
        fit_set.push_back(x.timed);
    }
    for (const parameter_info &row : parameter_table())
      if (row.fit == kind)
        run.start.set(row.id, row.default_value);
    run.after = fit(fit_set, basis, run.start);
    run.fitted = fit_set.size();
    report("fitted on (" + c.fit_file + ", split fit):", fitted_on, basis, run.before, run.after);
    report("held out (" + c.fit_file + ", split score):", held_out, basis, run.before, run.after);
    run.scored.emplace_back(c.fit_file, std::move(all));
  }
  for (const std::string &file : c.score_files) {
    run.scored.emplace_back(file, read(file, false));
    report((c.fit_file.empty() ? "scored (" : "held out (") + file + ", every row):",
           run.scored.back().second, basis, run.before, run.after);
  }
  return run;
}

/// With --fit, prints what the fit moved from its start as a spec file's `model:` section whose
/// origin is `origin`.
template <class Sample>
void print_fitted(const fit_command &c, const fit_run<Sample> &run, const std::string &origin) {
  if (!c.fit_file.empty())
    std::printf("%s", to_yaml(changed(run.start, run.after, origin)).c_str());
}

} // namespace roofline::bench
