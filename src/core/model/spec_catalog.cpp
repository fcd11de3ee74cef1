// SPDX-License-Identifier: Apache-2.0
#include "roofline/model/spec_catalog.hpp"

#include "builtin_specs.hpp"
#include "roofline/common/error.hpp"
#include "suggest.hpp"
#include "text_format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace roofline {

const spec_catalog &spec_catalog::builtin() {
  static const spec_catalog catalog = [] {
    std::vector<gpu_spec> specs;
    std::vector<architecture_parameters> architectures;
    for (const detail::embedded_spec &embedded : detail::builtin_spec_texts()) {
      const std::string file(embedded.file);
      if (file.rfind("specs/arch/", 0) == 0)
        architectures.push_back(parse_architecture_parameters(embedded.text, file));
      else
        specs.push_back(parse_gpu_spec(embedded.text, file));
    }
    return spec_catalog(std::move(specs), std::move(architectures));
  }();
  return catalog;
}

namespace {

/// `architectures` with each one that inherits holding its base's values first, its own on top.
std::vector<architecture_parameters>
resolve_inheritance(std::vector<architecture_parameters> architectures) {
  const std::vector<architecture_parameters> own = architectures;
  for (auto a = own.begin(); a != own.end(); ++a)
    for (auto b = own.begin(); b != a; ++b)
      if (b->architecture == a->architecture)
        throw input_error(a->where, fmt::format("architecture `{}` a second time (first in {}): "
                                                "give each architecture one file",
                                                a->architecture,
                                                b->where.file.empty() ? std::string("code")
                                                                      : b->where.to_string()));
  for (architecture_parameters &a : architectures) {
    if (a.inherits.empty())
      continue;
    if (a.inherits == a.architecture)
      throw input_error(a.inherits_where, fmt::format("architecture `{}`: `inherits: {}`: an "
                                                      "architecture cannot inherit itself",
                                                      a.architecture, a.inherits));
    const auto base = std::find_if(own.begin(), own.end(), [&](const architecture_parameters &b) {
      return b.architecture == a.inherits;
    });
    if (base == own.end())
      throw input_error(a.inherits_where,
                        fmt::format("architecture `{}`: `inherits: {}`: no architecture of that "
                                    "name",
                                    a.architecture, a.inherits));
    // One level deep: a base that inherits in turn (a chain, or a loop a → b → a) is refused.
    if (!base->inherits.empty())
      throw input_error(a.inherits_where,
                        fmt::format("architecture `{}`: `inherits: {}`, which inherits {} in "
                                    "turn: name an architecture that inherits nothing (one "
                                    "level deep)",
                                    a.architecture, a.inherits, base->inherits));
    std::vector<std::pair<parameter, double>> values = base->parameters.values;
    values.insert(values.end(), a.parameters.values.begin(), a.parameters.values.end());
    a.parameters.values = std::move(values);
    for (const auto &[c, band] : base->accuracy.by_class)
      a.accuracy.by_class.emplace(c, band); // its own, where it has one, stays

    a.parameters.origin += "; what it did not measure as the " + a.inherits + " architecture's";
  }
  return architectures;
}

} // namespace

spec_catalog::spec_catalog(std::vector<gpu_spec> specs,
                           std::vector<architecture_parameters> architectures)
    : m_specs(std::move(specs)), m_architectures(resolve_inheritance(std::move(architectures))) {
  std::sort(m_specs.begin(), m_specs.end(),
            [](const gpu_spec &a, const gpu_spec &b) { return a.name < b.name; });
  for (gpu_spec &spec : m_specs)
    spec = inherit(std::move(spec));
}

gpu_spec spec_catalog::inherit(gpu_spec spec) const {
  const architecture_parameters *shared = architecture(spec.architecture);
  return with_architecture(std::move(spec), shared);
}

const architecture_parameters *spec_catalog::architecture(std::string_view name) const {
  for (const architecture_parameters &a : m_architectures)
    if (a.architecture == name)
      return &a;
  return nullptr;
}

std::string gpu_name_key(std::string_view name) {
  std::string key;
  for (char c : detail::to_lower(name))
    if (c != '-' && c != '_' && c != ' ')
      key += c;
  return key;
}

const gpu_spec *spec_catalog::find(std::string_view name) const {
  const std::string wanted = gpu_name_key(name);
  for (const gpu_spec &spec : m_specs) {
    // Its name, or its display name as a report prints it ("NVIDIA H100 SXM5 80GB").
    if (gpu_name_key(spec.name) == wanted || gpu_name_key(spec.display_name) == wanted)
      return &spec;
    for (const std::string &alias : spec.aliases)
      if (gpu_name_key(alias) == wanted)
        return &spec;
  }
  return nullptr;
}

bool is_spec_path(std::string_view name_or_path) {
  const std::string text(name_or_path);
  return text.find('/') != std::string::npos ||
         (text.size() > 5 && (text.rfind(".yaml") == text.size() - 5)) ||
         (text.size() > 4 && (text.rfind(".yml") == text.size() - 4));
}

namespace {

/// The model number a GPU's name carries: its first run of digits, with the letters just before
/// it ("v100-16gb": v 100; "RTX-4090": rtx 4090; "3090": 3090; "hopper": none).
struct model_number {
  std::string letters, digits;
};

model_number model_number_of(std::string_view name) {
  const std::string lower = detail::to_lower(name);
  const std::size_t first = lower.find_first_of("0123456789");
  if (first == std::string::npos)
    return {};
  std::size_t letters_end = first;
  while (letters_end > 0 &&
         std::string_view("-_ ").find(lower[letters_end - 1]) != std::string_view::npos)
    --letters_end;
  std::size_t letters = letters_end;
  while (letters > 0 && std::isalpha(static_cast<unsigned char>(lower[letters - 1])))
    --letters;
  const std::size_t end = lower.find_first_not_of("0123456789", first);
  return {lower.substr(letters, letters_end - letters), lower.substr(first, end - first)};
}

/// Whether `typed` could be a typo of `known`'s model number: with letters, the same letters and
/// digits at most one edit apart that begin alike (`h2000` for h200, not h100: another
/// generation); digits alone must be equal (`3090` is no B300 and no RTX 4090).
bool same_model(const model_number &typed, const model_number &known) {
  if (typed.letters.empty())
    return typed.digits == known.digits;
  return typed.letters == known.letters && typed.digits.front() == known.digits.front() &&
         detail::edit_distance(typed.digits, known.digits) <= 1;
}

/// The specs a mistyped `wanted` most likely meant, by name. A name with a model number is a
/// typo only of specs of the same model (same_model): `v100-16gb` is no A100, however few edits
/// apart; the closest (by any of its names) first.
std::vector<std::string> likely_meant(const std::string &wanted,
                                      const std::vector<gpu_spec> &specs) {
  if (wanted.size() > 64) // no GPU's name is this long; edit distances to it would cost seconds
    return {};
  const model_number number = model_number_of(wanted);
  std::vector<std::string> names;
  std::vector<std::pair<std::size_t, std::string>> same; // (distance, spec name)
  for (const gpu_spec &spec : specs) {
    std::vector<std::string> spellings{spec.name};
    spellings.insert(spellings.end(), spec.aliases.begin(), spec.aliases.end());
    names.insert(names.end(), spellings.begin(), spellings.end());
    std::optional<std::size_t> nearest;
    for (const std::string &spelling : spellings) {
      const model_number other = model_number_of(spelling);
      if (!number.digits.empty() && !other.digits.empty() && same_model(number, other))
        nearest = std::min(nearest.value_or(SIZE_MAX),
                           detail::edit_distance(gpu_name_key(wanted), gpu_name_key(spelling)));
    }
    if (nearest)
      same.emplace_back(*nearest, spec.name);
  }
  if (number.digits.empty())
    return detail::closest_names(wanted, names);
  std::stable_sort(same.begin(), same.end(),
                   [](const auto &a, const auto &b) { return a.first < b.first; });
  std::vector<std::string> best;
  for (std::size_t i = 0; i < same.size() && i < 3; ++i)
    best.push_back(same[i].second);
  return best;
}

} // namespace

gpu_spec spec_catalog::resolve(std::string_view name_or_path) const {
  const std::string text(name_or_path);
  if (is_spec_path(text))
    return inherit(load_gpu_spec(text));
  if (const gpu_spec *spec = find(text))
    return *spec;
  std::vector<std::string> names;
  for (const gpu_spec &spec : m_specs) {
    names.push_back(spec.name);
    names.insert(names.end(), spec.aliases.begin(), spec.aliases.end());
  }
  const std::vector<std::string> meant = likely_meant(text, m_specs);
  const std::string close =
      meant.empty() ? std::string{} : " (did you mean " + detail::quoted_list(meant) + "?)";
  std::string message = "unknown GPU `" + detail::shown_value(text) + "`";
  message += close.empty() ? "; known GPUs: " + detail::quoted_list(names, " and ") : close;
  message += "; `spec_catalog::specs` lists them, and a path to a spec file also works";
  throw input_error(message);
}

} // namespace roofline
