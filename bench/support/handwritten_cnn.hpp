// The cnn's forward and backward passes written out by hand over Eigen
// matrices, each chunk of images forward and straight back: an
// implementation independent of model/layers, against which the built-in
// cnn (composed from them) is checked (test_cnn) and timed (bench_cnn).
#pragma once

#include <cstddef>
#include <memory>

#include "data/batcher.hpp"
#include "model/cnn.hpp"

namespace downpour {

// basic_cnn_workspace's interface (model/cnn.hpp); a batch must fit the
// batch size it was made for.
template <class Scalar>
class handwritten_cnn {
 public:
  handwritten_cnn(const cnn_shape& shape, std::size_t batch_size, Scalar l2);
  ~handwritten_cnn();
  handwritten_cnn(handwritten_cnn&&) noexcept;
  handwritten_cnn& operator=(handwritten_cnn&&) noexcept;

  Scalar loss_and_gradient(const Scalar* params, const batch& b, Scalar* grad);
  Scalar loss(const Scalar* params, const batch& b);
  const Scalar* scores(const Scalar* params, const batch& b);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

extern template class handwritten_cnn<float>;
extern template class handwritten_cnn<double>;

}  // namespace downpour
