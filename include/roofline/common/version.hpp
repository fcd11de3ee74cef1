// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string_view>

namespace roofline {

/// The library's version, "major.minor.patch".
std::string_view version();

} // namespace roofline
