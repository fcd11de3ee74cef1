// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/input/network.hpp"

#include <string>

namespace roofline {

/// The network as the YAML a user could edit and analyse (docs/network-format.md); repeat
/// blocks kept, notes as comments.
std::string to_network_yaml(const network &net);

} // namespace roofline
