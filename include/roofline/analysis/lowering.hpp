// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/input/network.hpp"
#include "roofline/model/op.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace roofline {

/// Lowers a network to its ops, in execution order: the forward pass, then (training) the backward
/// pass in reverse layer order. Throws input_error for shapes that make no sense (a size below 1,
/// named by its layer and field, as a network built in code may leave one: "layer `block/attn`:
/// `seq_len` is 0"; a conv whose kernel exceeds its padded input; an op whose size is unknown) or
/// whose counts overflow 64 bits,
/// and for a network past the limits of network.hpp (max_ops, max_layer_path_bytes), checked
/// layer by layer before each layer's ops are made: no more than max_ops are ever made.
std::vector<op> lower(const network &net);

/// Whether `o` is a forward op full recomputation runs again in the backward pass (lower() names
/// such copies `<layer>/recompute`).
bool recomputed(const op &o);

/// `gemm`, one of the ops lower() made of a network at batch `batch`, as lower() makes it at
/// batch `other`, from its batch_scaling tag alone: M or batch_count, FLOPs and bytes (and a
/// convolution's batch) for a GEMM tagged rows or instances, the routing anew for a routed one.
/// Any other op comes back as it is (a GEMM tagged none keeps its M and batch_count; a weight
/// gradient's N and bytes would change). nullopt where its sizes overflow 64 bits at `other`.
std::optional<op> at_batch(const op &gemm, std::int64_t batch, std::int64_t other);

/// The experts a mixture of experts' `tokens` reach on average when each picks `top_k` distinct
/// experts uniformly at random: E·(1 − (1 − k/E)^tokens).
double expected_experts_reached(const moe_layer &moe, std::int64_t tokens);

/// The experts of one GPU whose weights a step reads, for that GPU's `tokens`: the average of
/// the tokens every sending GPU sends it (senders_of: all, one where they hold the same) reach
/// among all the experts, its share of them (1/expert_parallel), rounded up, between 1 (top_k
/// without expert parallelism) and the experts it holds.
std::int64_t experts_reached(const moe_layer &moe, std::int64_t tokens);

/// What the ops of a network's mixtures of experts assume of the routing, one note per layer.
std::vector<std::string> routing_notes(const network &net);

} // namespace roofline
