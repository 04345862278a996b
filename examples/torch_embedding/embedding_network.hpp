// A small DLRM-like module on hashed sparse features: each example's
// features pooled from rows held by Downpour's parameter servers
// (torch::embedding_bag over the batch's pulled rows, weighted by the
// features' values), then a top MLP to two class scores. torch_embedding.cpp
// trains it; Downpour's tests use it too.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include <model/torch/torch_model.hpp>

namespace torch_embedding {

struct pooled_mlp : torch::nn::Module {
  explicit pooled_mlp(std::int64_t dim)
      : top(register_module("top", torch::nn::Sequential(torch::nn::Linear(dim, 16),
                                                         torch::nn::ReLU(),
                                                         torch::nn::Linear(16, 2)))) {}

  torch::Tensor forward(const downpour::torch_batch& b) {
    // embedding_bag's sum mode with per-feature weights: sum_j x_j rows[slot_j].
    const downpour::torch_lookup& e = b.lookups[0];  // the row variable "embedding"
    const auto pooled = torch::embedding_bag(e.rows, e.slots, e.offsets, false, 0, false, e.values);
    return top->forward(std::get<0>(pooled));
  }

  torch::nn::Sequential top;
};

// rows: how many rows the features hash into; dim: the floats of a row.
inline downpour::torch_model_spec spec_for(const downpour::model_request& r,
                                           std::uint64_t rows = std::uint64_t{1} << 18,
                                           std::int64_t dim = 8) {
  if (r.data.dims.empty() || r.data.features() != 0 || r.classes > 2)
    throw std::invalid_argument("torch_embedding needs libsvm data of 2 classes "
                                "(--data-format=libsvm), not examples of " +
                                std::to_string(r.data.features()) + " features");
  downpour::torch_model_spec spec;
  spec.kind = "torch_embedding";
  spec.spec = std::to_string(rows) + "x" + std::to_string(dim) + "-16-2";
  spec.classes = 2;
  spec.predicts = downpour::prediction::probability;  // log loss and AUC
  spec.l2 = r.l2;
  spec.make = [dim] {
    auto net = std::make_shared<pooled_mlp>(dim);
    return downpour::torch_network{net, [net](const downpour::torch_batch& b) {
                                     return net->forward(b);
                                   }};
  };
  downpour::torch_row_variable embedding;
  embedding.name = "embedding";
  embedding.rows = rows;
  embedding.cols = static_cast<std::size_t>(dim);
  embedding.init = {downpour::init_kind::truncated_normal, 0.01f};
  embedding.update.rule = r.choice.sparse_update;  // --sparse-optimizer
  spec.row_variables = {embedding};
  return spec;
}

}  // namespace torch_embedding
