// --model logreg as a model (model/model.hpp), and the batch gathering it
// shares with --model fm.
#include <stdexcept>
#include <string>

#include "model/sparse_models.hpp"

namespace downpour {

logreg_batch& hashed_batch::load(const batch& b) {
  if (b.offsets.size() < b.size + 1)
    throw std::invalid_argument(
        "sparse model: a batch without sparse features (the model needs --data-format=libsvm)");
  csr_.labels.resize(b.size);
  for (std::size_t i = 0; i < b.size; ++i) {
    if (b.y[i] != 0 && b.y[i] != 1)
      throw std::invalid_argument("sparse model: label " + std::to_string(b.y[i]) +
                                  " (expected 0 or 1)");
    csr_.labels[i] = static_cast<std::uint8_t>(b.y[i]);
  }
  // Assignments reuse the buffers once grown: no allocation per step.
  csr_.values = b.values;
  const bool same =
      gathered_ && gathered_size_ == b.size && csr_.offsets == b.offsets && csr_.keys == b.keys;
  if (!same) {
    csr_.offsets = b.offsets;
    csr_.keys = b.keys;
    batch_.gather(csr_, 0, b.size);
    gathered_ = true;
    gathered_size_ = b.size;
  }
  return batch_;
}

namespace {

[[noreturn]] void needs_rows(const char* call) {
  throw std::logic_error(std::string("sparse model: ") + call +
                         " needs the batch's rows (the calls with rows)");
}

class logreg_workspace final : public model_workspace {
 public:
  logreg_workspace(const sparse_logreg& hashing, std::size_t batch_size)
      : batch_(hashing), scores_(2 * batch_size) {}

  float loss_and_gradient(const float*, const batch&, float*) override {
    needs_rows("loss_and_gradient");
  }
  float loss(const float*, const batch&) override { needs_rows("loss"); }
  const float* scores(const float*, const batch&) override { needs_rows("scores"); }

  const std::vector<std::uint64_t>& touched_rows(const batch& b) override {
    return batch_.load(b).keys();
  }

  float loss_and_gradient(const float* params, const float* rows, const batch& b, float* grad,
                          float* row_grad) override {
    const logreg_gradient& g = batch_.load(b).loss_and_gradient(rows, params[0]);
    for (std::size_t i = 0; i < g.rows.size(); ++i) row_grad[i] = g.rows[i];
    grad[0] = g.bias;
    return static_cast<float>(g.loss);
  }

  const float* scores(const float* params, const float* rows, const batch& b) override {
    const std::vector<float>& z = batch_.load(b).logits(rows, params[0]);
    scores_.resize(2 * z.size());
    for (std::size_t i = 0; i < z.size(); ++i) {
      scores_[2 * i] = 0.0f;
      scores_[2 * i + 1] = z[i];
    }
    return scores_.data();
  }

 private:
  hashed_batch batch_;
  std::vector<float> scores_;
};

class logreg_model final : public model {
 public:
  logreg_model(std::uint64_t rows, update_rule rule)
      : hashing_(rows, kFeatureHashSeed),
        layout_("logreg", std::to_string(rows),
                {{.name = "weights", .rows = rows, .cols = 1, .store = storage::rows,
                  .update = {.rule = rule}},
                 {.name = "bias", .rows = 1, .cols = 1}}) {}
  model_layout layout() const override { return layout_; }
  std::size_t classes() const override { return 2; }
  prediction predicts() const override { return prediction::probability; }
  std::unique_ptr<model_workspace> workspace(std::size_t batch_size) const override {
    return std::make_unique<logreg_workspace>(hashing_, batch_size);
  }

 private:
  sparse_logreg hashing_;
  model_layout layout_;
};

}  // namespace

void check_sparse_request(const std::string& kind, const model_request& request) {
  const std::size_t features = request.data.features();
  if (request.data.dims.empty() || features != 0)
    throw std::invalid_argument(kind +
                                ": needs sparse data (--data-format=libsvm), not examples of " +
                                std::to_string(features) + " features");
  if (request.classes > 2)
    throw std::invalid_argument(kind + ": a binary classifier, but the data has " +
                                std::to_string(request.classes) + " classes");
}

std::shared_ptr<const model> make_logreg(const model_choice& choice, const model_request& request) {
  check_sparse_request("logreg", request);
  return std::make_shared<logreg_model>(choice.sparse_rows, choice.sparse_update);
}

}  // namespace downpour
