#include "model/layers/graph.hpp"

#include <algorithm>
#include <stdexcept>

#include "model/layers/eigen_views.hpp"

namespace downpour::layers {

template <class T>
node graph<T>::append(node_state n) {
  for (node from : n.from) {
    ++nodes_[from].readers;
    n.learns = n.learns || nodes_[from].learns;
  }
  nodes_.push_back(std::move(n));
  return nodes_.size() - 1;
}

template <class T>
void graph<T>::check_source(node from, std::size_t width, const char* who) const {
  if (from >= nodes_.size())
    throw std::invalid_argument(std::string("graph: ") + who + " reads node " +
                                std::to_string(from) + ", expected one of the " +
                                std::to_string(nodes_.size()) + " made before it");
  if (nodes_[from].width != width)
    throw std::invalid_argument(std::string("graph: ") + who + " takes " + std::to_string(width) +
                                " values per example, node " + std::to_string(from) + " gives " +
                                std::to_string(nodes_[from].width));
}

template <class T>
node graph<T>::input(std::size_t width) {
  node_state n(node_kind::input, width, {});
  n.slot = inputs_++;
  return append(std::move(n));
}

template <class T>
node graph<T>::embedding(embedding_bag<T> bag) {
  node_state n(node_kind::bag, bag.output_width(), {});
  n.slot = bags_++;
  n.bag = std::make_unique<embedding_bag<T>>(std::move(bag));
  n.learns = true;
  return append(std::move(n));
}

template <class T>
node graph<T>::add_layer(std::string scope, std::unique_ptr<layer<T>> op, node from) {
  check_source(from, op->input_width(), op->kind());
  node_state n(node_kind::layer, op->output_width(), {from});
  n.offset = parameters_;
  if (op->parameter_count() > 0) {
    n.learns = true;
    n.scope = scope.empty() ? "layer" + std::to_string(scoped_ + 1) : std::move(scope);
    ++scoped_;
    parameters_ += op->parameter_count();
  }
  n.op = std::move(op);
  return append(std::move(n));
}

template <class T>
node graph<T>::add_join(std::unique_ptr<join<T>> op, std::vector<node> from) {
  const auto& widths = op->input_widths();
  if (from.size() != widths.size())
    throw std::invalid_argument(std::string("graph: ") + op->kind() + " reads " +
                                std::to_string(from.size()) + " nodes, expected " +
                                std::to_string(widths.size()));
  for (std::size_t k = 0; k < from.size(); ++k) check_source(from[k], widths[k], op->kind());
  node_state n(node_kind::join, op->output_width(), std::move(from));
  n.inputs.resize(n.from.size());
  n.joiner = std::move(op);
  return append(std::move(n));
}

template <class T>
std::size_t graph<T>::width(node n) const {
  return nodes_.at(n).width;
}

template <class T>
std::size_t graph<T>::output_width() const {
  return nodes_.empty() ? 0 : nodes_.back().width;
}

template <class T>
std::vector<variable_spec> graph<T>::variables() const {
  std::vector<variable_spec> all;
  for (const node_state& n : nodes_)
    if (n.kind == node_kind::layer && n.op->parameter_count() > 0)
      for (auto& v : n.op->variables(n.scope)) all.push_back(std::move(v));
  return all;
}

template <class T>
void graph<T>::reserve(std::size_t max_batch) {
  for (node_state& n : nodes_) {
    if (n.op) n.op->reserve(max_batch);
    if (n.joiner) n.joiner->reserve(max_batch);
    if (n.bag) n.bag->reserve(max_batch);
    n.gradient_sum = batch_buffer<T>(n.readers > 1 ? n.width : 0);
    n.gradient_sum.reserve(max_batch);
  }
}

template <class T>
void graph<T>::run_forward(node_state& n, const feed<T>& in, const T* params, const pass& p) {
  switch (n.kind) {
    case node_kind::input:
      check_width("graph", "an input", n.width, in.inputs[n.slot].cols);
      n.output = in.inputs[n.slot];
      break;
    case node_kind::bag:
      n.output = n.bag->forward(in.bags[n.slot].lists, in.bags[n.slot].block);
      break;
    case node_kind::layer:
      n.output = n.op->forward(nodes_[n.from[0]].output, params + n.offset, p);
      break;
    case node_kind::join:
      for (std::size_t k = 0; k < n.from.size(); ++k) n.inputs[k] = nodes_[n.from[k]].output;
      n.output = n.joiner->forward(n.inputs);
      break;
  }
}

template <class T>
const_tensor<T> graph<T>::forward(const feed<T>& in, const T* params, const pass& p) {
  if (nodes_.empty()) throw std::invalid_argument("graph: no nodes to run");
  if (in.inputs.size() != inputs_ || in.bags.size() != bags_)
    throw std::invalid_argument("graph: a feed of " + std::to_string(in.inputs.size()) +
                                " inputs and " + std::to_string(in.bags.size()) +
                                " bags, expected " + std::to_string(inputs_) + " and " +
                                std::to_string(bags_));
  for (node_state& n : nodes_) run_forward(n, in, params, p);
  return nodes_.back().output;
}

// The first gradient is kept as a view; with several readers they are summed
// in the node's own buffer (a reader's view lasts only until its next backward).
template <class T>
void graph<T>::deliver(node to, const_tensor<T> gradient) {
  node_state& n = nodes_[to];
  if (n.readers <= 1) {
    n.gradient = gradient;
  } else {
    const tensor<T> sum = n.gradient_sum.rows(gradient.rows, "graph");
    if (n.received == 0)
      as_matrix(sum) = as_matrix(gradient);
    else
      as_matrix(sum) += as_matrix(gradient);
    n.gradient = sum;
  }
  ++n.received;
}

template <class T>
void graph<T>::zero_gradients(const node_state& n, T* grad,
                              const std::vector<tensor<T>>& row_gradients) const {
  if (n.kind == node_kind::bag) as_matrix(row_gradients[n.slot]).setZero();
  if (n.kind == node_kind::layer)
    std::fill(grad + n.offset, grad + n.offset + n.op->parameter_count(), T(0));
}

template <class T>
void graph<T>::run_backward(node_state& n, const T* params, T* grad,
                            const std::vector<tensor<T>>& row_gradients) {
  switch (n.kind) {
    case node_kind::input:
      break;
    case node_kind::bag:
      n.bag->backward(n.gradient, row_gradients[n.slot]);
      break;
    case node_kind::layer:
      if (nodes_[n.from[0]].learns)
        deliver(n.from[0], n.op->backward(n.gradient, params + n.offset, grad + n.offset));
      else
        n.op->backward_parameters(n.gradient, params + n.offset, grad + n.offset);
      break;
    case node_kind::join: {
      const auto& gradients = n.joiner->backward(n.gradient);
      for (std::size_t k = 0; k < n.from.size(); ++k)
        if (nodes_[n.from[k]].learns) deliver(n.from[k], gradients[k]);
      break;
    }
  }
}

template <class T>
void graph<T>::backward(const_tensor<T> dout, const T* params, T* grad,
                        const std::vector<tensor<T>>& row_gradients) {
  if (row_gradients.size() != bags_)
    throw std::invalid_argument(
        "graph: " + std::to_string(row_gradients.size()) +
        " row gradients, expected one per embedding: " + std::to_string(bags_));
  for (node_state& n : nodes_) n.received = 0;
  deliver(nodes_.size() - 1, dout);
  for (std::size_t i = nodes_.size(); i-- > 0;) {
    node_state& n = nodes_[i];
    if (!n.learns) continue;
    if (n.received == 0)
      zero_gradients(n, grad, row_gradients);
    else
      run_backward(n, params, grad, row_gradients);
  }
}

template class graph<float>;
template class graph<double>;

}  // namespace downpour::layers
