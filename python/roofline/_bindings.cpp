// SPDX-License-Identifier: Apache-2.0
// roofline._roofline: the core library from Python (issue 40 part 4). Each call returns what the
// CLI's JSON output holds, as Python objects: the same document, one home for every field
// (docs/json-schema.md). Networks come as a path (a network YAML, a model's config.json or an op
// trace) or as an op trace already in memory (a dict, roofline.capture's).
#include "roofline/analysis/pipeline.hpp"
#include "roofline/common/error.hpp"
#include "roofline/compare/compare_request.hpp"
#include "roofline/compare/comparison.hpp"
#include "roofline/input/model_config.hpp"
#include "roofline/input/network.hpp"
#include "roofline/input/op_trace.hpp"
#include "roofline/output/writers.hpp"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <sstream>
#include <string>

namespace py = pybind11;
using namespace roofline;

namespace {

/// json.loads and json.dumps, for the documents crossing the boundary.
py::object from_json(const std::string &text) {
  return py::module_::import("json").attr("loads")(text);
}

std::string to_json(const py::handle &object) {
  return py::module_::import("json").attr("dumps")(object).cast<std::string>();
}

/// A network from a path (by its kind, as the CLI reads it) or an in-memory op trace.
network network_from(const py::object &source) {
  if (py::isinstance<py::dict>(source))
    return network_of_trace(read_op_trace(to_json(source), "<trace>"), "<trace>");
  const std::string path = py::str(source);
  const bool json = path.size() > 5 && path.compare(path.size() - 5, 5, ".json") == 0;
  if (!json)
    return load_network(path);
  if (std::optional<network> traced = load_op_trace(path))
    return std::move(*traced);
  return model_config::load(path).build(config_options{});
}

/// The analysis of `source` on `gpu` ("h100", a spec file, ...), as the CLI's JSON.
py::object analyze_source(const py::object &source, const std::string &gpu,
                          const std::string &clock) {
  const network net = network_from(source);
  model_options options;
  const std::optional<clock_regime> regime = clock == "burst" ? std::optional(clock_regime::burst)
                                             : clock == "sustained"
                                                 ? std::optional(clock_regime::sustained)
                                                 : std::nullopt;
  if (!regime)
    throw input_error("unknown clock `" + clock + "`; expected sustained or burst");
  options.clock = *regime;
  const report r = run_pipeline(net, choose_gpu(gpu, options));
  std::ostringstream out;
  write_report(r, output_format::json, out);
  return from_json(out.str());
}

/// `source` on each of `gpus`, as `roofline-advise compare`'s JSON.
py::object compare_source(const py::object &source, const std::vector<std::string> &gpus) {
  compare_request request;
  request.source = network_from(source);
  request.gpus = gpus;
  std::ostringstream out;
  write_comparison(compare_gpus(request), output_format::json, out);
  return from_json(out.str());
}

} // namespace

PYBIND11_MODULE(_roofline, m) {
  m.doc() = "roofline-advise's analysis, comparison and op-trace reader (see roofline/__init__.py)";
  // The tool's input errors as ValueError, their message naming the file and line (registered
  // last: pybind11 tries the last translator first, and input_error is an error).
  py::register_exception<error>(m, "Error", PyExc_RuntimeError);
  py::register_exception<input_error>(m, "InputError", PyExc_ValueError);
  m.def("analyze", &analyze_source, py::arg("source"), py::arg("gpu") = "h100",
        py::arg("clock") = "sustained",
        "The analysis of a network YAML, config.json or op trace (a path, or a trace dict) on one "
        "GPU: the JSON document of `roofline-advise SOURCE --gpu GPU --format json`.");
  m.def("compare", &compare_source, py::arg("source"), py::arg("gpus"),
        "The same on several GPUs: `roofline-advise compare SOURCE --gpus a,b --format json`.");
  m.attr("op_trace_version") = op_trace_version;
}
