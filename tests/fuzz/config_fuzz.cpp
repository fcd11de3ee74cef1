// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the model config importer (network_from_config: a config.json built into a
// network), then the analysis of the network and its YAML (to_network_yaml, what --emit-yaml
// writes), which must parse again.
//
// An input may start with a line of options, `#phase=decode batch=8 seq=4096 kv=8192 tp=2
// quant=fp8 kvdtype=fp8 last unfused`; the rest is the config.
#include "fuzz_support.hpp"

#include "roofline/model_config.hpp"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

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
  }
  return options;
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
    try {
      parse_network(yaml, "emitted.yaml");
    } catch (const input_error &e) {
      std::fprintf(stderr, "the network a config built does not parse again: %s\n%s\n", e.what(),
                   yaml.c_str());
      std::abort();
    }
  });
}
