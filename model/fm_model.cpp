// --model fm: a factorization machine over hashed features (Rendle 2010),
// its pairwise term in O(nonzeros x k) by the identity
// sum_{j<l} <v_j, v_l> x_j x_l = 1/2 sum_f ((sum_j v_jf x_j)^2 - sum_j v_jf^2 x_j^2).
#include <stdexcept>
#include <string>

#include "model/sparse_metrics.hpp"
#include "model/sparse_models.hpp"

namespace downpour {
namespace {

constexpr float kFactorStddev = 0.01f;

class fm_workspace final : public model_workspace {
 public:
  fm_workspace(const sparse_logreg& hashing, std::size_t factors, std::size_t batch_size)
      : batch_(hashing),
        k_(factors),
        sums_(batch_size * factors),
        logits_(batch_size),
        scores_(2 * batch_size) {}

  float loss_and_gradient(const float*, const batch&, float*) override { refuse(); }
  float loss(const float*, const batch&) override { refuse(); }
  const float* scores(const float*, const batch&) override { refuse(); }

  const std::vector<std::uint64_t>& touched_rows(const batch& b) override {
    return batch_.load(b).keys();
  }

  float loss_and_gradient(const float* params, const float* rows, const batch& b, float* grad,
                          float* row_grad) override;

  const float* scores(const float* params, const float* rows, const batch& b) override {
    forward(params[0], rows, b);
    for (std::size_t i = 0; i < b.size; ++i) {
      scores_[2 * i] = 0.0f;
      scores_[2 * i + 1] = static_cast<float>(logits_[i]);
    }
    return scores_.data();
  }

 private:
  [[noreturn]] static void refuse() {
    throw std::logic_error("fm: a batch's loss and scores need its rows (the calls with rows)");
  }
  void forward(float bias, const float* rows, const batch& b);

  hashed_batch batch_;
  std::size_t k_;
  std::vector<double> sums_;    // per example: sum_j v_jf x_j for each factor f
  std::vector<double> logits_;  // per example
  std::vector<float> scores_;
};

// Each example's logit and factor sums, in double: a row's floats are read
// once per feature, so the order of the sums is the features'.
void fm_workspace::forward(float bias, const float* rows, const batch& b) {
  const logreg_batch& gathered = batch_.load(b);
  const sparse_examples& e = batch_.examples();
  const std::vector<std::uint32_t>& slots = gathered.slots();
  const std::size_t d = 1 + k_;
  sums_.resize(b.size * k_);
  logits_.resize(b.size);
  scores_.resize(2 * b.size);
  for (std::size_t i = 0; i < b.size; ++i) {
    double* s = sums_.data() + i * k_;
    double z = bias;
    double squares = 0.0;
    for (std::size_t f = 0; f < k_; ++f) s[f] = 0.0;
    for (std::uint64_t j = e.offsets[i]; j < e.offsets[i + 1]; ++j) {
      const float* row = rows + slots[j] * d;
      const double x = e.values[j];
      z += x * row[0];
      for (std::size_t f = 0; f < k_; ++f) {
        const double vx = x * row[1 + f];
        s[f] += vx;
        squares += vx * vx;
      }
    }
    double pairs = -squares;
    for (std::size_t f = 0; f < k_; ++f) pairs += s[f] * s[f];
    logits_[i] = z + 0.5 * pairs;
  }
}

// d(logit)/d(w_r) = sum of x_j over the example's features j in row r;
// d(logit)/d(v_rf) = sum over those j of x_j (s_f - v_rf x_j).
float fm_workspace::loss_and_gradient(const float* params, const float* rows, const batch& b,
                                      float* grad, float* row_grad) {
  forward(params[0], rows, b);
  const sparse_examples& e = batch_.examples();
  const logreg_batch& gathered = batch_.load(b);
  const std::vector<std::uint32_t>& slots = gathered.slots();
  const std::size_t d = 1 + k_;
  const std::size_t keys = gathered.keys().size();
  for (std::size_t i = 0; i < keys * d; ++i) row_grad[i] = 0.0f;
  const double scale = 1.0 / static_cast<double>(b.size ? b.size : 1);
  double loss = 0.0;
  double bias_grad = 0.0;
  for (std::size_t i = 0; i < b.size; ++i) {
    loss += logistic_loss(logits_[i], e.labels[i]);
    const double dz = (sigmoid(logits_[i]) - e.labels[i]) * scale;
    bias_grad += dz;
    const double* s = sums_.data() + i * k_;
    for (std::uint64_t j = e.offsets[i]; j < e.offsets[i + 1]; ++j) {
      const float* row = rows + slots[j] * d;
      float* g = row_grad + slots[j] * d;
      const double x = e.values[j];
      g[0] += static_cast<float>(dz * x);
      for (std::size_t f = 0; f < k_; ++f)
        g[1 + f] += static_cast<float>(dz * x * (s[f] - row[1 + f] * x));
    }
  }
  grad[0] = static_cast<float>(bias_grad);
  return static_cast<float>(loss * scale);
}

class fm_model final : public model {
 public:
  fm_model(std::uint64_t rows, std::size_t factors, update_rule rule)
      : hashing_(rows, kFeatureHashSeed),
        factors_(factors),
        layout_("fm", std::to_string(rows) + "-" + std::to_string(factors),
                {{.name = "weights",
                  .rows = rows,
                  .cols = 1 + factors,
                  .init = {init_kind::truncated_normal, kFactorStddev},
                  .store = storage::rows,
                  .update = {.rule = rule}},
                 {.name = "bias", .rows = 1, .cols = 1}}) {}
  model_layout layout() const override { return layout_; }
  std::size_t classes() const override { return 2; }
  prediction predicts() const override { return prediction::probability; }
  std::unique_ptr<model_workspace> workspace(std::size_t batch_size) const override {
    return std::make_unique<fm_workspace>(hashing_, factors_, batch_size);
  }

 private:
  sparse_logreg hashing_;
  std::size_t factors_;
  model_layout layout_;
};

}  // namespace

std::shared_ptr<const model> make_fm(const model_choice& choice, const model_request& request) {
  check_sparse_request("fm", request);
  if (choice.fm_factors == 0) throw std::invalid_argument("fm: 0 factors per feature");
  return std::make_shared<fm_model>(choice.sparse_rows, choice.fm_factors,
                                    choice.sparse_update);
}

}  // namespace downpour
