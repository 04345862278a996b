// A LibTorch network as a Downpour model: a torch::nn::Module and a loss
// trained by the parameter servers like any built-in model (every mode,
// checkpoints, eval, inspect, export). Built with -DDOWNPOUR_WITH_TORCH=ON;
// docs/torch.md.
//
// The module's named_parameters() are the model's variables, in that order
// ("0.weight" is the variable "0/weight", a [500, 784] tensor a 500x784
// variable). Each worker holds one module whose parameters are views over
// the worker's pulled parameters and whose gradients autograd accumulates
// straight into the buffer the worker pushes: no copies either way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "model/model.hpp"

namespace downpour {

// One row variable's part of a batch, in torch::embedding_bag's terms.
struct torch_lookup {
  torch::Tensor rows;     // [touched rows, cols] float32: the variable's rows the batch pulled
  torch::Tensor slots;    // [lookups] int64: each lookup's row in `rows`
  torch::Tensor offsets;  // [n] int64: each example's first lookup in `slots`
  torch::Tensor values;   // [lookups] float32: the looked-up features' values
};

// One batch as tensors over Downpour's buffers (valid during the call).
struct torch_batch {
  torch::Tensor x;       // [n, features] float32 (dense data; undefined for sparse data)
  torch::Tensor labels;  // [n] int64
  // Sparse data: one per row variable, in torch_model_spec::row_variables' order.
  std::vector<torch_lookup> lookups;
};

// One worker's network: a module and its forward pass to class scores
// (logits, [n, classes]).
struct torch_network {
  std::shared_ptr<torch::nn::Module> module;
  std::function<torch::Tensor(const torch_batch&)> forward;
};

// A torch::nn::Sequential taking the batch's features.
torch_network sequential_network(torch::nn::Sequential net);

// How a parameter starts on the parameter servers (the module's own
// initialization is not used: every worker's module views the servers'
// values) and whether it carries the L2 term of the loss.
struct torch_variable_rule {
  initializer init;
  bool regularized = false;
};

// TensorFlow's MLP job: weights (two or more dimensions) from a truncated
// normal of stddev 0.1 with L2, everything else zeros without.
torch_variable_rule tf_job_rule(const std::string& name, const torch::Tensor& parameter);

// The loss of a batch's scores against its labels.
using torch_loss = std::function<torch::Tensor(const torch::Tensor& scores,
                                               const torch::Tensor& labels)>;

// Mean softmax cross-entropy (the built-in models' loss).
torch::Tensor softmax_cross_entropy_loss(const torch::Tensor& scores, const torch::Tensor& labels);

// A row variable held by the parameter servers (libsvm data): each feature
// index in [first_feature, end_feature) hashes into one of its rows, as for
// --model logreg and fm; a worker pulls only the rows its batch touches and
// pushes their gradient back as rows, updated by `update` (rows never
// pushed read as `init`). Features outside the range do not look it up, so
// variables over disjoint ranges are fields of their own.
struct torch_row_variable {
  std::string name;
  std::uint64_t rows = 0;
  std::size_t cols = 0;
  initializer init;
  update_spec update;  // the rule the servers apply to its rows
  regularizer reg;     // L1/L2 the servers apply to its rows
  std::uint64_t first_feature = 0;
  std::uint64_t end_feature = std::numeric_limits<std::uint64_t>::max();
};

struct torch_model_spec {
  std::string kind;  // the layout's kind and spec: what a checkpoint must match
  std::string spec;
  std::size_t classes = 0;
  // What its scores are (model::predicts): a two-class module's two logits
  // serve `probability` too (its softmax's second value is the probability).
  prediction predicts = prediction::classes;
  float l2 = 0.0f;                    // the job's --l2 (model_request::l2)
  std::function<torch_network()> make;  // called once per worker, and once for the layout
  torch_loss loss = softmax_cross_entropy_loss;
  std::function<torch_variable_rule(const std::string&, const torch::Tensor&)> rule = tf_job_rule;
  // Row variables on the parameter servers (libsvm data), in their key
  // space in this order after the module's parameters.
  std::vector<torch_row_variable> row_variables;
};

// Throws std::invalid_argument with one line for a spec without make,
// classes or kind, a module without parameters, a parameter name that is
// not a valid variable name once its dots are slashes, or a row variable
// whose feature range is empty (or that the layout refuses: a name twice,
// 0 rows or columns).
std::shared_ptr<const model> make_torch_model(torch_model_spec spec);

}  // namespace downpour
