// SPDX-License-Identifier: Apache-2.0
#include "fuzz_support.hpp"

#include "roofline/analysis/advisor.hpp"
#include "roofline/analysis/analysis.hpp"
#include "roofline/model/spec_catalog.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <variant>
#include <vector>

namespace roofline::fuzz {

namespace {

/// A number an accepted input must never produce: the "no number goes wrong silently".
void expect_sane(double value, const char *what, const std::string &layer) {
  if (std::isfinite(value) && value >= 0)
    return;
  std::fprintf(stderr, "accepted input, yet %s of layer `%s` is %g\n", what, layer.c_str(), value);
  std::abort();
}

void expect_sane(const gemm_shape &shape, const std::string &layer) {
  if (shape.m > 0 && shape.n > 0 && shape.k > 0 && shape.batch_count > 0)
    return;
  std::fprintf(stderr, "padding advice for layer `%s` holds a dimension below 1\n", layer.c_str());
  std::abort();
}

std::size_t count_layers(const std::vector<layer> &layers) {
  std::size_t count = layers.size();
  for (const layer &l : layers)
    if (const auto *block = std::get_if<repeat_block>(&l.body))
      count += count_layers(block->layers);
  return count;
}

} // namespace

std::size_t layer_count(const network &net) {
  return count_layers(net.layers);
}

void analyse(const network &net, const perf_model &model) {
  if (layer_count(net) > max_analysed_layers)
    return;
  const analysis analysed = analyze(net, model, "fuzz");
  for (const analysed_op &o : analysed.ops) {
    expect_sane(o.prediction.time_s, "the predicted time", o.op.layer);
    expect_sane(o.prediction.device_time_s, "the device time", o.op.layer);
    expect_sane(o.prediction.roofline_time_s, "the roofline time", o.op.layer);
    expect_sane(o.total_time_s, "the time per step", o.op.layer);
  }
  expect_sane(analysed.totals.time_s, "the step time", "(all)");
  const advice advised = advise(analysed);
  for (const padding_advice &p : advised.padding) {
    expect_sane(p.padded, p.layer);
    expect_sane(p.padded_time_s, "the padded GEMM's time", p.layer);
    expect_sane(p.extra_bytes + 1, "the padded bytes", p.layer);
  }
}

void analyse(const network &net) {
  static const perf_model h100(spec_catalog::builtin().resolve("h100"));
  analyse(net, h100);
}

} // namespace roofline::fuzz
