#include "runtime/tensor.hpp"

#include "model/schedule.hpp"

namespace downpour {

bool sgd_parts(float* out, const float* params, const shared_tensor& grad, float lr) {
  bool finite = true;
  grad.for_each_part([&](const float* g, std::size_t n, std::size_t at) {
    finite = checked_sgd_to(out + at, params + at, g, n, lr) && finite;
  });
  return finite;
}

bool all_finite_parts(const shared_tensor& t) {
  bool finite = true;
  t.for_each_part(
      [&](const float* v, std::size_t n, std::size_t) { finite = finite && all_finite(v, n); });
  return finite;
}

// One pass when each is in one piece (balanced placement gives a shard one
// range); the same sums either way.
void sum_parts(float* out, const shared_tensor& a, const shared_tensor& b) {
  if (a.contiguous() && b.contiguous())
    return sum_to(out, a.contiguous(), b.contiguous(), a.size());
  a.for_each_part(
      [&](const float* v, std::size_t n, std::size_t at) { std::copy(v, v + n, out + at); });
  add_parts(out, b);
}

void add_parts(float* out, const shared_tensor& t) {
  t.for_each_part([&](const float* v, std::size_t n, std::size_t at) {
    for (std::size_t i = 0; i < n; ++i) out[at + i] += v[i];
  });
}

}  // namespace downpour
