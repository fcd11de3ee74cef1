// SPDX-License-Identifier: Apache-2.0
// advise()'s memory-bound warning: its batch matches the per-layer table or says how it was chosen,
// and it names only what the network has (attention GEMMs, a KV cache, the memory-bound ops'
// kinds).
#include "roofline/advisor.hpp"
#include "roofline/analysis.hpp"
#include "roofline/network.hpp"
#include "roofline/perf_model.hpp"
#include "roofline/spec_catalog.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <fmt/format.h>

#include <algorithm>
#include <string>

using namespace roofline;
using namespace roofline::test;

namespace {

struct advised {
  roofline::advice advice;
  std::string memory_warning; ///< the warning that starts with the memory-bound share; "" if none
};

advised advise_example(const std::string &example, const std::string &gpu) {
  const network net = load_network(ROOFLINE_SOURCE_DIR "/examples/" + example);
  const gpu_spec *spec = spec_catalog::builtin().find(gpu);
  REQUIRE(spec != nullptr);
  const perf_model model(*spec);
  advised result{advise(net, analyze(net, model, "test"), model), ""};
  for (const std::string &warning : result.advice.warnings)
    if (contains(warning, "memory-bound at batch"))
      result.memory_warning = warning;
  return result;
}

} // namespace

TEST_CASE("the warning's batch is said to be a power of two searched, beside the per-layer range "
          "of the batch table; a decode network's KV cache is named with its length") {
  const advised decode = advise_example("llama2-7b-decode.yaml", "h100");
  const std::string &warning = decode.memory_warning;
  CAPTURE(warning);
  REQUIRE(decode.advice.network_compute_bound_batch);
  CHECK(contains(warning, fmt::format("at batch {} (powers of two searched) most of the weight "
                                      "GEMMs' time is compute-bound",
                                      *decode.advice.network_compute_bound_batch)));
  std::int64_t lowest = INT64_MAX, highest = 0;
  for (const batch_advice &b : decode.advice.batch) {
    REQUIRE(b.compute_bound_batch);
    lowest = std::min(lowest, *b.compute_bound_batch);
    highest = std::max(highest, *b.compute_bound_batch);
  }
  REQUIRE(lowest < highest);
  CHECK(contains(warning, fmt::format("per layer, from batch {} to {} (below)", lowest, highest)));
  // The power of two above the table's range, never a number between its ends.
  CHECK(*decode.advice.network_compute_bound_batch >= highest);
  CHECK(contains(warning, "attention score and context GEMMs, over a KV cache of 2048 tokens"));
}

TEST_CASE("BERT's warning names its attention GEMMs but no KV cache, and splits the memory-bound "
          "time between GEMMs and the op kinds it has") {
  const std::string warning = advise_example("bert-base.yaml", "h100").memory_warning;
  CAPTURE(warning);
  REQUIRE_FALSE(warning.empty());
  CHECK(contains(warning, "GEMMs whose batch_count grows with the batch instead of M (attention "
                          "score and context GEMMs)"));
  CHECK_FALSE(contains(warning, "KV"));
  CHECK(contains(warning, "in GEMMs that read more bytes than they have FLOPs to hide them"));
  CHECK(contains(warning, "layernorm, softmax, add and gelu ops"));
  CHECK_FALSE(contains(warning, "pool"));
}

TEST_CASE("a network without attention has no word of attention in its warning") {
  for (const char *gpu : {"v100", "h100"}) {
    CAPTURE(gpu);
    const std::string warning = advise_example("alexnet-classifier.yaml", gpu).memory_warning;
    CAPTURE(warning);
    REQUIRE_FALSE(warning.empty());
    CHECK_FALSE(contains(warning, "attention"));
    CHECK_FALSE(contains(warning, "KV"));
    CHECK(contains(warning, "relu ops"));
  }
  const std::string resnet = advise_example("resnet50.yaml", "h100").memory_warning;
  CAPTURE(resnet);
  CHECK_FALSE(contains(resnet, "attention"));
  CHECK(contains(resnet, "batchnorm, relu, maxpool, add and avgpool ops"));
}

TEST_CASE("the batch table's compute-bound batch agrees with each op's own bound: a 3×3 conv's "
          "bytes are its real tensors there too, not the im2col matrix") {
  const network net = load_network(ROOFLINE_SOURCE_DIR "/examples/resnet50.yaml");
  const perf_model model(*spec_catalog::builtin().find("h100"));
  const analysis analysed = analyze(net, model, "test");
  const advice advised = advise(net, analysed, model);
  REQUIRE(advised.batch.size() ==
          30); // conv1, 4 + 3 per stage (its first block, its repeat block), fc
  int compute_bound = 0;
  for (const batch_advice &b : advised.batch) {
    const auto entry = std::find_if(analysed.ops.begin(), analysed.ops.end(), [&](const auto &e) {
      return e.op.layer == b.layer && e.op.pass == b.pass;
    });
    REQUIRE(entry != analysed.ops.end());
    CAPTURE(b.layer);
    const bool compute_now = entry->prediction.bound == bound::compute;
    compute_bound += compute_now;
    CHECK(compute_now == (b.compute_bound_batch && *b.compute_bound_batch <= net.batch));
  }
  // layer2.1-3/conv2 (3×3, K = 1152) among them: intensity 569 against the ridge of 295.
  CHECK(compute_bound >= 10);
}
