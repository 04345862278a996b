// The MLPs of the CTR models, from model/layers: dense layers with ReLUs,
// initialised as DLRM does (normal of stddev sqrt(2 / (in + out))).
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

#include "model/layers/activations.hpp"
#include "model/layers/dense.hpp"
#include "model/layers/sequential.hpp"

namespace downpour {

// Whether the MLP's last layer has a ReLU (DLRM's bottom MLP) or gives
// logits (a top MLP).
enum class mlp_output { relu, logits };

template <class T>
layers::dense<T> ctr_dense(std::size_t in, std::size_t out) {
  return layers::dense<T>(in, out, static_cast<float>(std::sqrt(2.0 / double(in + out))));
}

// in -> units[0] -> ... -> out, a ReLU after every hidden layer.
template <class T>
layers::sequential<T> ctr_mlp(std::size_t in, const std::vector<std::size_t>& units,
                              std::size_t out, mlp_output last) {
  layers::sequential<T> net(in);
  for (std::size_t u : units) {
    net.add(ctr_dense<T>(net.output_width(), u));
    net.add(layers::relu<T>(u));
  }
  net.add(ctr_dense<T>(net.output_width(), out));
  if (last == mlp_output::relu) net.add(layers::relu<T>(out));
  return net;
}

}  // namespace downpour
