// The workspace of a classifier composed from layers (the built-in mlp,
// softmax and cnn): a sequential network to class logits, the mean softmax
// cross-entropy over the batch, and l2 * sum(w^2) / 2 over the layout's
// regularized variables. A variable's own `reg` is not in the loss: the
// runtime's update applies it, to dense and row variables alike. The layers
// do the calculus; this adds the loss and the L2 term. Eigen stays behind
// this header.
#pragma once

#include <cstddef>
#include <memory>

#include "data/batcher.hpp"
#include "model/layers/sequential.hpp"
#include "model/layout.hpp"

namespace downpour {

// Buffers for one batch size, allocated once: a training step allocates
// nothing (an evaluation chunk larger than the batch grows them once).
// Training runs in float; the same code in double checks the gradient
// against finite differences tightly (test_model, test_cnn).
template <class Scalar>
class network_workspace {
 public:
  // net's variables("") are layout's. chunk_rows: examples that go forward
  // and straight back at a time, their gradients added up (the cnn: while a
  // chunk's buffers are in cache); 0: the whole batch at once. Throws
  // std::invalid_argument for a batch of another width than net's input.
  network_workspace(layers::sequential<Scalar> net, model_layout layout, std::size_t classes,
                    std::size_t batch_size, Scalar l2, std::size_t chunk_rows);
  ~network_workspace();
  network_workspace(network_workspace&&) noexcept;
  network_workspace& operator=(network_workspace&&) noexcept;

  // Loss (mean softmax cross-entropy + the L2 term) of the batch at params;
  // writes d(loss)/d(params) into grad (every value of the layout).
  Scalar loss_and_gradient(const Scalar* params, const batch& b, Scalar* grad);
  // The same loss without the gradient.
  Scalar loss(const Scalar* params, const batch& b);
  // The logits of the batch (b.size x classes, row-major), valid until the next call.
  const Scalar* scores(const Scalar* params, const batch& b);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

extern template class network_workspace<float>;
extern template class network_workspace<double>;

}  // namespace downpour
