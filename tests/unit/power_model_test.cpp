// SPDX-License-Identifier: Apache-2.0
// roofline/model/power_model.hpp: the power limit, by hand-computed cases.
#include "roofline/analysis/analysis.hpp"
#include "roofline/input/network.hpp"
#include "roofline/model/gemm.hpp"
#include "roofline/model/perf_model.hpp"
#include "roofline/model/power_model.hpp"
#include "roofline/model/spec_catalog.hpp"

#include <doctest/doctest.h>

using namespace roofline;

TEST_CASE("a step that stays under its limit runs at the boost clock; its energy is idle over "
          "its time plus its work's") {
  // 700 W limit, 126 W idle: 574 W of headroom. 10 ms of work of 3 J: 300 W, under it.
  const power_budget budget{700, 126};
  const power_draw d = draw_of({0.010, 0.006, 0.009, 3.0}, budget, clock_regime::sustained);
  CHECK_FALSE(d.capped);
  CHECK(d.slowdown == 1);
  CHECK(d.step_s == doctest::Approx(0.010));
  CHECK(d.energy_j == doctest::Approx(126 * 0.010 + 3.0)); // 4.26 J
  CHECK(d.average_w == doctest::Approx(426));
  CHECK_FALSE(d.above_cap);
}

TEST_CASE("sustained, a step whose work would pass the limit slows its clock-bound part until "
          "it averages the limit; past max_clock_slowdown, all its stretchable work") {
  // 10 ms, 8 of them clock-bound, 9.5 stretchable, 7.462 J of work: 574 W of headroom needs 13
  // ms. The 3 ms extra fall on the 8 clock-bound ms: ×(8 + 3)/8 = 1.375.
  const power_budget budget{700, 126};
  const power_draw d = draw_of({0.010, 0.008, 0.0095, 7.462}, budget, clock_regime::sustained);
  CHECK(d.capped);
  CHECK_FALSE(d.whole_step);
  CHECK(d.step_s == doctest::Approx(0.013));
  CHECK(d.slowdown == doctest::Approx(1.375));
  CHECK(d.average_w == doctest::Approx(700));
  CHECK(d.energy_j == doctest::Approx(126 * 0.013 + 7.462));
  CHECK(d.burst_device_s(0.009 + 0.008 * 0.375) == doctest::Approx(0.009));
  // 1 ms clock-bound of 10 would slow ×4: past 2×, the 9.5 stretchable ms take the 3 ms.
  const power_draw whole = draw_of({0.010, 0.001, 0.0095, 7.462}, budget, clock_regime::sustained);
  CHECK(whole.whole_step);
  CHECK(whole.slowdown == doctest::Approx(1 + 0.003 / 0.0095));
  CHECK(whole.step_s == doctest::Approx(0.013));
  // Nothing that can slow (all host-bound): the draw passes the limit, and says so.
  const power_draw stuck = draw_of({0.010, 0, 0, 7.462}, budget, clock_regime::sustained);
  CHECK(stuck.slowdown == 1);
  CHECK(stuck.above_cap);
  // A burst keeps the boost clock, and says it is above the limit.
  const power_draw burst = draw_of({0.010, 0.008, 0.0095, 7.462}, budget, clock_regime::burst);
  CHECK(burst.slowdown == 1);
  CHECK_FALSE(burst.capped);
  CHECK(burst.above_cap);
  CHECK(burst.average_w == doctest::Approx((126 * 0.010 + 7.462) / 0.010));
  // No limit known (a spec without tdp_w): no cap, and no idle draw either.
  CHECK(draw_of({0.010, 0.008, 0.0095, 7.462}, power_budget{}, clock_regime::sustained).slowdown ==
        1);
}

TEST_CASE("a step's collectives lend only their share of the headroom to its clock-bound work") {
  // 10 ms of which 2 are collectives, 6 clock-bound, 7.462 J of work: 13 ms at the cap. All the
  // headroom spent (share 1): as without collectives, 3 ms more, ×1.5 on the 6 clock-bound ms.
  const step_work work{0.010, 0.006, 0.008, 7.462, 0.002};
  const power_draw all = draw_of(work, power_budget{700, 126, 1}, clock_regime::sustained);
  CHECK(all.step_s == doctest::Approx(0.013));
  CHECK(all.slowdown == doctest::Approx(1.5));
  // Share 0.4: the 2 ms lend 0.8 ms of their headroom; 1.2 ms more must come from the clock:
  // 4.2 ms extra, ×1.7, and the average stays under the cap.
  const power_draw part = draw_of(work, power_budget{700, 126, 0.4}, clock_regime::sustained);
  CHECK(part.capped);
  CHECK(part.step_s == doctest::Approx(0.0142));
  CHECK(part.slowdown == doctest::Approx(1 + 0.0042 / 0.006));
  CHECK(part.energy_j == doctest::Approx(126 * 0.0142 + 7.462));
  CHECK(part.average_w < 700);
  CHECK_FALSE(part.above_cap);
  // Under the cap even without their headroom: the collectives change nothing.
  const step_work light{0.010, 0.006, 0.008, 3.0, 0.002};
  CHECK(draw_of(light, power_budget{700, 126, 0.4}, clock_regime::sustained).slowdown == 1);
}

TEST_CASE("an op's dynamic energy: its FLOPs at its unit's energy per FLOP, its DRAM bytes at "
          "DRAM's") {
  const gpu_spec &h200 = *spec_catalog::builtin().find("h200");
  model_parameters p;
  p.set(parameter_at(parameter::energy_per_flop_pj, precision::bf16), 0.8);
  p.set(parameter_at(parameter::energy_per_flop_pj, precision::fp32), 10);
  p.set(parameter::dram_energy_per_byte_pj, 120);
  const op gemm = make_gemm_op("g", {4096, 4096, 4096, 1}, precision::bf16);
  // 2·4096³ FLOPs × 0.8 pJ + (3 · 4096² · 2) bytes × 120 pJ.
  p.set(parameter::stall_power_share, 0);
  CHECK(dynamic_energy_j(gemm, 0, h200, p) ==
        doctest::Approx(2.0 * 4096 * 4096 * 4096 * 0.8e-12 + 3.0 * 4096 * 4096 * 2 * 120e-12));
  op relu;
  relu.kind = "relu";
  relu.flops = 1000;
  relu.bytes = 8000;
  // A memory-bound op runs on the CUDA cores: fp32's energy per FLOP.
  CHECK(dynamic_energy_j(relu, 0, h200, p) == doctest::Approx(1000 * 10e-12 + 8000 * 120e-12));
  // Past its roofline time it stalls: a third of the 700 W limit over 2 µs more.
  p.set(parameter::stall_power_share, 1.0 / 3);
  CHECK(dynamic_energy_j(relu, 2e-6, h200, p) ==
        doctest::Approx(1000 * 10e-12 + 8000 * 120e-12 + 700.0 / 3 * 2e-6));
  // Never a negative stall (an op at its bound), and none for an all-reduce's bytes.
  CHECK(dynamic_energy_j(relu, -1e-6, h200, p) == doctest::Approx(1000 * 10e-12 + 8000 * 120e-12));
  op all_reduce = relu;
  all_reduce.kind = "all_reduce";
  all_reduce.gpus = 2;
  CHECK(dynamic_energy_j(all_reduce, 5e-6, h200, p) == doctest::Approx(8000 * 120e-12));
}

TEST_CASE("unfitted energies come from the datasheet: a unit at its dense peak, DRAM at its "
          "bandwidth, draws the limit") {
  const gpu_spec &b200 = *spec_catalog::builtin().find("b200");
  const model_parameters &p = b200.parameters;
  REQUIRE_FALSE(energy_fitted(p)); // Blackwell has no power fit
  const power_budget budget = power_budget_of(b200, p);
  const double headroom_w = budget.cap_w - budget.idle_w;
  CHECK(energy_per_flop_j(precision::bf16, b200, p) * b200.peak_flop_per_s(precision::bf16) ==
        doctest::Approx(headroom_w));
  CHECK(energy_per_dram_byte_j(b200, p) * b200.dram_bytes_per_s == doctest::Approx(headroom_w));
  CHECK(energy_fitted(spec_catalog::builtin().find("h200")->parameters));
}

TEST_CASE("an analysis holds its step to the limit: the compute-bound GEMM slows, the report's "
          "time and energy follow, and a burst keeps the boost clock") {
  const network net = parse_network("name: big\nprecision: bf16\nlayers:\n"
                                    "  - {name: mm, type: matmul, m: 8192, n: 8192, k: 8192}\n",
                                    "big.yaml");
  const gpu_spec &h200 = *spec_catalog::builtin().find("h200");
  model_options burst_options;
  burst_options.clock = clock_regime::burst;
  const analysis burst = analyze(net, perf_model(h200, burst_options), "test");
  const analysis held = analyze(net, perf_model(h200), "test");
  const double burst_s = burst.ops.front().prediction.time_s;
  const double held_s = held.ops.front().prediction.time_s;
  CHECK(burst.power.regime == clock_regime::burst);
  CHECK(burst.power.above_cap); // 1.1 TFLOP in ~1.4 ms passes 700 W
  REQUIRE(held.power.capped);
  CHECK(held_s == doctest::Approx(burst_s * held.power.slowdown));
  CHECK(held.totals.time_s == doctest::Approx(held_s));
  // At the limit: the step's energy is the limit over its time.
  CHECK(held.power.energy_j == doctest::Approx(700 * held_s));
  CHECK(held.ops.front().energy_j == doctest::Approx(held.power.energy_j));
  // The dynamic energy is the same either way; only the idle draw's time differs.
  CHECK(burst.power.energy_j - held.power.energy_j ==
        doctest::Approx(held.budget.idle_w * (burst_s - held_s)));
}
