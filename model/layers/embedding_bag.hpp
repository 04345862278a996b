// An embedding bag (TensorFlow's embedding_lookup_sparse, PyTorch's
// EmbeddingBag): each example has a list of rows of one field's table, and
// its output is their sum or mean. The rows come as a block, the rows a
// worker pulled for the batch; the lists index into that block.
#pragma once

#include <cstddef>
#include <cstdint>

#include "model/layers/tensor.hpp"

namespace downpour::layers {

enum class combiner { sum, mean };

// Per-example lists, compressed: example e's rows are
// rows[offsets[e]] .. rows[offsets[e + 1] - 1], positions in the row block.
// A row may appear more than once, in one list or several.
struct bag_lists {
  std::size_t examples = 0;
  const std::uint64_t* offsets = nullptr;  // examples + 1 entries, offsets[0] == 0
  const std::uint32_t* rows = nullptr;
};

template <class T>
class embedding_bag {
 public:
  // width: the table's columns. An empty list gives a zero output (sum and
  // mean alike, as TensorFlow's and PyTorch's do).
  embedding_bag(std::size_t width, combiner how);
  const char* kind() const { return "embedding_bag"; }
  std::size_t output_width() const { return width_; }
  void reserve(std::size_t max_batch);

  // lists.examples x width. Throws std::out_of_range naming the example and
  // the position for a position outside block, std::invalid_argument for a
  // block of another width or offsets that decrease.
  const_tensor<T> forward(const bag_lists& lists, const_tensor<T> block);
  // Writes d(loss)/d(block) into row_gradient (block's shape, every value
  // written; the caller's buffer, pushed back as the rows' gradient): a row
  // used n times gets the sum of its n contributions.
  void backward(const_tensor<T> dout, tensor<T> row_gradient) const;

 private:
  T weight_of(std::size_t example) const;

  std::size_t width_;
  combiner how_;
  bag_lists lists_;  // the last forward's
  std::size_t block_rows_ = 0;
  batch_buffer<T> output_;
};

extern template class embedding_bag<float>;
extern template class embedding_bag<double>;

}  // namespace downpour::layers
