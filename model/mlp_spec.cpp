#include "model/mlp_spec.hpp"

namespace downpour {

std::string mlp_spec::text() const {
  std::string t = std::to_string(input);
  for (std::size_t h : hidden) t += "-" + std::to_string(h);
  return t + "-" + std::to_string(classes);
}

model_layout mlp_spec::layout(const std::string& kind) const {
  std::vector<variable_spec> vars;
  std::size_t in = input;
  auto add = [&](std::size_t out) {
    const std::string layer = "layer" + std::to_string(vars.size() / 2 + 1);
    vars.push_back({layer + "/weights", in, out, {init_kind::truncated_normal, 0.1f}, true});
    vars.push_back({layer + "/biases", 1, out, {init_kind::zeros, 0.0f}, false});
    in = out;
  };
  for (std::size_t h : hidden) add(h);
  add(classes);
  return model_layout(kind, text(), vars);
}

}  // namespace downpour
