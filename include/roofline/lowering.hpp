// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/network.hpp"
#include "roofline/op.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace roofline {

/// Lowers a network to its ops, in execution order: the forward pass, then (training) the backward
/// pass in reverse layer order. Throws input_error for shapes that make no sense (a conv whose
/// kernel exceeds its padded input, an op whose size is unknown) or whose counts overflow 64 bits,
/// and for a network past the limits of network.hpp (max_ops, max_layer_path_bytes), checked
/// layer by layer before each layer's ops are made: no more than max_ops are ever made.
std::vector<op> lower(const network &net);

/// The experts a mixture of experts' `tokens` reach on average when each picks `top_k` distinct
/// experts uniformly at random: E·(1 − (1 − k/E)^tokens).
double expected_experts_reached(const moe_layer &moe, std::int64_t tokens);

/// That average rounded up, between top_k and the expert count: the experts whose weights a
/// step reads.
std::int64_t experts_reached(const moe_layer &moe, std::int64_t tokens);

/// What the ops of a network's mixtures of experts assume of the routing, one note per layer.
std::vector<std::string> routing_notes(const network &net);

} // namespace roofline
