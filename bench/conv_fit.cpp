// SPDX-License-Identifier: Apache-2.0
// Fits the convolution model (estimate_conv) to timed cuDNN convolutions and scores it on ones it
// never saw. No GPU needed: the timings come from bench/sweep_kernels.py's conv section.
//
//   conv_fit --gpu h100-sxm5 --fit CONV.csv [--score CONV.csv ...] [--dump FILE]
//   conv_fit --gpu h200-sxm --score CONV.csv     # the GPU's parameters as they are
//
// Rows timed by graph replay (F.conv2d channels_last under cudnn.benchmark; dgrad and wgrad alone
// through aten.convolution_backward). Each is lowered from a one-layer network, so its implicit
// GEMM and bytes are the analysis's own. --fit: its rows of split `fit` fit the parameters from
// the table's defaults; its rows of split `score` and every --score file's rows (another run,
// another GPU) score them. Prints the errors before (the architecture's parameters) and after by
// pass and variant, then, per variant and per net, the fitted model's against the plain GEMM
// model's (the implicit GEMM timed as cuBLAS's, what convolutions got before they had parameters
// of their own), then the fitted parameters as a `model:` section for specs/arch/. --dump writes
// every scored row, measured and predicted, as CSV.
#include "roofline/analysis/lowering.hpp"
#include "roofline/common/error.hpp"
#include "roofline/input/network.hpp"
#include "roofline/model/conv_model.hpp"
#include "roofline/model/model_fit.hpp"
#include "roofline/model/spec_catalog.hpp"

#include "csv_fields.hpp"
#include "fit_bench.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace {

using namespace roofline;

struct sample {
  std::string kind; ///< "forward pointwise", "data-grad spatial", ...
  bool fit = false; ///< split `fit` of the --fit file
  std::string net, layer;
  timed_conv timed;
};

/// The convolution op a network of one conv2d layer lowers to, for pass `p`.
op lowered(const conv2d_layer &conv, std::int64_t batch, precision prec, pass p) {
  network net;
  net.name = "conv";
  net.precision = prec;
  net.batch = batch;
  net.mode = p == pass::forward ? run_mode::inference : run_mode::training;
  net.layers.push_back({"conv", std::nullopt, std::nullopt, {}, conv});
  for (const op &o : lower(net))
    if (o.conv && o.pass == p)
      return o;
  throw error("no convolution op lowered");
}

std::vector<sample> read_samples(const std::string &file, bool fitting) {
  bench::csv_file csv(file, "bench/sweep_kernels.py's conv.csv");
  const std::size_t c_net = csv.column("net"), c_name = csv.column("name"),
                    c_pass = csv.column("pass"), c_n = csv.column("n"), c_c = csv.column("c"),
                    c_h = csv.column("h"), c_w = csv.column("w"), c_k = csv.column("k"),
                    c_r = csv.column("r"), c_s = csv.column("s"), c_stride = csv.column("stride"),
                    c_pad = csv.column("pad"), c_groups = csv.column("groups"),
                    c_dtype = csv.column("dtype"), c_time = csv.column("time_us"),
                    c_split = csv.column("split"), c_timing = csv.column("timing");
  std::vector<sample> samples;
  for (std::vector<std::string> f; csv.next(f);) {
    if (f[c_timing] != "graph")
      continue;
    const std::optional<double> time_us = bench::positive_time(f[c_time]);
    if (!time_us)
      continue;
    conv2d_layer conv;
    conv.in_channels = std::stoll(f[c_c]);
    conv.out_channels = std::stoll(f[c_k]);
    conv.kernel_h = std::stoll(f[c_r]);
    conv.kernel_w = std::stoll(f[c_s]);
    conv.stride_h = conv.stride_w = std::stoll(f[c_stride]);
    conv.padding_h = conv.padding_w = std::stoll(f[c_pad]);
    conv.input_h = std::stoll(f[c_h]);
    conv.input_w = std::stoll(f[c_w]);
    conv.groups = std::stoll(f[c_groups]);
    const pass p = f[c_pass] == "dgrad"   ? pass::data_grad
                   : f[c_pass] == "wgrad" ? pass::weight_grad
                                          : pass::forward;
    const precision prec = f[c_dtype] == "bfloat16" ? precision::bf16 : precision::fp16;
    const op o = lowered(conv, std::stoll(f[c_n]), prec, p);
    sample x;
    x.timed = {*o.conv, *o.gemm, prec, o.bytes, *time_us * 1e-6};
    x.fit = fitting && f[c_split] == "fit";
    x.net = f[c_net];
    x.layer = f[c_name];
    x.kind = fmt::format("{} {}", to_string(p), to_string(variant_of(*o.conv)));
    samples.push_back(x);
  }
  return samples;
}

/// The plain GEMM model's time for a sample: its implicit GEMM as cuBLAS's.
double plain_gemm_s(const timed_conv &x, const gpu_spec &gpu, const model_parameters &params) {
  return estimate_gemm(x.implicit, x.prec, gpu.peak_flop_per_s(x.prec), gpu, params,
                       cache_state::warm, reasons::without)
      .device_time_s;
}

/// Median and p90 |error| of the plain GEMM model and the fitted one, per variant, per net and in
/// all, with the share of rows within 10%.
void compare(const std::string &title, const std::vector<sample> &samples, const gpu_spec &gpu,
             const model_parameters &plain, const model_parameters &fitted) {
  std::map<std::string, std::vector<const sample *>> groups;
  for (const sample &x : samples) {
    groups["variant " + std::string(to_string(variant_of(x.timed.shape)))].push_back(&x);
    groups["net " + x.net].push_back(&x);
    groups["all"].push_back(&x);
  }
  std::printf("%s\n%-28s %5s  %24s  %24s\n", title.c_str(), "rows", "n",
              "plain GEMM: median p90 ≤10%", "fitted: median p90 ≤10%");
  for (const auto &[group, rows] : groups) {
    const auto line = [&](auto time_s) {
      std::vector<double> e;
      for (const sample *x : rows)
        e.push_back(std::fabs(time_s(x->timed) - x->timed.time_s) / x->timed.time_s);
      std::sort(e.begin(), e.end());
      const auto within = std::count_if(e.begin(), e.end(), [](double v) { return v <= 0.1; });
      return fmt::format("{:6.1f}% {:6.1f}% {:4.0f}%", 100 * e[e.size() / 2],
                         100 * e[std::min(e.size() - 1, e.size() * 9 / 10)],
                         100.0 * static_cast<double>(within) / static_cast<double>(e.size()));
    };
    std::printf("%-28s %5zu  %24s  %24s\n", group.c_str(), rows.size(),
                line([&](const timed_conv &t) { return plain_gemm_s(t, gpu, plain); }).c_str(),
                line([&](const timed_conv &t) {
                  return estimate_conv(t.shape, t.implicit, t.prec, t.bytes, gpu, fitted,
                                       cache_state::warm, reasons::without)
                      .device_time_s;
                }).c_str());
  }
  std::printf("\n");
}

void dump(const std::string &file,
          const std::vector<std::pair<std::string, std::vector<sample>>> &scored,
          const gpu_spec &gpu, const model_parameters &params) {
  std::ofstream out(file);
  out << "file,net,layer,kind,split,dtype,n,c,h,k,r,stride,groups,measured_us,predicted_us,"
         "plain_gemm_us\n";
  for (const auto &[name, samples] : scored)
    for (const sample &x : samples) {
      const conv_shape &s = x.timed.shape;
      const conv_estimate e = estimate_conv(s, x.timed.implicit, x.timed.prec, x.timed.bytes, gpu,
                                            params, cache_state::warm, reasons::without);
      out << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{:.3f},{:.3f},{:.3f}\n", name,
                         x.net, x.layer, x.kind, x.fit ? "fit" : "score", to_string(x.timed.prec),
                         s.batch, s.in_channels, s.input_h, s.out_channels, s.kernel_h, s.stride_h,
                         s.groups, x.timed.time_s * 1e6, e.device_time_s * 1e6,
                         plain_gemm_s(x.timed, gpu, params) * 1e6);
    }
}

} // namespace

int main(int argc, char **argv) {
  try {
    const bench::fit_command c = bench::parse_fit_command(
        argc, argv, {{"--dump", ""}},
        "conv_fit --gpu GPU [--fit CONV.csv] [--score CONV.csv ...] [--dump FILE]");
    const gpu_spec spec = spec_catalog::builtin().resolve(c.gpu);
    const gpu_spec basis = model_basis(spec);
    const auto run = bench::fit_and_score<sample>(c, basis, spec.parameters, parameter_fit::conv,
                                                  read_samples, fit_conv);
    for (const auto &[file, samples] : run.scored) {
      std::vector<sample> held_out;
      std::copy_if(samples.begin(), samples.end(), std::back_inserter(held_out),
                   [](const sample &x) { return !x.fit; });
      compare("plain GEMM model against the fitted one (" + file + ", rows not fitted on):",
              held_out, basis, spec.parameters, run.after);
    }
    if (!c.extra.at("--dump").empty())
      dump(c.extra.at("--dump"), run.scored, basis, run.after);
    bench::print_fitted(c, run,
                        fmt::format("convolutions fitted by bench/conv_fit on {} cuDNN timings "
                                    "of {}",
                                    run.fitted, c.fit_file));
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "conv_fit: %s\n", e.what());
    return 2;
  }
}
