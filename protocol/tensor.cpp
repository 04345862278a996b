#include "protocol/tensor.hpp"

#include <algorithm>

#include "model/update.hpp"

namespace downpour {
namespace {

// A tensor's parts as pointers, in concatenation order.
struct span {
  float* data;
  std::size_t size;
};

std::vector<span> spans_of(const shared_tensor& t) {
  std::vector<span> out;
  if (t.parts.empty()) {
    if (t.buffer) out.push_back({t.buffer->data(), t.buffer->size()});
    return out;
  }
  for (const auto& p : t.parts) out.push_back({t.buffer->data() + p.offset, p.size});
  return out;
}

// f(a_part, b_part, n) over the longest runs that are contiguous in both;
// balanced placement gives one run.
template <class F>
void zip_parts(const shared_tensor& a, const shared_tensor& b, F f) {
  auto as = spans_of(a), bs = spans_of(b);
  std::size_t i = 0, j = 0, ai = 0, bj = 0;  // part indices and offsets into them
  while (i < as.size() && j < bs.size()) {
    const std::size_t n = std::min(as[i].size - ai, bs[j].size - bj);
    f(as[i].data + ai, bs[j].data + bj, n);
    ai += n;
    bj += n;
    if (ai == as[i].size) ++i, ai = 0;
    if (bj == bs[j].size) ++j, bj = 0;
  }
}

}  // namespace

bool sgd_into_grad(shared_tensor& grad, const shared_tensor& params, float lr) {
  bool finite = true;
  zip_parts(grad, params, [&](float* g, const float* p, std::size_t n) {
    finite = checked_sgd_into(g, p, g, n, lr) && finite;
  });
  return finite;
}

void mean_sgd_into_sum(shared_tensor& sum, const shared_tensor& params, float lr,
                       std::size_t count) {
  zip_parts(sum, params,
            [&](float* s, const float* p, std::size_t n) { mean_sgd_into(s, p, s, n, lr, count); });
}

void add_into_sum(shared_tensor& sum, const shared_tensor& grad) {
  zip_parts(sum, grad, [](float* s, const float* g, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) s[i] += g[i];
  });
}

void ema_toward(float* ema, const shared_tensor& params, float decay) {
  params.for_each_part(
      [&](const float* p, std::size_t n, std::size_t at) { update_ema(ema + at, p, n, decay); });
}

bool all_finite_parts(const shared_tensor& t) {
  bool finite = true;
  t.for_each_part(
      [&](const float* v, std::size_t n, std::size_t) { finite = finite && all_finite(v, n); });
  return finite;
}

namespace {

// f(part_data + i, out_index, count) over the parts' overlap with [from, from + n).
template <class F>
void each_overlap(const shared_tensor& t, std::size_t from, std::size_t n, F f) {
  t.for_each_part([&](const float* p, std::size_t size, std::size_t at) {
    const std::size_t lo = std::max(from, at), hi = std::min(from + n, at + size);
    if (lo < hi) f(const_cast<float*>(p) + (lo - at), lo - from, hi - lo);
  });
}

}  // namespace

void read_range(const shared_tensor& t, std::size_t from, std::size_t n, float* out) {
  each_overlap(t, from, n, [&](float* p, std::size_t i, std::size_t k) { std::copy_n(p, k, out + i); });
}

void write_range(shared_tensor& t, std::size_t from, std::size_t n, const float* in) {
  each_overlap(t, from, n, [&](float* p, std::size_t i, std::size_t k) { std::copy_n(in + i, k, p); });
}

}  // namespace downpour
