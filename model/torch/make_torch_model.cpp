// The definitions of model/torch/torch_model.hpp: the layout of a LibTorch
// module, and the model that makes one module per worker (a file of its own
// name: the workspace it makes includes torch_model.hpp).
#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "model/torch/torch_workspace.hpp"

namespace downpour {
namespace {

// "encoder.0.weight" -> "encoder/0/weight": TensorFlow's scopes.
std::string variable_name(std::string name) {
  std::replace(name.begin(), name.end(), '.', '/');
  return name;
}

// A tensor as a [rows, cols] variable: its first dimension by the rest
// (a vector or a scalar is one row).
variable_spec variable_of(const std::string& name, const torch::Tensor& p,
                          const torch_variable_rule& rule) {
  variable_spec v;
  v.name = variable_name(name);
  const auto numel = static_cast<std::size_t>(p.numel());
  v.rows = p.dim() >= 2 ? static_cast<std::size_t>(p.size(0)) : 1;
  v.cols = v.rows == 0 ? 0 : numel / v.rows;
  v.init = rule.init;
  v.regularized = rule.regularized;
  return v;
}

model_layout layout_of(const torch_model_spec& spec) {
  const torch_network net = spec.make();
  if (!net.module || !net.forward)
    throw std::invalid_argument("torch model " + spec.kind + ": make() gave no module or forward");
  std::vector<variable_spec> vars;
  for (const auto& named : net.module->named_parameters(true))
    vars.push_back(variable_of(named.key(), named.value(), spec.rule(named.key(), named.value())));
  if (vars.empty())
    throw std::invalid_argument("torch model " + spec.kind + ": the module has no parameters");
  for (const torch_row_variable& r : spec.row_variables) {
    if (r.first_feature >= r.end_feature)
      throw std::invalid_argument("torch model " + spec.kind + ": row variable " + r.name +
                                  " looks up no features: [" + std::to_string(r.first_feature) +
                                  ", " + std::to_string(r.end_feature) + ")");
    vars.push_back({r.name, r.rows, r.cols, r.init, false, storage::rows, r.update, r.reg});
  }
  return model_layout(spec.kind, spec.spec, vars);
}

class torch_model final : public model {
 public:
  explicit torch_model(torch_model_spec spec) : spec_(std::move(spec)), layout_(layout_of(spec_)) {}
  model_layout layout() const override { return layout_; }
  std::size_t classes() const override { return spec_.classes; }
  prediction predicts() const override { return spec_.predicts; }
  std::unique_ptr<model_workspace> workspace(std::size_t /*batch_size*/) const override {
    return std::make_unique<torch_workspace>(spec_, layout_);
  }

 private:
  torch_model_spec spec_;
  model_layout layout_;
};

}  // namespace

torch_network sequential_network(torch::nn::Sequential net) {
  torch_network out;
  out.module = net.ptr();
  out.forward = [net](const torch_batch& b) mutable { return net->forward(b.x); };
  return out;
}

torch_variable_rule tf_job_rule(const std::string& /*name*/, const torch::Tensor& parameter) {
  if (parameter.dim() >= 2) return {{init_kind::truncated_normal, 0.1f}, true};
  return {{init_kind::zeros, 0.0f}, false};
}

torch::Tensor softmax_cross_entropy_loss(const torch::Tensor& scores, const torch::Tensor& labels) {
  return torch::nn::functional::cross_entropy(scores, labels);
}

// One intra-op thread: a Downpour worker is one thread of CAF's scheduler
// beside the other workers, the parameter servers and the network; OpenMP
// teams of its own would oversubscribe the cores (slower, jittery steps),
// and Downpour's parallelism is across workers. The setting is process-wide:
// ATen applies it to each thread that first runs an operator.
std::shared_ptr<const model> make_torch_model(torch_model_spec spec) {
  if (spec.kind.empty()) throw std::invalid_argument("torch model: no kind (the layout's name)");
  if (!spec.make) throw std::invalid_argument("torch model " + spec.kind + ": no make()");
  if (spec.classes == 0) throw std::invalid_argument("torch model " + spec.kind + ": 0 classes");
  if (!spec.loss || !spec.rule)
    throw std::invalid_argument("torch model " + spec.kind + ": no loss or variable rule");
  torch::set_num_threads(1);
  return std::make_shared<torch_model>(std::move(spec));
}

}  // namespace downpour
