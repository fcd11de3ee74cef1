// SPDX-License-Identifier: Apache-2.0
#include "roofline/common/version.hpp"

namespace roofline {

std::string_view version() {
  return ROOFLINE_VERSION;
}

} // namespace roofline
