// SPDX-License-Identifier: Apache-2.0
#pragma once
// A file of requests to serve (a dataset's length spread, a trace of arrivals): CSV, one request a
// line, a header naming its columns `arrival_s,prompt_tokens,output_tokens` (arrival_s may be left
// out: every request then arrives at 0, as an offline benchmark sends them). `#` starts a comment.

#include "roofline/compare/serving_simulation.hpp"

#include <string>
#include <vector>

namespace roofline {

/// The requests of the file at `path`, in its order. Throws input_error naming the file, the line
/// and what was expected for a missing file, an unknown or missing column, a field that is not a
/// whole number of tokens (or, for arrival_s, a time of 0 or more), or a file of no request.
std::vector<simulated_request> load_request_file(const std::string &path);

/// Their mean prompt and output lengths, rounded up: the lengths a steady state answers at.
std::pair<std::int64_t, std::int64_t> mean_lengths(const std::vector<simulated_request> &requests);

} // namespace roofline
