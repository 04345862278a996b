#include "model/mlp_spec.hpp"

#include "model/layers/activations.hpp"
#include "model/layers/dense.hpp"

namespace downpour {

std::string mlp_spec::text() const {
  std::string t = std::to_string(input);
  for (std::size_t h : hidden) t += "-" + std::to_string(h);
  return t + "-" + std::to_string(classes);
}

template <class T>
layers::sequential<T> mlp_network(const mlp_spec& spec) {
  layers::sequential<T> net(spec.input);
  std::size_t in = spec.input;
  for (std::size_t h : spec.hidden) {
    net.add(layers::dense<T>(in, h));
    net.add(layers::relu<T>(h));
    in = h;
  }
  net.add(layers::dense<T>(in, spec.classes));
  return net;
}

template layers::sequential<float> mlp_network(const mlp_spec&);
template layers::sequential<double> mlp_network(const mlp_spec&);

model_layout mlp_spec::layout(const std::string& kind) const {
  return model_layout(kind, text(), mlp_network<float>(*this).variables(""));
}

}  // namespace downpour
