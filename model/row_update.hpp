// One update of a row variable's rows by its rule (model/update_rule.hpp):
// the kernels a parameter shard runs on each row a push touches, with the
// row's optimizer state (slots) kept next to it. Each is TensorFlow 1.x's
// sparse apply of the optimizer of that name, touching only the rows pushed:
//   sgd       w -= lr * g
//   momentum  a = momentum * a + g;  w -= lr * a        (MomentumOptimizer)
//   adagrad   a += g^2;  w -= lr * g / sqrt(a)          (AdagradOptimizer)
//   adam      m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2;
//             w -= lr sqrt(1 - b2^t) / (1 - b1^t) * m / (sqrt(v) + eps)
//             (LazyAdamOptimizer: rows not pushed keep their m and v; t is
//             the update's global step + 1, as Adam's beta powers count)
//   ftrl      n' = n + g^2;  z += g - (n'^-p - n^-p) / lr * w;  n = n';
//             w = |z| <= l1 ? 0 : (sign(z) l1 - z) / (n^-p / lr + 2 l2)
//             (FtrlOptimizer's ApplyFtrl with p = lr_power, McMahan et al.
//             2013 with beta folded into the accumulator's start)
// The variable's regularizer enters once, here, for every rule: g += l1 *
// sign(w) + l2 * w before the rule's step.
#pragma once

#include <cstddef>
#include <cstdint>

#include "model/update_rule.hpp"

namespace downpour {

class row_update {
 public:
  // lr: the job's schedule at this step, used unless spec fixes its own;
  // step: the global step the update makes (0 for the first).
  row_update(const update_spec& spec, const regularizer& reg, float lr, std::int64_t step);

  // Updates one row of dim values w with its gradient g and its
  // slots_of(rule) * dim slots (each slot a block of dim floats).
  void apply(float* w, float* slots, const float* g, std::size_t dim) const;

  float learning_rate() const { return lr_; }

 private:
  void regularized(const float* w, const float* g, float* out, std::size_t dim) const;

  update_spec spec_;
  regularizer reg_;
  float lr_;
  float adam_lr_ = 0.0f;  // lr with Adam's bias correction at this step
};

// The slots of a row never updated: adagrad's and ftrl's accumulator at
// initial_accumulator, the rest 0.
void fill_initial_slots(const update_spec& spec, float* slots, std::size_t dim);

}  // namespace downpour
