// SPDX-License-Identifier: Apache-2.0
#pragma once
// roofline::core in one include: every public header of include/roofline/'s rooms, in layer
// order. Not roofline/cuda/ (the measurement layer's), the rooms' detail/ (what only the CUDA
// layer and bench use) nor the plugin ABI (analysis/plugin_abi.hpp). An embedder may include the
// few it needs instead; each stands alone (tests/CMakeLists.txt compiles every one by itself).

#include "roofline/common/atomic_file.hpp"
#include "roofline/common/enum_table.hpp"
#include "roofline/common/error.hpp"
#include "roofline/common/median.hpp"
#include "roofline/common/printable_text.hpp"
#include "roofline/common/version.hpp"

#include "roofline/model/accuracy.hpp"
#include "roofline/model/attention_model.hpp"
#include "roofline/model/attention_shape.hpp"
#include "roofline/model/ceilings.hpp"
#include "roofline/model/conv_model.hpp"
#include "roofline/model/conv_shape.hpp"
#include "roofline/model/device_description.hpp"
#include "roofline/model/device_report.hpp"
#include "roofline/model/gemm.hpp"
#include "roofline/model/gemm_model.hpp"
#include "roofline/model/gpu_spec.hpp"
#include "roofline/model/host_floor.hpp"
#include "roofline/model/interconnect.hpp"
#include "roofline/model/kernel_family.hpp"
#include "roofline/model/memory_op.hpp"
#include "roofline/model/memory_op_model.hpp"
#include "roofline/model/model_fit.hpp"
#include "roofline/model/model_parameters.hpp"
#include "roofline/model/op.hpp"
#include "roofline/model/pass.hpp"
#include "roofline/model/perf_model.hpp"
#include "roofline/model/power_model.hpp"
#include "roofline/model/precision.hpp"
#include "roofline/model/spec_catalog.hpp"

#include "roofline/input/model_config.hpp"
#include "roofline/input/network.hpp"
#include "roofline/input/network_yaml.hpp"
#include "roofline/input/op_trace.hpp"

#include "roofline/analysis/advice_thresholds.hpp"
#include "roofline/analysis/advisor.hpp"
#include "roofline/analysis/analysis.hpp"
#include "roofline/analysis/batch_advice.hpp"
#include "roofline/analysis/lowering.hpp"
#include "roofline/analysis/measurement.hpp"
#include "roofline/analysis/measurement_layer.hpp"
#include "roofline/analysis/memory_fit.hpp"
#include "roofline/analysis/padding_advice.hpp"
#include "roofline/analysis/pipeline.hpp"
#include "roofline/analysis/report.hpp"

#include "roofline/compare/compare_request.hpp"
#include "roofline/compare/comparison.hpp"
#include "roofline/compare/request_file.hpp"
#include "roofline/compare/serving.hpp"
#include "roofline/compare/serving_simulation.hpp"

#include "roofline/output/output_format.hpp"
#include "roofline/output/writers.hpp"
