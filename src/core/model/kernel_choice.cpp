// SPDX-License-Identifier: Apache-2.0
#include "kernel_choice.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

namespace roofline {
namespace detail {

namespace {

// Output tiles as (M, N). A model needs the menu, not the heuristic: it takes the fastest tile, as
// a good heuristic would.
// nvjet_sm90 (fp16/bf16/fp8/int8) sizes its N tile in steps of 8–32 (144, 168, 320 ...) so that
// tiles divide N well, and has skinny 8- to 32-row tiles for decode-like M.
const std::vector<tile> nvjet_tiles = [] {
  std::vector<tile> menu;
  for (int n : {64, 96, 128, 144, 160, 168, 192, 224, 256, 320})
    for (int m : {64, 128, 256})
      if (m * n <= 128 * 320)
        menu.push_back({m, n});
  for (int m : {8, 16, 32})
    for (int n : {64, 128, 256})
      menu.push_back({m, n});
  // Largest first: of equally fast tiles, the largest loads least.
  std::stable_sort(menu.begin(), menu.end(), [](tile a, tile b) { return a.m * a.n > b.m * b.n; });
  return menu;
}();
// xmma sm90 (tf32) and the kernels of GPUs before Hopper have the classic power-of-two tiles.
const std::vector<tile> classic_tiles{{128, 256}, {256, 128}, {128, 128}, {128, 64}, {64, 128},
                                      {64, 64},   {64, 256},  {256, 64},  {8, 64},   {8, 128},
                                      {8, 256},   {16, 64},   {16, 128},  {32, 64},  {32, 128}};
// The Ampere/Turing CUTLASS kernels cuBLAS falls back to.
const std::vector<tile> fallback_tiles{{64, 64}, {128, 128}, {128, 256}, {256, 128}};
// CUDA-core (SIMT) GEMMs use mid-sized tiles.
const std::vector<tile> simt_tiles{{128, 128}, {64, 128}, {128, 64}, {64, 64},
                                   {32, 128},  {128, 32}, {32, 32}};
// GEMV and gemmSN kernels: a few rows of A against column blocks of B.
const std::vector<tile> gemv_tiles{{8, 64},  {8, 128},  {8, 256}, {16, 64}, {16, 128},
                                   {32, 32}, {32, 128}, {64, 64}, {64, 128}};

/// cuBLAS's kernels for Hopper and newer (nvjet): TMA loads, N tiles in steps of 8 to 32.
bool has_nvjet(const gpu_spec &gpu) {
  // "9.0": read without strtod where the form is that plain (this runs once per estimate).
  const std::string &cc = gpu.compute_capability;
  const std::size_t dot = cc.find('.');
  const auto digits = [&](std::size_t from, std::size_t to) {
    return to > from && to - from <= 3 &&
           std::all_of(cc.begin() + static_cast<std::ptrdiff_t>(from),
                       cc.begin() + static_cast<std::ptrdiff_t>(to),
                       [](char c) { return c >= '0' && c <= '9'; });
  };
  if (dot != std::string::npos && digits(0, dot) && digits(dot + 1, cc.size())) {
    int major = 0;
    for (std::size_t i = 0; i < dot; ++i)
      major = major * 10 + (cc[i] - '0');
    return major >= 9;
  }
  return std::strtod(cc.c_str(), nullptr) >= 9.0;
}

} // namespace

kernel_kinds kernels_for(const gemm_shape &s, precision p, int alignment, const gpu_spec &gpu,
                         const model_parameters &params) {
  const bool tensor = runs_on_tensor_cores(p);
  const bool aligned = alignment == 16;
  if ((!tensor && s.m <= 8) || (s.m == 1 && (!aligned || p == precision::tf32))) {
    // gemv2T streams 4-byte elements at full bandwidth; the GEMVs of misaligned 2-byte rows
    // (narrower loads) and gemmSN (M > 1) stream slower, each at its own rate.
    const double slowdown = s.m > 1 ? params[parameter::gemv_bandwidth_slowdown]
                            : element_bytes(p) == 4
                                ? 1.0
                                : params[parameter::misaligned_gemv_bandwidth_slowdown];
    return {{kernel_family::gemv, 1, slowdown, &gemv_tiles, 0}};
  }
  if (!tensor)
    return {{kernel_family::simt, 1, 1, &simt_tiles, 24}};
  if (aligned) {
    const bool nvjet = has_nvjet(gpu) && p != precision::tf32;
    return {{kernel_family::tensor, 1, 1, nvjet ? &nvjet_tiles : &classic_tiles, 256}};
  }
  // Misaligned rows: rate by alignment; each halving of the loads' width costs bandwidth again.
  return {{kernel_family::fallback, params.misalignment_slowdown(alignment),
           std::pow(params[parameter::misaligned_bandwidth_slowdown], std::log2(16.0 / alignment)),
           &fallback_tiles, 64}};
}

} // namespace detail

bool reduces_split_k(const gemm_shape &s, precision p, const gpu_spec &gpu,
                     const model_parameters &params) {
  const double output_waves = static_cast<double>(detail::ceil_div(s.m, 64)) *
                              static_cast<double>(detail::ceil_div(s.n, 64)) *
                              static_cast<double>(s.batch_count) / gpu.sm_count;
  const bool deep = output_waves < params[parameter::deep_split_k_below_waves] &&
                    static_cast<double>(s.k) >= params[parameter::deep_split_k_min_k];
  if (s.m <= 8) // cuBLAS's skinny kernels (gemmSN, 16×16 wmma tiles) split only a deep K
    return deep;
  const bool narrow_rows = row_alignment_bytes(s, p) <= element_bytes(p);
  return deep || output_waves < (narrow_rows ? params.narrow_split_k_below_waves(p)
                                             : params.split_k_below_waves(p));
}

} // namespace roofline
