// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a comparison and a serving question share: the setups a compare_request names (each GPU
// at each tensor-parallel degree), their prices, and the network one GPU of a setup runs.

#include "roofline/compare/compare_request.hpp"

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace roofline::detail {

/// The sides of a comparison: each GPU at every degree asked for, in the order given, and which
/// is the local GPU's (measured) with its spec's name.
struct compared_sides {
  std::vector<compared_gpu> gpus;
  std::optional<std::size_t> local;
  std::string local_name = "local"; ///< the local GPU's spec, once found
};

/// Refuses prices out of range (price_in_range) and degrees that cannot be compared: a network
/// YAML sharded (it says its own all_reduce layers), the measured local GPU sharded, a degree
/// named twice or beyond the model's.
void check_prices_and_degrees(const compare_request &request);

/// Each GPU `request` names (`specs`: resolve_compared_gpus) at each of its degrees, with its own
/// parameters and this machine's host floor; the local GPU found through the request's layer.
compared_sides sides_of(const compare_request &request,
                        const std::map<std::string, gpu_spec> &specs);

/// The prices by spec name, the local GPU's too now that it is known; input_error for a GPU
/// priced twice (in any spelling).
std::map<std::string, double> prices_by_spec(const compare_request &request,
                                             const std::map<std::string, gpu_spec> &specs,
                                             const std::string &local_name);

/// USD per hour of `gpus` GPUs of `spec`: its price in `prices` (by spec name), else its spec's;
/// none where neither is known.
std::optional<double> price_per_hour(const gpu_spec &spec,
                                     const std::map<std::string, double> &prices, int gpus);

/// A setup's name: the GPU's, with its degree beside it above 1 ("h100-sxm5 ×2").
std::string setup_name(const gpu_spec &spec, int gpus);

/// USD per million of what `per_second` counts (tokens, images), at `usd_per_hour`.
double usd_per_million(double usd_per_hour, double per_second);

/// The network one of `gpus` GPUs runs at `batch`: a model config built so (its options' degree
/// and batch replaced), a network as given with its batch set.
network network_at(const network_source &source, int gpus, std::int64_t batch);

} // namespace roofline::detail
