// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/model/gpu_spec.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace roofline {

/// A GPU name as the catalog compares names: lower case, without `-`, `_` or spaces (`rtx4090`
/// finds `rtx-4090`). No two names or aliases of the catalog share one.
std::string gpu_name_key(std::string_view name);

/// The GPUs roofline-advise knows (the specs/*.yaml files, compiled into the library) and the
/// model parameters each architecture's GPUs share (specs/arch/*.yaml).
class spec_catalog {
public:
  /// The GPU analyses use when none is named and no local GPU is found.
  static constexpr std::string_view default_gpu = "h200-sxm";

  /// The built-in catalog (parsed once, on first use).
  static const spec_catalog &builtin();

  /// Resolves every spec's parameters against `architectures` (with_architecture).
  explicit spec_catalog(std::vector<gpu_spec> specs,
                        std::vector<architecture_parameters> architectures = {});

  const std::vector<gpu_spec> &specs() const noexcept { return m_specs; }

  /// The spec whose name or alias equals `name` as gpu_name_key spells both (`H100 SXM`,
  /// `h100_sxm` and `h100-sxm` alike); nullptr when none does.
  const gpu_spec *find(std::string_view name) const;

  /// A name, an alias or a path to a spec file (anything with a '/' or ending in .yaml/.yml); a
  /// file's GPU inherits its architecture's parameters as the built-in ones do.
  /// Throws input_error when nothing matches, asking "did you mean" the closest known names.
  gpu_spec resolve(std::string_view name_or_path) const;

  /// `spec` with its parameters resolved against its architecture's (with_architecture).
  gpu_spec inherit(gpu_spec spec) const;

  /// The parameters fitted for `architecture` ("hopper"); nullptr when none were.
  const architecture_parameters *architecture(std::string_view architecture) const;
  const std::vector<architecture_parameters> &architectures() const noexcept {
    return m_architectures;
  }

private:
  std::vector<gpu_spec> m_specs;
  std::vector<architecture_parameters> m_architectures;
};

/// Whether `name_or_path`, as `--gpu` takes it, names a spec file rather than a GPU: it holds a
/// '/' or ends in .yaml or .yml.
bool is_spec_path(std::string_view name_or_path);

} // namespace roofline
