#include "model/softmax_cross_entropy.hpp"

#include <Eigen/Dense>
#include <cmath>

namespace downpour {

template <class T>
double softmax_cross_entropy(const T* logits, const std::int32_t* labels, std::size_t rows,
                             std::size_t classes, T inv_n, T* dlogits) {
  using row_map = Eigen::Map<const Eigen::Matrix<T, 1, Eigen::Dynamic>>;
  using out_map = Eigen::Map<Eigen::Matrix<T, 1, Eigen::Dynamic>>;
  const auto n = static_cast<Eigen::Index>(classes);
  double total = 0.0;
  for (std::size_t i = 0; i < rows; ++i) {
    const row_map row(logits + i * classes, n);
    const T m = row.maxCoeff();
    const T lse = m + std::log((row.array() - m).exp().sum());
    total += lse - row(labels[i]);
    if (!dlogits) continue;
    out_map d(dlogits + i * classes, n);
    d = ((row.array() - lse).exp() * inv_n).matrix();
    d(labels[i]) -= inv_n;
  }
  return total;
}

template double softmax_cross_entropy<float>(const float*, const std::int32_t*, std::size_t,
                                             std::size_t, float, float*);
template double softmax_cross_entropy<double>(const double*, const std::int32_t*, std::size_t,
                                              std::size_t, double, double*);

}  // namespace downpour
