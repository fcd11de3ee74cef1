// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the network YAML loader (parse_network), then the analysis of what it accepts.
#include "fuzz_support.hpp"

#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  return roofline::fuzz::answer([&] {
    const roofline::network net =
        roofline::parse_network(roofline::fuzz::text_of(data, size), "fuzz.yaml");
    roofline::fuzz::analyse(net);
  });
}
