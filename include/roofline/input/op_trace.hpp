// SPDX-License-Identifier: Apache-2.0
#pragma once
// A captured program (docs/op-trace-format.md): the aten ops a PyTorch program dispatched, as
// python/roofline/capture.py records them, priced op by op and its memory walked from its
// tensors' lifetimes.

#include "roofline/model/op.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace roofline {

/// The op-trace format version this reader knows.
inline constexpr int op_trace_version = 1;

/// What a captured program's storages held at its peak, in bytes.
struct traced_memory {
  double peak_bytes = 0;
  double parameter_bytes = 0; ///< the model's parameters and buffers
  double gradient_bytes = 0;
  double optimizer_bytes = 0;
  /// Everything else: inputs, activations kept for the backward pass, autocast's copies,
  /// temporaries.
  double activation_bytes = 0;
};

/// A captured program as the tool prices it.
struct traced_program {
  std::string name; ///< what was captured, in words
  /// The priced ops in order of first appearance; ops of the same aten op, shapes and phase are
  /// one op run `count` times.
  std::vector<op> ops;
  /// The aten ops no cost model prices, with how many times each ran, most frequent first.
  std::vector<std::pair<std::string, std::int64_t>> unpriced;
  std::int64_t aten_ops = 0;   ///< every op of the trace
  std::int64_t free_ops = 0;   ///< views and metadata: no kernel
  std::int64_t priced_ops = 0; ///< the runs `ops` counts
  traced_memory memory;
  bool training = false; ///< it has a backward phase
  std::int64_t batch = 0; ///< the batch it was captured at (`captured.batch`); 0: not known
  std::string captured;  ///< "torch 2.11.0 on meta, 2026-11-29": where it was captured
};

/// Whether `text` (a .json file's) is an op trace rather than a model config: its `format`.
bool is_op_trace(std::string_view text);

/// Reads an op trace; `origin` names it in messages. Throws input_error (naming the file, the
/// line and what was expected) on a malformed trace or an unknown version.
traced_program read_op_trace(std::string_view text, const std::string &origin);

/// What a trace's coverage is, in words, for the report's notes: "captured program (torch 2.11.0
/// on meta, 2026-11-29): 5,210 aten ops, 2,015 priced, 3,190 views (no kernel), 5 not priced:
/// aten::foo ×3, aten::bar ×2".
std::string coverage_note(const traced_program &program);

} // namespace roofline
