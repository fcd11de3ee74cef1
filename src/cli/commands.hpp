// SPDX-License-Identifier: Apache-2.0
#pragma once

// The commands of roofline-advise, each from the requests the command line gives to its output.
// Each returns the exit status: 0, or cli::exit_interrupted when Ctrl-C stopped a measurement.

#include "output.hpp"
#include "requests.hpp"

#include "roofline/input/network.hpp"

#include <optional>
#include <string>

namespace roofline::cli {

/// What `--gpu` and `--sparse` say.
struct model_choice {
  std::string gpu = "auto";
  bool sparse = false;
  std::optional<double> memory_reserve_gb; ///< --memory-reserve; unset: the default share
  std::string clock = "sustained";         ///< --clock: sustained or burst
  std::string cluster; ///< --cluster: its GPU, and the network that joins its nodes
  std::optional<node_network> network; ///< the cluster's network, once with_cluster read it
};

/// `model` with its --cluster read: the cluster's GPU as --gpu, and its network. input_error
/// for an unknown cluster, or a --gpu given beside it.
model_choice with_cluster(model_choice model);

/// The analysis of `net` (a network, or one GEMM), measured where `measuring` asks (through the
/// measurement plugin; Ctrl-C stops it after the op in flight), written as `output` says.
int analyse(const network &net, const model_choice &model, const measure_choice &measuring,
            const output_choice &output);

/// `compare`: the network on every GPU, degree and batch; with --emit-yaml, the baseline's network.
int compare(const compare_choice &choice, const config_choice &config, const output_choice &output);

/// `train`: the layouts of a training run on a cluster, ranked.
int train(const train_choice &choice, const output_choice &output);

/// `device`: the local GPU, its roofs and (with `measure`) its measured ceilings.
int describe_device(bool measure, bool refresh, const output_choice &output);

/// `calibrate`: the sweep timed on the local GPU and the model fitted to it, saved.
int calibrate();

/// `specs`: the GPUs the catalog knows.
int list_specs(const output_choice &output);

} // namespace roofline::cli
