// A LibTorch module with two row variables of different widths and rules,
// for the adapter's tests: "wide" (one float per row, every feature) and
// "deep" (4 floats per row, the features below deep_features), each pooled
// by torch::embedding_bag, then one linear layer over both to two logits.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "model/torch/torch_model.hpp"

namespace downpour::testing {

struct wide_deep_module : torch::nn::Module {
  wide_deep_module() : top(register_module("top", torch::nn::Linear(1 + 4, 2))) {}

  torch::Tensor forward(const torch_batch& b) {
    return top->forward(torch::cat({pooled(b.lookups[0]), pooled(b.lookups[1])}, 1));
  }
  static torch::Tensor pooled(const torch_lookup& e) {
    return std::get<0>(torch::embedding_bag(e.rows, e.slots, e.offsets, false, 0, false, e.values));
  }

  torch::nn::Linear top;
};

struct wide_deep_shape {
  std::uint64_t wide_rows = 1 << 16;
  std::uint64_t deep_rows = 1 << 12;
  std::uint64_t deep_features = 1 << 15;  // features [0, deep_features) look up "deep"
};

inline torch_model_spec wide_deep_spec(const wide_deep_shape& shape) {
  torch_model_spec spec;
  spec.kind = "torch_wide_deep";
  spec.spec = std::to_string(shape.wide_rows) + "x1+" + std::to_string(shape.deep_rows) + "x4-2";
  spec.classes = 2;
  spec.predicts = prediction::probability;
  spec.rule = [](const std::string&, const torch::Tensor&) {
    return torch_variable_rule{{init_kind::truncated_normal, 0.1f}, false};
  };
  spec.make = [] {
    auto net = std::make_shared<wide_deep_module>();
    return torch_network{net, [net](const torch_batch& b) { return net->forward(b); }};
  };
  torch_row_variable wide;
  wide.name = "wide";
  wide.rows = shape.wide_rows;
  wide.cols = 1;
  wide.update.rule = update_rule::ftrl;
  wide.update.learning_rate = 0.05f;
  torch_row_variable deep;
  deep.name = "deep";
  deep.rows = shape.deep_rows;
  deep.cols = 4;
  deep.init = {init_kind::truncated_normal, 0.05f};
  deep.update.rule = update_rule::adagrad;
  deep.end_feature = shape.deep_features;
  spec.row_variables = {wide, deep};
  return spec;
}

}  // namespace downpour::testing
