// A network of layers, joins and embedding bags wired by node: each node
// reads the outputs of nodes made before it, so the order they are made in
// is an order to run them in. A model writes the forward structure; forward
// runs the nodes in order, backward runs their backwards in reverse and sums
// the gradients of an output read by several nodes.
//
//   graph<float> g;                                      // DLRM, two fields
//   node dense_in = g.input(13);
//   node bottom = g.add("bottom", mlp13_16, dense_in);  // a sequential
//   node e1 = g.embedding(embedding_bag<float>(16, combiner::sum));
//   node e2 = g.embedding(embedding_bag<float>(16, combiner::sum));
//   node z = g.add(dot_interaction<float>(3, 16, interaction_output::first_then_pairs),
//                  {bottom, e1, e2});
//   g.add("top", top_mlp, z);                            // the last node: the output
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "model/layers/embedding_bag.hpp"
#include "model/layers/layer.hpp"
#include "model/layers/tensor.hpp"

namespace downpour::layers {

using node = std::size_t;

// One embedding bag's input for a step: the lists and the block of rows.
template <class T>
struct bag_feed {
  bag_lists lists;
  const_tensor<T> block;
};

// What a step feeds a graph: one tensor per input() and one bag_feed per
// embedding(), each in the order those nodes were made.
template <class T>
struct feed {
  std::vector<const_tensor<T>> inputs;
  std::vector<bag_feed<T>> bags;
};

template <class T>
class graph {
 public:
  // A node fed by the step: feed.inputs[k] for the k-th input made.
  node input(std::size_t width);
  // A node fed by the step: feed.bags[k] for the k-th embedding made.
  node embedding(embedding_bag<T> bag);

  // A layer on the output of from, its variables scoped "layerK" for the
  // K-th node with parameters, or by scope. Throws std::invalid_argument
  // naming the widths when from's output is not the layer's input width.
  template <class L, class = std::enable_if_t<std::is_base_of_v<layer<T>, L>>>
  node add(L l, node from) {
    return add(std::string(), std::move(l), from);
  }
  template <class L, class = std::enable_if_t<std::is_base_of_v<layer<T>, L>>>
  node add(std::string scope, L l, node from) {
    return add_layer(std::move(scope), std::make_unique<L>(std::move(l)), from);
  }
  // A join on the outputs of from, in order; throws std::invalid_argument as above.
  template <class J, class = std::enable_if_t<std::is_base_of_v<join<T>, J>>>
  node add(J j, std::vector<node> from) {
    return add_join(std::make_unique<J>(std::move(j)), std::move(from));
  }

  std::size_t width(node n) const;
  std::size_t output_width() const;  // the last node's
  // The variables of every node with parameters, in the order the nodes were made.
  std::vector<variable_spec> variables() const;
  std::size_t parameter_count() const { return parameters_; }
  void reserve(std::size_t max_batch);

  // The last node's output (valid until the next forward). Throws
  // std::invalid_argument for a feed of other counts or widths.
  const_tensor<T> forward(const feed<T>& in, const T* params, const pass& p);
  // dout: d(loss)/d(the last node's output). Writes the parameters'
  // gradient into grad (every float of parameter_count()) and each bag's
  // row gradient into row_gradients[k] (the caller's buffers, one per
  // embedding(), each the shape of that step's block). A node the output
  // does not depend on gets zero gradients.
  void backward(const_tensor<T> dout, const T* params, T* grad,
                const std::vector<tensor<T>>& row_gradients);

 private:
  enum class node_kind { input, bag, layer, join };
  struct node_state {
    node_state(node_kind k, std::size_t w, std::vector<node> sources)
        : kind(k), width(w), from(std::move(sources)) {}
    node_kind kind;
    std::size_t width;
    std::vector<node> from;
    std::size_t slot = 0;  // input, bag: which of the feed's
    std::unique_ptr<layer<T>> op;
    std::unique_ptr<join<T>> joiner;
    std::unique_ptr<embedding_bag<T>> bag;
    std::string scope;
    std::size_t offset = 0;  // of its parameters in the flat buffer
    // Whether backward reaches it: it has parameters or rows, or a node it
    // reads has.
    bool learns = false;
    std::size_t readers = 0;
    // One step's: the output, the inputs a join reads, the gradient at the
    // output and how many readers gave theirs (summed in gradient_sum when
    // there are several).
    const_tensor<T> output;
    std::vector<const_tensor<T>> inputs;
    const_tensor<T> gradient;
    std::size_t received = 0;
    batch_buffer<T> gradient_sum;
  };

  node add_layer(std::string scope, std::unique_ptr<layer<T>> op, node from);
  node add_join(std::unique_ptr<join<T>> op, std::vector<node> from);
  node append(node_state n);
  void check_source(node from, std::size_t width, const char* who) const;
  void run_forward(node_state& n, const feed<T>& in, const T* params, const pass& p);
  void run_backward(node_state& n, const T* params, T* grad,
                    const std::vector<tensor<T>>& row_gradients);
  void deliver(node to, const_tensor<T> gradient);
  void zero_gradients(const node_state& n, T* grad,
                      const std::vector<tensor<T>>& row_gradients) const;

  std::vector<node_state> nodes_;
  std::size_t inputs_ = 0, bags_ = 0, scoped_ = 0, parameters_ = 0;
};

extern template class graph<float>;
extern template class graph<double>;

}  // namespace downpour::layers
