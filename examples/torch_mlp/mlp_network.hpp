// The seed's MLP (784-500-10: a ReLU hidden layer, softmax cross-entropy,
// L2 on the weights) as a torch::nn::Sequential, for Downpour's parameter
// servers: torch_mlp.cpp trains it; Downpour's tests and bench_torch use it too.
#pragma once

#include <stdexcept>
#include <string>

#include <model/torch/torch_model.hpp>

namespace torch_mlp {

inline torch::nn::Sequential make_sequential(std::int64_t in, std::int64_t hidden,
                                             std::int64_t classes) {
  return torch::nn::Sequential(torch::nn::Linear(in, hidden), torch::nn::ReLU(),
                               torch::nn::Linear(hidden, classes));
}

// The model for a request's data: its features in, its classes out, its --l2.
inline downpour::torch_model_spec spec_for(const downpour::model_request& r,
                                           std::int64_t hidden = 500) {
  const auto in = static_cast<std::int64_t>(r.data.features());
  const auto classes = static_cast<std::int64_t>(r.classes);
  if (in == 0 || classes < 2)
    throw std::invalid_argument("torch_mlp needs features and at least 2 classes, the data has " +
                                std::to_string(in) + " and " + std::to_string(classes));
  downpour::torch_model_spec spec;
  spec.kind = "torch_mlp";
  spec.spec = std::to_string(in) + "-" + std::to_string(hidden) + "-" + std::to_string(classes);
  spec.classes = r.classes;
  spec.l2 = r.l2;
  spec.make = [=] { return downpour::sequential_network(make_sequential(in, hidden, classes)); };
  return spec;  // the default loss (softmax cross-entropy) and rule (TF's initializers, L2)
}

}  // namespace torch_mlp
