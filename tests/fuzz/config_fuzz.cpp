// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the model config importer (network_from_config: a config.json built into a
// network), then the analysis of the network and its YAML (to_network_yaml, what --emit-yaml
// writes), which must parse again into a network that lowers to the same ops, with the same
// step, precision and resident weights (a faithful round trip: abort on any difference).
//
// An input may start with a line of options, `#phase=decode batch=8 seq=4096 kv=8192 tp=2
// quant=fp8 kvdtype=fp8 last unfused train optimizer=sgd recompute=full`; the rest is the
// config.
#include "fuzz_support.hpp"

#include "roofline/analysis/lowering.hpp"
#include "roofline/input/model_config.hpp"
#include "roofline/input/network_yaml.hpp"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::int64_t number(std::string_view text) {
  std::int64_t value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

/// The options line (the config importer's options as the CLI would set them); the rest of
/// `text` is left in it.
roofline::config_options options_of(std::string_view &text) {
  roofline::config_options options;
  if (text.empty() || text.front() != '#')
    return options;
  const std::size_t end = text.find('\n');
  std::istringstream words(
      std::string(text.substr(1, end == std::string_view::npos ? end : end - 1)));
  text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
  for (std::string word; words >> word;) {
    const std::size_t equals = word.find('=');
    const std::string key = word.substr(0, equals);
    const std::string value = equals == std::string::npos ? "" : word.substr(equals + 1);
    // Sizes as the CLI takes them: positive, up to 2^63 - 1; --tp up to 1024.
    if (key == "phase" && roofline::parse_inference_phase(value))
      options.phase = *roofline::parse_inference_phase(value);
    else if (key == "batch" && number(value) > 0)
      options.batch = number(value);
    else if (key == "seq" && number(value) > 0)
      options.seq_len = number(value);
    else if (key == "kv" && number(value) > 0)
      options.kv_len = number(value);
    else if (key == "tp" && number(value) > 0 && number(value) <= 1024)
      options.tensor_parallel = static_cast<int>(number(value));
    else if (key == "quant")
      options.quantization = roofline::parse_quantization(value);
    else if (key == "kvdtype")
      options.kv_cache = roofline::parse_precision(value);
    else if (key == "last")
      options.last_logits = true;
    else if (key == "unfused")
      options.fused_attention = false;
    else if (key == "train")
      options.mode = roofline::run_mode::training;
    else if (key == "optimizer")
      options.optimizer = roofline::names_of<roofline::optimizer>().parse(value);
    else if (key == "recompute")
      options.recompute = roofline::names_of<roofline::recomputation>().parse(value);
  }
  return options;
}

/// What differs between the network a config built and the one its YAML reads back as, outside
/// the layers: "" when nothing does.
std::string different_step(const roofline::network &a, const roofline::network &b) {
  if (a.name != b.name || a.description != b.description)
    return "its name or description";
  if (a.precision != b.precision || !(a.weights == b.weights))
    return "its precision or weights";
  if (a.batch != b.batch || a.seq_len != b.seq_len || a.mode != b.mode)
    return "its batch, seq_len or mode";
  if (a.optimizer != b.optimizer || a.recompute != b.recompute)
    return "its optimizer or recomputation";
  if (a.phase != b.phase || (a.phase && a.kv_len != b.kv_len))
    return "its phase or KV length";
  if (a.resident_weight_bytes != b.resident_weight_bytes)
    return "its resident weights";
  return {};
}

/// The first op that differs (its place in the file aside), or "" when none does.
std::string different_ops(const std::vector<roofline::op> &a, const std::vector<roofline::op> &b) {
  if (a.size() != b.size())
    return "its op count";
  for (std::size_t i = 0; i < a.size(); ++i) {
    const roofline::op &x = a[i], &y = b[i];
    const bool same_gemm =
        x.gemm.has_value() == y.gemm.has_value() &&
        (!x.gemm ||
         (x.gemm->m == y.gemm->m && x.gemm->n == y.gemm->n && x.gemm->k == y.gemm->k &&
          x.gemm->batch_count == y.gemm->batch_count && x.gemm->weights == y.gemm->weights));
    if (!same_gemm || x.layer != y.layer || x.pass != y.pass || x.kind != y.kind ||
        x.precision != y.precision || x.elements != y.elements || x.count != y.count ||
        x.flops != y.flops || x.bytes != y.bytes || x.scaling.growth != y.scaling.growth ||
        x.gpus != y.gpus)
      return "op " + std::to_string(i) + " (" + x.layer + ")";
  }
  return {};
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  using namespace roofline;
  std::string_view text = fuzz::text_of(data, size);
  const config_options options = options_of(text);
  return fuzz::answer([&] {
    const network net = network_from_config(text, "config.json", options);
    fuzz::analyse(net);
    if (fuzz::layer_count(net) > fuzz::max_analysed_layers)
      return;
    const std::string yaml = to_network_yaml(net);
    std::string difference;
    try {
      const network back = parse_network(yaml, "emitted.yaml");
      difference = different_step(net, back);
      if (difference.empty())
        difference = different_ops(lower(net), lower(back));
    } catch (const input_error &e) {
      difference = std::string("it does not analyse again: ") + e.what();
    }
    if (!difference.empty()) {
      std::fprintf(stderr, "the YAML of the network a config built is not that network: %s\n%s\n",
                   difference.c_str(), yaml.c_str());
      std::abort();
    }
  });
}
