// Eigen's view of the layers' tensors, for the layers' .cpp files only: Eigen
// stays behind the layer headers, as it does behind model/mlp.hpp.
#pragma once

#include <Eigen/Dense>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "model/layers/tensor.hpp"

namespace downpour::layers {

template <class T>
using matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using row_vector = Eigen::Matrix<T, 1, Eigen::Dynamic>;

// The tensor as an Eigen matrix map, read-only when the tensor is.
template <class T>
auto as_matrix(tensor<T> t) {
  using plain = std::remove_const_t<T>;
  using shape = std::conditional_t<std::is_const_v<T>, const matrix<plain>, matrix<plain>>;
  return Eigen::Map<shape>(t.data, static_cast<Eigen::Index>(t.rows),
                           static_cast<Eigen::Index>(t.cols));
}

// n values at data as one row.
template <class T>
auto as_row(T* data, std::size_t n) {
  using plain = std::remove_const_t<T>;
  using shape = std::conditional_t<std::is_const_v<T>, const row_vector<plain>, row_vector<plain>>;
  return Eigen::Map<shape>(data, static_cast<Eigen::Index>(n));
}

// Column sums as row-by-row element-wise adds: Eigen's colwise().sum() peels
// a few columns off by buffer alignment and reduces those in another order,
// which would make a bias gradient depend on where the gradient buffer lives
// (the built-in mlp sums the same way, so the two agree bit for bit).
template <class T>
void sum_rows_into(const_tensor<T> m, T* out) {
  auto sums = as_row(out, m.cols);
  sums.setZero();
  for (std::size_t i = 0; i < m.rows; ++i) sums += as_row(m.row(i), m.cols);
}

// Throws std::invalid_argument naming who when a tensor's width is not the
// expected one (a layer wired to the wrong input).
inline void check_width(const char* who, const char* what, std::size_t expected, std::size_t got) {
  if (expected != got)
    throw std::invalid_argument(std::string(who) + ": " + what + " of " + std::to_string(got) +
                                " values per example, expected " + std::to_string(expected));
}

// Throws std::invalid_argument naming who when a backward's gradient has
// another number of rows than the forward before it had.
inline void check_rows(const char* who, std::size_t forward_rows, std::size_t got) {
  if (forward_rows != got)
    throw std::invalid_argument(std::string(who) + ": a gradient of " + std::to_string(got) +
                                " rows after a forward of " + std::to_string(forward_rows));
}

}  // namespace downpour::layers
