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
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <torch/torch.h>

#include "model/model.hpp"

namespace downpour {

// One batch as tensors over Downpour's buffers (valid during the call).
struct torch_batch {
  torch::Tensor x;       // [n, features] float32 (dense data; undefined for sparse data)
  torch::Tensor labels;  // [n] int64
  // With a row variable (sparse data), what torch::embedding_bag takes:
  torch::Tensor rows;     // [touched rows, cols] float32: the batch's pulled rows
  torch::Tensor slots;    // [features of the batch] int64: each feature's row in `rows`
  torch::Tensor offsets;  // [n] int64: each example's first feature in `slots`
  torch::Tensor values;   // [features of the batch] float32: the features' values
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
  // A row variable on the parameter servers (libsvm data): each feature
  // index hashes into one of its rows, as for --model logreg and fm.
  std::optional<row_variable_info> rows;
};

// Throws std::invalid_argument with one line for a spec without make,
// classes or kind, a module without parameters, or a parameter name that
// is not a valid variable name once its dots are slashes.
std::shared_ptr<const model> make_torch_model(torch_model_spec spec);

}  // namespace downpour
