// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/gpu_spec.hpp"

#include <string_view>
#include <vector>

namespace roofline {

/// The GPUs roofline-advise knows: the specs/*.yaml files, compiled into the library.
class spec_catalog {
public:
  /// The GPU analyses use when none is named and no local GPU is found.
  static constexpr std::string_view default_gpu = "h200-sxm";

  /// The built-in catalog (parsed once, on first use).
  static const spec_catalog &builtin();

  explicit spec_catalog(std::vector<gpu_spec> specs);

  const std::vector<gpu_spec> &specs() const noexcept { return m_specs; }

  /// The spec whose name or alias equals `name` (case-insensitive); nullptr when none does.
  const gpu_spec *find(std::string_view name) const;

  /// A name, an alias or a path to a spec file (anything with a '/' or ending in .yaml/.yml).
  /// Throws input_error listing the closest known names when nothing matches.
  gpu_spec resolve(std::string_view name_or_path) const;

private:
  std::vector<gpu_spec> m_specs;
};

} // namespace roofline
