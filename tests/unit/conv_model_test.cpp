// SPDX-License-Identifier: Apache-2.0
// The convolution model (estimate_conv) against hand computations on an H100's basis, and what a
// conv2d layer with groups lowers to.
#include "roofline/analysis/lowering.hpp"
#include "roofline/input/network.hpp"
#include "roofline/model/conv_model.hpp"
#include "roofline/model/memory_op_model.hpp"
#include "roofline/model/perf_model.hpp"
#include "roofline/model/spec_catalog.hpp"

#include <doctest/doctest.h>

#include <vector>

using namespace roofline;

namespace {

const gpu_spec &h100() {
  static const gpu_spec basis = model_basis(spec_catalog::builtin().resolve("h100"));
  return basis;
}

/// The ops of a network of one conv2d layer `body` (a flow mapping's keys) at `batch`.
std::vector<op> conv_ops(const std::string &body, std::int64_t batch, bool training = false,
                         const std::string &precision = "fp16") {
  return lower(parse_network(
      "name: t\nbatch: " + std::to_string(batch) + (training ? "\nmode: training" : "") +
          "\nprecision: " + precision + "\nlayers:\n  - {name: c, type: conv2d, " + body + "}\n",
      "t.yaml"));
}

std::vector<std::int64_t> dims(const gemm_shape &s) {
  return {s.m, s.n, s.k, s.batch_count};
}

double gemm_s(const gemm_shape &s, std::int64_t bytes, const model_parameters &p,
              precision prec = precision::fp16) {
  return estimate_gemm(s, prec, h100().peak_flop_per_s(prec), h100(), p, cache_state::warm,
                       reasons::without, static_cast<double>(bytes))
      .device_time_s;
}

} // namespace

TEST_CASE("conv variants: grouped first, then small channel counts, then by the filter") {
  conv_shape s;
  s.in_channels = 64;
  CHECK(variant_of(s) == conv_variant::pointwise);
  s.stride_h = s.stride_w = 2;
  CHECK(variant_of(s) == conv_variant::strided_pointwise);
  s.kernel_h = s.kernel_w = 3;
  CHECK(variant_of(s) == conv_variant::spatial);
  s.in_channels = 3;
  CHECK(variant_of(s) == conv_variant::small_channel);
  s.in_channels = s.groups = 96;
  CHECK(variant_of(s) == conv_variant::grouped);
  CHECK(to_string(conv_variant::strided_pointwise) == "strided_pointwise");
  CHECK(conv_gemm_variant_names().size() == static_cast<std::size_t>(conv_gemm_variant_count));
  CHECK_THROWS_AS(conv_slowdown_at(conv_variant::grouped), std::out_of_range);
  // The gradients' slowdowns are groups by variant too, in the same order.
  CHECK(conv_slowdown_at(conv_variant::spatial, parameter::conv_data_grad_slowdown) ==
        static_cast<parameter>(static_cast<int>(parameter::conv_data_grad_slowdown) + 2));
  CHECK(info(conv_slowdown_at(conv_variant::small_channel, parameter::conv_weight_grad_slowdown))
            .name == "conv_weight_grad_slowdown.small_channel");
}

TEST_CASE("an implicit-GEMM conv: the GEMM's time streaming the real tensors, times its variant's "
          "and its pass's slowdowns, plus the overhead") {
  // 3×3, 64 → 64 channels, 56×56, batch 8: M = 8·56·56, N = 64, K = 64·9.
  const std::vector<op> ops = conv_ops(
      "in_channels: 64, out_channels: 64, kernel: 3, padding: 1, input: [56, 56]", 8, true);
  REQUIRE(ops.size() == 3);
  const op &fwd = ops[0];
  REQUIRE(fwd.conv);
  CHECK(dims(*fwd.gemm) == std::vector<std::int64_t>{8 * 56 * 56, 64, 576, 1});
  CHECK(fwd.conv->pass == pass::forward);
  // Input read, filters and output written, 2 bytes each: not the 9× larger im2col matrix.
  CHECK(fwd.bytes == 2 * (8 * 64 * 56 * 56 + 64 * 576 + 8 * 56 * 56 * 64));
  model_parameters p;
  p.set(conv_slowdown_at(conv_variant::spatial), 1.5);
  p.set(conv_slowdown_at(conv_variant::spatial, parameter::conv_data_grad_slowdown), 2);
  p.set(conv_slowdown_at(conv_variant::spatial, parameter::conv_weight_grad_slowdown), 3);
  // Other variants' gradient slowdowns leave a spatial conv's alone.
  p.set(conv_slowdown_at(conv_variant::pointwise, parameter::conv_data_grad_slowdown), 7);
  p.set(conv_slowdown_at(conv_variant::strided_pointwise, parameter::conv_weight_grad_slowdown), 7);
  p.set(parameter::conv_overhead_s, 1e-6);
  const auto time = [&](const op &o) {
    return estimate_conv(*o.conv, *o.gemm, o.precision, o.bytes, h100(), p).device_time_s;
  };
  CHECK(time(fwd) == doctest::Approx(1.5 * gemm_s(*fwd.gemm, fwd.bytes, p) + 1e-6));
  // The gradients: each its own implicit GEMM (data_grad_shape, weight_grad_shape of the
  // forward's) and bytes, at its variant's rate times its pass's.
  const op &dgrad = ops[1], &wgrad = ops[2];
  REQUIRE(dgrad.conv);
  REQUIRE(wgrad.conv);
  CHECK(dgrad.conv->pass == pass::data_grad);
  CHECK(wgrad.conv->pass == pass::weight_grad);
  CHECK(dims(*dgrad.gemm) == dims(data_grad_shape(*fwd.gemm)));
  CHECK(time(dgrad) == doctest::Approx(1.5 * 2 * gemm_s(*dgrad.gemm, dgrad.bytes, p) + 1e-6));
  CHECK(time(wgrad) == doctest::Approx(1.5 * 3 * gemm_s(*wgrad.gemm, wgrad.bytes, p) + 1e-6));
  // Streaming the real tensors is faster than the im2col GEMM the plain model saw.
  CHECK(gemm_s(*fwd.gemm, fwd.bytes, p) < estimate_gemm(*fwd.gemm, precision::fp16,
                                                        h100().peak_flop_per_s(precision::fp16),
                                                        h100(), p)
                                              .device_time_s);
}

TEST_CASE("a small-channel conv pads its channels to 16-byte loads: an RGB stem's 3 become 8") {
  const std::vector<op> ops =
      conv_ops("in_channels: 3, out_channels: 64, kernel: 7, stride: 2, padding: 3, "
               "input: [224, 224]",
               4);
  const op &o = ops.at(0);
  CHECK(o.gemm->k == 3 * 49);
  model_parameters p;
  p.set(conv_slowdown_at(conv_variant::small_channel), 4);
  gemm_shape padded = *o.gemm;
  padded.k = 8 * 49;
  const conv_estimate e = estimate_conv(*o.conv, *o.gemm, o.precision, o.bytes, h100(), p);
  CHECK(e.variant == conv_variant::small_channel);
  CHECK(e.device_time_s == doctest::Approx(4 * gemm_s(padded, o.bytes, p)));
  REQUIRE(e.gemm);
  CHECK(e.gemm->alignment_bytes == 16);
}

TEST_CASE("a bf16 small-channel forward conv: fp16's slowdown times the bf16 factor; its "
          "gradients and other variants without it") {
  const std::string stem = "in_channels: 3, out_channels: 64, kernel: 7, stride: 2, padding: 3, "
                           "input: [224, 224]";
  model_parameters p;
  p.set(conv_slowdown_at(conv_variant::small_channel), 1.5);
  p.set(conv_slowdown_at(conv_variant::small_channel, parameter::conv_data_grad_slowdown), 3);
  p.set(parameter::conv_small_channel_bf16_slowdown, 2.5);
  const auto time = [&](const op &o) {
    return estimate_conv(*o.conv, *o.gemm, o.precision, o.bytes, h100(), p).device_time_s;
  };
  const std::vector<op> bf16 = conv_ops(stem, 4, true, "bf16"),
                        fp16 = conv_ops(stem, 4, true, "fp16");
  REQUIRE(bf16.size() == 3);
  REQUIRE(bf16[1].conv->pass == pass::data_grad);
  gemm_shape padded = *bf16[0].gemm;
  padded.k = 8 * 49; // bf16 loads 8 elements in 16 bytes, as fp16
  CHECK(time(bf16[0]) ==
        doctest::Approx(1.5 * 2.5 * gemm_s(padded, bf16[0].bytes, p, precision::bf16)));
  CHECK(time(fp16[0]) == doctest::Approx(1.5 * gemm_s(padded, fp16[0].bytes, p)));
  // The data gradient: its N (C·R·S) padded, at the variant's rate times its own, no bf16 factor.
  gemm_shape dgrad = *bf16[1].gemm;
  dgrad.n = 8 * 49;
  CHECK(time(bf16[1]) ==
        doctest::Approx(1.5 * 3 * gemm_s(dgrad, bf16[1].bytes, p, precision::bf16)));
}

TEST_CASE("a depthwise conv: its floor plus the longer of its FMAs on the CUDA cores and its "
          "bytes at the memory-bound ops' rate") {
  // 7×7 depthwise, 96 channels, 56×56, batch 32: one GEMM of N = 1, K = 49 per channel.
  const std::vector<op> ops = conv_ops("in_channels: 96, out_channels: 96, kernel: 7, padding: 3, "
                                       "groups: 96, input: [56, 56]",
                                       32);
  const op &o = ops.at(0);
  CHECK(dims(*o.gemm) == std::vector<std::int64_t>{32 * 56 * 56, 1, 49, 96});
  CHECK(o.flops == 2LL * 32 * 56 * 56 * 96 * 49);
  CHECK(o.bytes == 2 * (32 * 96 * 56 * 56 + 96 * 49 + 32 * 56 * 56 * 96));
  model_parameters p;
  p.set(parameter::conv_grouped_floor_s, 5e-6);
  p.set(parameter::conv_grouped_efficiency, 0.25);
  p.set(parameter::conv_grouped_dram_efficiency, 0.5);
  const double fp32 = h100().peak_flop_per_s(precision::fp32);
  const double compute_s = static_cast<double>(o.flops) / (0.25 * fp32);
  const double stream_s =
      static_cast<double>(o.bytes) / (0.5 * memory_bytes_per_s(o.bytes, h100(), p));
  REQUIRE(compute_s > stream_s); // 7×7: the FMAs bind
  const conv_estimate e = estimate_conv(*o.conv, *o.gemm, o.precision, o.bytes, h100(), p);
  CHECK(e.variant == conv_variant::grouped);
  CHECK_FALSE(e.gemm);
  CHECK(e.device_time_s == doctest::Approx(5e-6 + compute_s));
  // Few FMAs per byte (a 1×1 grouped conv): the bytes bind.
  p.set(parameter::conv_grouped_efficiency, 1);
  const op pointwise = // a copy: the vector conv_ops returns is gone after this line
      conv_ops("in_channels: 96, out_channels: 96, kernel: 1, groups: 96, input: [56, 56]", 32)
          .at(0);
  const double bytes_s =
      static_cast<double>(pointwise.bytes) / (0.5 * memory_bytes_per_s(pointwise.bytes, h100(), p));
  CHECK(estimate_conv(*pointwise.conv, *pointwise.gemm, pointwise.precision, pointwise.bytes,
                      h100(), p)
            .device_time_s == doctest::Approx(5e-6 + bytes_s));
}

TEST_CASE("two convs of one implicit GEMM but different filters are predicted apart (the memo "
          "keys on the conv)") {
  // 1×1 over 3·3·64 channels and 3×3 over 64: the same M, N and K.
  const std::vector<op> a = conv_ops("in_channels: 576, out_channels: 64, kernel: 1, "
                                     "input: [28, 28]",
                                     8),
                        b = conv_ops("in_channels: 64, out_channels: 64, kernel: 3, padding: 1, "
                                     "input: [28, 28]",
                                     8);
  REQUIRE(dims(*a[0].gemm) == dims(*b[0].gemm));
  model_options options;
  options.parameters = model_parameters{};
  options.parameters->set(conv_slowdown_at(conv_variant::pointwise), 1);
  options.parameters->set(conv_slowdown_at(conv_variant::spatial), 2);
  const perf_model model(spec_catalog::builtin().resolve("h100"), options);
  const double ta = model.predict(a[0]).device_time_s, tb = model.predict(b[0]).device_time_s;
  CHECK(tb > 1.5 * ta);
}
