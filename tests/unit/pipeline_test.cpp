// SPDX-License-Identifier: Apache-2.0
// The pipeline, GPU selection and comparison through a measurement layer, with a fake layer that
// "measures" every GEMM at a fixed time: no GPU needed. And write_file_atomically.
#include "roofline/analysis/measurement_layer.hpp"
#include "roofline/analysis/pipeline.hpp"
#include "roofline/common/atomic_file.hpp"
#include "roofline/common/error.hpp"
#include "roofline/compare/comparison.hpp"
#include "roofline/model/spec_catalog.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace roofline;
using namespace roofline::test;

namespace {

/// A GPU that runs every GEMM in 100 µs eager, 90 µs on the GPU: its local GPU is an H100.
class fake_layer final : public measurement_layer {
public:
  mutable int measure_calls = 0;
  mutable std::vector<std::size_t> sizes;
  mutable int failing_call = 0; ///< this call of measure() (from 1) throws, as a dead GPU would

  std::string_view version() const noexcept override { return "fake"; }
  int device_count() const noexcept override { return 1; }
  std::optional<local_gpu> find_local_gpu() const override {
    gpu_spec h100 = *spec_catalog::builtin().find("h100");
    gpu_spec datasheet = h100;
    datasheet.name = "local";
    return local_gpu{h100, datasheet, "fake local GPU", typical_host_floor()};
  }
  device_report
  describe_local_gpu(bool, bool, const std::function<void(const std::string &)> &) const override {
    throw error("not used");
  }
  measurements measure(const std::vector<op> &ops, const measure_options &options) const override {
    ++measure_calls;
    sizes.push_back(ops.size());
    if (measure_calls == failing_call)
      throw error("CUDA error cudaErrorIllegalAddress (an illegal memory access was encountered)");
    measurements result;
    for (const op &o : ops) {
      if (!o.is_gemm()) {
        result.ops.emplace_back();
        continue;
      }
      if (!result.complete || (options.stop && options.stop())) { // as roofline::measure stops
        result.complete = false;
        result.ops.push_back(not_reached("fake"));
        continue;
      }
      measurement m;
      m.engine = "fake";
      m.time_s = m.min_time_s = m.max_time_s = 100e-6;
      m.device_time_s = m.device_min_time_s = m.device_max_time_s = 90e-6;
      m.samples = 1;
      result.ops.push_back(m);
    }
    result.notes.push_back("fake run");
    return result;
  }
  calibration_result calibrate(const progress_callback &, const stop_callback &) const override {
    throw error("not used");
  }
};

/// The fake layer of one test case, handed over where it is used.
struct with_fake_layer {
  fake_layer layer;
};

const char *const head_and_relu = "name: head\nbatch: 8\nlayers:\n"
                                  "  - {name: lm_head, type: linear, in: 768, out: 50257}\n"
                                  "  - {name: act, type: relu}\n";

} // namespace

TEST_CASE("run_pipeline: analysis, advice, the ops and the padding measured, assembled") {
  with_fake_layer fake;
  const network net = parse_network(head_and_relu, "head.yaml");
  pipeline_options options;
  options.measure = measure_options{};
  options.layer = &fake.layer;
  const report r = run_pipeline(net, choose_gpu("h100"), options);
  REQUIRE(r.analysis.ops.size() == 2);
  CHECK(fake.layer.measure_calls == 2); // the ops, then the padding's pairs
  CHECK(fake.layer.sizes == std::vector<std::size_t>{2, 2});
  REQUIRE(r.measured.size() == 2);
  REQUIRE(r.measured_op(0));
  CHECK(r.measured_op(0)->time_s == 100e-6);
  CHECK(r.measured_op(1) == nullptr); // the ReLU does not run
  REQUIRE(r.measured_sums);
  CHECK(r.measured_sums->ops == 1);
  CHECK(r.measured_sums->time_s == doctest::Approx(100e-6));
  CHECK(r.measured_sums->device_time_s == doctest::Approx(90e-6));
  CHECK(r.measured_sums->predicted_time_s == doctest::Approx(r.analysis.ops[0].prediction.time_s));
  REQUIRE(r.advice);
  REQUIRE(r.advice->padding.size() == 1);
  REQUIRE(r.measured_pad(0));
  CHECK(r.measured_pad(0)->speedup() == 1);
  CHECK(std::count(r.notes.begin(), r.notes.end(), "fake run") == 1);
}

TEST_CASE("run_pipeline stopped after the first GEMM: it is kept, the next is marked, the padding "
          "is not measured, and the report is not complete") {
  with_fake_layer fake;
  const network net = parse_network("name: head\nbatch: 8\nlayers:\n"
                                    "  - {name: proj, type: linear, in: 768, out: 768}\n"
                                    "  - {name: lm_head, type: linear, in: 768, out: 50257}\n"
                                    "  - {name: act, type: relu}\n",
                                    "head.yaml");
  pipeline_options options;
  options.measure = measure_options{};
  options.layer = &fake.layer;
  int asked = 0;
  options.measure->stop = [&asked] { return ++asked > 1; }; // Ctrl-C during the first GEMM
  const report r = run_pipeline(net, choose_gpu("h100"), options);
  CHECK_FALSE(r.complete);
  CHECK(fake.layer.measure_calls == 1); // no padding run after a stop
  REQUIRE(r.measured.size() == 3);
  REQUIRE(r.measured_op(0));
  CHECK(r.measured_op(0)->status == measurement_status::measured);
  REQUIRE(r.measured_op(1));
  CHECK(r.measured_op(1)->status == measurement_status::skipped);
  CHECK(contains(r.measured_op(1)->note, "interrupted"));
  CHECK(r.measured_op(2) == nullptr);
  REQUIRE(r.advice);
  CHECK_FALSE(r.advice->padding.empty());
  CHECK(r.measured_padding.empty());

  options.measure->stop = [] { return false; };
  CHECK(run_pipeline(net, choose_gpu("h100"), options).complete);
}

TEST_CASE("run_pipeline: a padding run that cannot start keeps the ops' measurements, with a "
          "note") {
  with_fake_layer fake;
  fake.layer.failing_call = 2; // the padding's pairs
  pipeline_options options;
  options.measure = measure_options{};
  options.layer = &fake.layer;
  const report r =
      run_pipeline(parse_network(head_and_relu, "head.yaml"), choose_gpu("h100"), options);
  CHECK(fake.layer.measure_calls == 2);
  REQUIRE(r.measured_op(0));
  CHECK(r.measured_op(0)->status == measurement_status::measured);
  CHECK(r.complete);
  CHECK(r.measured_padding.empty());
  CHECK(std::any_of(r.notes.begin(), r.notes.end(), [](const std::string &note) {
    return contains(note, "padding suggestions not measured: CUDA error cudaErrorIllegalAddress");
  }));
}

TEST_CASE("run_pipeline without --measure touches no layer; with it and no layer, it says why") {
  const network net = parse_network(head_and_relu, "head.yaml");
  {
    with_fake_layer fake;
    pipeline_options options;
    options.layer = &fake.layer;
    const report r = run_pipeline(net, choose_gpu("h100"), options);
    CHECK(fake.layer.measure_calls == 0);
    CHECK(r.measured.empty());
    CHECK_FALSE(r.measured_sums);
    CHECK(r.advice);
  }
  pipeline_options options;
  options.measure = measure_options{};
  CHECK_THROWS_WITH_AS(run_pipeline(net, choose_gpu("h100"), options),
                       doctest::Contains("measuring needs the CUDA measurement layer: none was "
                                         "given"),
                       error);
  options.layer = measurement_layer_ref::none("the plugin is another version's");
  CHECK_THROWS_WITH_AS(run_pipeline(net, choose_gpu("h100"), options),
                       "measuring needs the CUDA measurement layer: the plugin is another "
                       "version's",
                       error);
  const gpu_choice fallback = choose_gpu(
      "auto", {}, measurement_layer_ref::none("ROOFLINE_MEASURE_LAYER=x does not exist"));
  CHECK(fallback.notice ==
        "ROOFLINE_MEASURE_LAYER=x does not exist; using the default spec "
        "h200-sxm (choose one with choose_gpu::request, see `spec_catalog::specs`)");
  CHECK(fallback.selection == "default: ROOFLINE_MEASURE_LAYER=x does not exist");
}

TEST_CASE("choose_gpu: a name needs no layer; auto takes the layer's local GPU") {
  {
    with_fake_layer fake;
    const gpu_choice local = choose_gpu("auto", {}, &fake.layer);
    CHECK(local.selection == "fake local GPU");
    CHECK(local.notice.empty());
    CHECK(local.model.spec().name == "h100-sxm5");
  }
  const gpu_choice named = choose_gpu("v100", {}, measurement_layer_ref::none("not used"));
  CHECK(named.selection == "choose_gpu::request v100");
  CHECK(named.model.spec().name == "v100-sxm2");
}

TEST_CASE("compare_gpus: local is measured and the others scaled; bad lists are refused") {
  with_fake_layer fake;
  compare_request request;
  request.source = parse_network(head_and_relu, "head.yaml");
  request.gpus = {"local", "h200"};
  request.layer = &fake.layer;
  const std::vector<comparison> c = compare_gpus(request);
  REQUIRE(c.size() == 1);
  REQUIRE(c[0].gpus.size() == 2);
  CHECK(c[0].gpus[0].sources[0] == time_source::measured);
  CHECK(c[0].gpus[0].op_times_s[0] == 100e-6);
  CHECK(c[0].gpus[1].sources[0] == time_source::scaled_from_measured);
  CHECK(c[0].gpus[0].sources[1] == time_source::predicted);

  request.gpus = {};
  CHECK_THROWS_AS(compare_gpus(request), input_error);
  request.gpus = {"h100", "local", "h100"};
  CHECK_THROWS_WITH_AS(compare_gpus(request), doctest::Contains("named twice"), input_error);
  request.gpus = {"local", "h100"};
  request.layer = measurement_layer_ref::none("not built");
  CHECK_THROWS_WITH_AS(compare_gpus(request),
                       "compare_request::gpus local needs the CUDA measurement layer: not built",
                       error);
}

TEST_CASE("assemble_report refuses measurements of another op list") {
  const network net = parse_network(head_and_relu, "head.yaml");
  const gpu_choice gpu = choose_gpu("h100");
  measurements one;
  one.ops.emplace_back();
  CHECK_THROWS_AS(assemble_report(analyze(net, gpu.model, gpu.selection), std::nullopt, one),
                  error);
}

TEST_CASE("write_file_atomically: whole files, replaced in place, no temporary file left") {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("roofline-atomic-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const std::filesystem::path file = dir / "sub" / "report.json";
  CHECK_THROWS_WITH_AS(write_file_atomically(file, "x"), doctest::Contains("cannot write"), error);
  std::filesystem::create_directories(file.parent_path());
  write_file_atomically(file, "first");
  write_file_atomically(file, "second");
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  CHECK(text.str() == "second");
  CHECK(std::distance(std::filesystem::directory_iterator(dir / "sub"),
                      std::filesystem::directory_iterator{}) == 1);
  std::filesystem::remove_all(dir);
}
