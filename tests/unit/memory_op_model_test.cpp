// SPDX-License-Identifier: Apache-2.0
// The memory-bound ops' model (memory_op_time_s) against hand computations on an H100's basis.
#include "roofline/analysis/lowering.hpp"
#include "roofline/input/network.hpp"
#include "roofline/model/gemm_model.hpp"
#include "roofline/model/memory_op_model.hpp"
#include "roofline/model/perf_model.hpp"
#include "roofline/model/spec_catalog.hpp"

#include <doctest/doctest.h>

using namespace roofline;

namespace {

const gpu_spec &h100() {
  static const gpu_spec basis = model_basis(spec_catalog::builtin().resolve("h100"));
  return basis;
}

model_parameters with(memory_op_kind kind, double floor_s, double efficiency) {
  model_parameters p;
  p.set(memory_parameter_at(parameter::memory_floor_s, kind), floor_s);
  p.set(memory_parameter_at(parameter::memory_efficiency, kind), efficiency);
  return p;
}

} // namespace

TEST_CASE("a memory-bound kernel: its floor plus its bytes, from L2 when small, DRAM when not") {
  const model_parameters p = with(memory_op_kind::rmsnorm, 3e-6, 0.5);
  const double dram = h100().dram_bytes_per_s, l2 = l2_bytes_per_s(h100(), p);
  const double l2_size = static_cast<double>(h100().l2_bytes);
  REQUIRE(l2 > dram);
  // Bytes that fill L2 or more: DRAM's rate.
  const auto big = static_cast<std::int64_t>(4 * h100().l2_bytes);
  CHECK(memory_op_time_s(memory_op_kind::rmsnorm, big, h100(), p) ==
        doctest::Approx(3e-6 + static_cast<double>(big) / (0.5 * dram)));
  // A quarter of L2: three quarters of the way from DRAM's rate to L2's.
  const double quarter = l2_size / 4;
  CHECK(memory_op_time_s(memory_op_kind::rmsnorm, static_cast<std::int64_t>(quarter), h100(), p) ==
        doctest::Approx(3e-6 + quarter / (0.5 * (dram + 0.75 * (l2 - dram)))).epsilon(1e-6));
  // No bytes: the floor alone.
  CHECK(memory_op_time_s(memory_op_kind::rmsnorm, 0, h100(), p) == doctest::Approx(3e-6));
  // Each kind has its own: another kind's parameters are not read.
  CHECK(memory_op_time_s(memory_op_kind::relu, 0, h100(), p) ==
        doctest::Approx(p[memory_parameter_at(parameter::memory_floor_s, memory_op_kind::relu)]));
}

TEST_CASE("two kinds of one size are predicted each with its own parameters (the memo keeps them "
          "apart)") {
  // layernorm and gelu cost alike per element: the memo once gave the second layernorm gelu's time.
  const network net = parse_network("name: t\nbatch: 512\nlayers:\n"
                                    "  - {name: ln, type: layernorm, features: 4096}\n"
                                    "  - {name: ge, type: gelu, features: 4096}\n"
                                    "  - {name: ln2, type: layernorm, features: 4096}\n",
                                    "t.yaml");
  const std::vector<op> ops = lower(net);
  REQUIRE(ops.size() == 3);
  const perf_model model(spec_catalog::builtin().resolve("h100"));
  const double ln = model.predict(ops[0]).device_time_s, ge = model.predict(ops[1]).device_time_s;
  CHECK(ln != ge);
  CHECK(model.predict(ops[2]).device_time_s == ln);
}

TEST_CASE(
    "an op run unfused: its kernels one after the other, each an elementwise pass over its bytes") {
  model_parameters p = with(memory_op_kind::mul, 1.5e-6, 0.9);
  p.set(memory_parameter_at(parameter::memory_floor_s, memory_op_kind::rmsnorm), 3e-6);
  const double dram = h100().dram_bytes_per_s;
  // Elements enough that every kernel's bytes fill L2: each streams from DRAM.
  const auto elements = static_cast<std::int64_t>(h100().l2_bytes);
  const auto e = static_cast<double>(elements);
  const unfused_form &rmsnorm = *cost_of(memory_op_kind::rmsnorm).unfused;
  REQUIRE(rmsnorm.launches == 8);
  // bf16 (2 bytes) in fp32: cast 2 + 4, pow 8, mean 4, eps and rsqrt nothing, scale 8,
  // cast back 4 + 2, weight 2 + 2 bytes per element; 8 of mul's floors, the rmsnorm's own unused.
  const double bytes_per_element = 6 + 8 + 4 + 0 + 0 + 8 + 6 + 4;
  const double zero_bytes_kernels = 2 * memory_op_time_s(memory_op_kind::mul, 0, h100(), p);
  CHECK(unfused_time_s(rmsnorm, elements, 2, h100(), p) ==
        doctest::Approx(6 * 1.5e-6 + zero_bytes_kernels + bytes_per_element * e / (0.9 * dram)));
  CHECK(zero_bytes_kernels == doctest::Approx(2 * 1.5e-6));
  // The same bytes as one fused kernel's share would take less: the unfused kernels each pay
  // their floor and stream their own tensors.
  CHECK(unfused_time_s(rmsnorm, 1024, 2, h100(), p) > 8 * 1.5e-6);
}

TEST_CASE("a row-wise kernel: each row costs memory_row_s beyond its bytes, and few long rows "
          "take at least one row's bytes at memory_row_bytes_per_s") {
  model_parameters p = with(memory_op_kind::layernorm, 3e-6, 0.5);
  const auto big = static_cast<std::int64_t>(4 * h100().l2_bytes);
  const double streamed = static_cast<double>(big) / (0.5 * h100().dram_bytes_per_s);
  // No row terms (their defaults): rows change nothing.
  CHECK(memory_op_time_s(memory_op_kind::layernorm, big, h100(), p, 1000) ==
        doctest::Approx(3e-6 + streamed));
  p.set(memory_parameter_at(parameter::memory_row_s, memory_op_kind::layernorm), 1e-9);
  p.set(memory_parameter_at(parameter::memory_row_bytes_per_s, memory_op_kind::layernorm), 2e9);
  // Many short rows: the rows' cost adds to the bytes'.
  const std::int64_t narrow_rows = big / 256;
  CHECK(memory_op_time_s(memory_op_kind::layernorm, big, h100(), p, narrow_rows) ==
        doctest::Approx(3e-6 + streamed + static_cast<double>(narrow_rows) * 1e-9));
  // Eight rows of a 4-L2 tensor: one row's bytes at 2 GB/s bind (a block each, the GPU idle).
  CHECK(memory_op_time_s(memory_op_kind::layernorm, big, h100(), p, 8) ==
        doctest::Approx(3e-6 + static_cast<double>(big) / 8 / 2e9));
  // Rows unknown (0): the kernel as it was.
  CHECK(memory_op_time_s(memory_op_kind::layernorm, big, h100(), p) ==
        doctest::Approx(3e-6 + streamed));
}
