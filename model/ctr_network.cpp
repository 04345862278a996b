#include "model/ctr_network.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace downpour {

template <class T>
ctr_network<T>::ctr_network(layers::graph<T> g, std::size_t max_batch)
    : graph_(std::move(g)), max_batch_(max_batch), loss_(1) {
  if (graph_.output_width() != 1)
    throw std::invalid_argument("ctr model: a graph of " + std::to_string(graph_.output_width()) +
                                " outputs, expected 1 logit");
  graph_.reserve(max_batch);
  loss_.reserve(max_batch);
}

template <class T>
const layers::feed<T>& ctr_network<T>::feed_of(const T* rows, const ctr_batch& in) {
  if (in.size() > max_batch_)
    throw std::length_error("ctr model: a batch of " + std::to_string(in.size()) +
                            " examples, more than the " + std::to_string(max_batch_) +
                            " it was made for");
  const std::size_t n = in.size() * in.numeric_width();
  numerics_.assign(in.numerics(), in.numerics() + n);
  // A design without numeric inputs has no input node to feed.
  feed_.inputs.assign(in.numeric_width() == 0 ? 0 : 1,
                      {numerics_.data(), in.size(), in.numeric_width()});
  feed_.bags.clear();
  for (std::size_t k = 0; k < in.bags(); ++k) {
    const ctr_block& b = in.block(k);
    feed_.bags.push_back({in.lists(k), {rows + b.first_value, b.rows, b.cols}});
  }
  return feed_;
}

template <class T>
T ctr_network<T>::loss_and_gradient(const T* params, const T* rows, const ctr_batch& in,
                                    const std::int32_t* labels, T* grad, T* row_grad) {
  const layers::const_tensor<T> z = graph_.forward(feed_of(rows, in), params, {});
  const T loss = loss_.forward(z, labels);
  row_gradients_.clear();
  for (std::size_t k = 0; k < in.bags(); ++k) {
    const ctr_block& b = in.block(k);
    row_gradients_.emplace_back(row_grad + b.first_value, b.rows, b.cols);
  }
  graph_.backward(loss_.backward(), params, grad, row_gradients_);
  return loss;
}

template <class T>
layers::const_tensor<T> ctr_network<T>::logits(const T* params, const T* rows,
                                               const ctr_batch& in) {
  return graph_.forward(feed_of(rows, in), params, {layers::phase::evaluation, 0});
}

template class ctr_network<float>;
template class ctr_network<double>;

namespace {

[[noreturn]] void needs_rows(const char* call) {
  throw std::logic_error(std::string("ctr model: ") + call +
                         " needs the batch's rows (the calls with rows)");
}

class ctr_workspace final : public model_workspace {
 public:
  ctr_workspace(const ctr_design& design, std::size_t batch_size)
      : reader_(design.reader()), net_(design.float_graph(), batch_size), scores_(2 * batch_size) {}

  float loss_and_gradient(const float*, const batch&, float*) override {
    needs_rows("loss_and_gradient");
  }
  float loss(const float*, const batch&) override { needs_rows("loss"); }
  const float* scores(const float*, const batch&) override { needs_rows("scores"); }

  const std::vector<std::uint64_t>& touched_rows(const batch& b) override {
    return reader_->read(b).keys();
  }
  float loss_and_gradient(const float* params, const float* rows, const batch& b, float* grad,
                          float* row_grad) override {
    return net_.loss_and_gradient(params, rows, reader_->read(b), b.y.data(), grad, row_grad);
  }
  const float* scores(const float* params, const float* rows, const batch& b) override {
    const layers::const_tensor<float> z = net_.logits(params, rows, reader_->read(b));
    scores_.resize(2 * z.rows);
    for (std::size_t i = 0; i < z.rows; ++i) {
      scores_[2 * i] = 0.0f;
      scores_[2 * i + 1] = z.data[i];
    }
    return scores_.data();
  }

 private:
  std::unique_ptr<ctr_reader> reader_;
  ctr_network<float> net_;
  std::vector<float> scores_;
};

class ctr_model final : public model {
 public:
  explicit ctr_model(std::shared_ptr<const ctr_design> design)
      : design_(std::move(design)), layout_(design_->layout()) {}
  model_layout layout() const override { return layout_; }
  std::size_t classes() const override { return 2; }
  prediction predicts() const override { return prediction::probability; }
  std::unique_ptr<model_workspace> workspace(std::size_t batch_size) const override {
    return std::make_unique<ctr_workspace>(*design_, batch_size);
  }

 private:
  std::shared_ptr<const ctr_design> design_;
  model_layout layout_;
};

}  // namespace

model_layout ctr_layout(const std::string& kind, const std::string& spec,
                        std::vector<variable_spec> dense, const update_spec& dense_update,
                        const std::vector<ctr_table>& tables) {
  for (variable_spec& v : dense) {
    v.regularized = false;
    v.update = dense_update;
  }
  for (const ctr_table& t : tables) {
    variable_spec v;
    v.name = t.name;
    v.rows = t.rows;
    v.cols = t.cols;
    v.init = t.init;
    v.store = storage::rows;
    v.update = t.update;
    v.reg = t.reg;
    dense.push_back(std::move(v));
  }
  return model_layout(kind, spec, dense);
}

std::string units_text(const std::vector<std::size_t>& units) {
  std::string text;
  for (std::size_t u : units) text += (text.empty() ? "" : ",") + std::to_string(u);
  return text;
}

std::shared_ptr<const model> ctr_model_of(std::shared_ptr<const ctr_design> design) {
  return std::make_shared<ctr_model>(std::move(design));
}

void check_ctr_request(const std::string& kind, const model_request& request) {
  const std::size_t features = request.data.features();
  if (request.data.dims.empty() || features != 0)
    throw std::invalid_argument(kind + ": needs Criteo data (--data-format=criteo), not examples of " +
                                std::to_string(features) + " features");
  if (request.classes > 2)
    throw std::invalid_argument(kind + ": a binary classifier, but the data has " +
                                std::to_string(request.classes) + " classes");
}

}  // namespace downpour
