#include "model/layers/embedding_bag.hpp"

#include "model/layers/eigen_views.hpp"

namespace downpour::layers {
namespace {

void check_lists(const bag_lists& lists, std::size_t block_rows) {
  if (lists.offsets[0] != 0)
    throw std::invalid_argument("embedding_bag: the lists start at offset " +
                                std::to_string(lists.offsets[0]) + ", expected 0");
  for (std::size_t e = 0; e < lists.examples; ++e) {
    if (lists.offsets[e + 1] < lists.offsets[e])
      throw std::invalid_argument("embedding_bag: example " + std::to_string(e) +
                                  "'s list ends before it starts");
    for (std::uint64_t k = lists.offsets[e]; k < lists.offsets[e + 1]; ++k)
      if (lists.rows[k] >= block_rows)
        throw std::out_of_range("embedding_bag: example " + std::to_string(e) + " names row " +
                                std::to_string(lists.rows[k]) + " of a block of " +
                                std::to_string(block_rows) + " rows");
  }
}

}  // namespace

template <class T>
embedding_bag<T>::embedding_bag(std::size_t width, combiner how)
    : width_(width), how_(how), output_(width) {
  if (width == 0) throw std::invalid_argument("embedding_bag: a width of 0, expected at least 1");
}

template <class T>
void embedding_bag<T>::reserve(std::size_t max_batch) {
  output_.reserve(max_batch);
}

// What each of the example's rows counts for: 1, or 1 / (its list's length).
template <class T>
T embedding_bag<T>::weight_of(std::size_t example) const {
  const std::uint64_t n = lists_.offsets[example + 1] - lists_.offsets[example];
  return how_ == combiner::mean && n > 0 ? T(1) / static_cast<T>(n) : T(1);
}

template <class T>
const_tensor<T> embedding_bag<T>::forward(const bag_lists& lists, const_tensor<T> block) {
  check_width(kind(), "a row block", width_, block.cols);
  check_lists(lists, block.rows);
  lists_ = lists;
  block_rows_ = block.rows;
  const tensor<T> out = output_.rows(lists.examples, kind());
  for (std::size_t e = 0; e < lists.examples; ++e) {
    auto sum = as_row(out.row(e), width_);
    sum.setZero();
    for (std::uint64_t k = lists.offsets[e]; k < lists.offsets[e + 1]; ++k)
      sum += as_row(block.row(lists.rows[k]), width_);
    sum *= weight_of(e);
  }
  return out;
}

template <class T>
void embedding_bag<T>::backward(const_tensor<T> dout, tensor<T> row_gradient) const {
  check_width(kind(), "an output gradient", width_, dout.cols);
  check_rows(kind(), lists_.examples, dout.rows);
  check_width(kind(), "a row gradient", width_, row_gradient.cols);
  check_rows(kind(), block_rows_, row_gradient.rows);
  as_matrix(row_gradient).setZero();
  for (std::size_t e = 0; e < lists_.examples; ++e) {
    const T w = weight_of(e);
    for (std::uint64_t k = lists_.offsets[e]; k < lists_.offsets[e + 1]; ++k)
      as_row(row_gradient.row(lists_.rows[k]), width_) += w * as_row(dout.row(e), width_);
  }
}

template class embedding_bag<float>;
template class embedding_bag<double>;

}  // namespace downpour::layers
