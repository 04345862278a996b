// A model of your own, trained by Downpour: a network with one hidden layer
// (ReLU) and a softmax output on the numeric features of a CSV file, written
// in plain C++. Downpour asks a model for three things (model/model.hpp):
//   layout()     its variables: names, shapes, initializers, which take L2
//   workspace()  per worker, the loss, gradient and class scores of a batch
//   classes()    how many scores a row has
// and does the rest: parameter servers, every mode, checkpoints, eval, export.
#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <model/model.hpp>
#include <runtime/cli/app.hpp>

namespace {

using downpour::batch;

constexpr std::size_t hidden_units = 32;

struct sizes {
  std::size_t in, hidden, out;
};

// The four variables, in the order layout() declares them: Downpour keeps
// every parameter in one flat buffer in that order (offsets from the layout).
struct offsets {
  std::size_t w1, b1, w2, b2;
  explicit offsets(const downpour::model_layout& layout)
      : w1(layout.variables()[0].offset), b1(layout.variables()[1].offset),
        w2(layout.variables()[2].offset), b2(layout.variables()[3].offset) {}
};

// Buffers for batches of up to batch_size rows: a step allocates nothing.
class two_layer_workspace : public downpour::model_workspace {
 public:
  two_layer_workspace(const downpour::model_layout& layout, sizes s, float l2, std::size_t rows)
      : at_(layout), s_(s), l2_(l2), hidden_(rows * s.hidden), logits_(rows * s.out),
        dlogits_(rows * s.out), dhidden_(rows * s.hidden) {}

  float loss_and_gradient(const float* p, const batch& b, float* grad) override {
    forward(p, b);
    const float loss = cross_entropy(b) + l2_term(p);
    softmax_gradient(b);
    backward(p, b, grad);
    return loss;
  }

  float loss(const float* p, const batch& b) override {
    forward(p, b);
    return cross_entropy(b) + l2_term(p);
  }

  const float* scores(const float* p, const batch& b) override {
    forward(p, b);
    return logits_.data();
  }

 private:
  // out[n x cols] = in[n x k] * w[k x cols] + bias, row-major.
  static void affine(const float* in, std::size_t n, std::size_t k, const float* w,
                     const float* bias, std::size_t cols, float* out) {
    for (std::size_t i = 0; i < n; ++i) {
      float* row = out + i * cols;
      std::copy(bias, bias + cols, row);
      for (std::size_t j = 0; j < k; ++j)
        for (std::size_t c = 0; c < cols; ++c) row[c] += in[i * k + j] * w[j * cols + c];
    }
  }

  void forward(const float* p, const batch& b) {
    affine(b.x.data(), b.size, s_.in, p + at_.w1, p + at_.b1, s_.hidden, hidden_.data());
    for (std::size_t i = 0; i < b.size * s_.hidden; ++i) hidden_[i] = std::max(hidden_[i], 0.0f);
    affine(hidden_.data(), b.size, s_.hidden, p + at_.w2, p + at_.b2, s_.out, logits_.data());
  }

  // log(sum(exp(row))) without overflow.
  float log_sum_exp(const float* row) const {
    const float top = *std::max_element(row, row + s_.out);
    float sum = 0.0f;
    for (std::size_t c = 0; c < s_.out; ++c) sum += std::exp(row[c] - top);
    return top + std::log(sum);
  }

  // The mean softmax cross-entropy of the batch.
  float cross_entropy(const batch& b) const {
    double total = 0.0;
    for (std::size_t i = 0; i < b.size; ++i) {
      const float* row = logits_.data() + i * s_.out;
      total += log_sum_exp(row) - row[b.y[i]];
    }
    return static_cast<float>(total / static_cast<double>(b.size));
  }

  // d(mean cross-entropy)/d(logits) = (softmax - one-hot label) / batch size.
  void softmax_gradient(const batch& b) {
    for (std::size_t i = 0; i < b.size; ++i) {
      const float* row = logits_.data() + i * s_.out;
      const float lse = log_sum_exp(row);
      for (std::size_t c = 0; c < s_.out; ++c)
        dlogits_[i * s_.out + c] = std::exp(row[c] - lse) / static_cast<float>(b.size);
      dlogits_[i * s_.out + b.y[i]] -= 1.0f / static_cast<float>(b.size);
    }
  }

  // TensorFlow's l2_loss on the weights (not the biases): l2 * sum(w^2) / 2.
  float l2_term(const float* p) const {
    float sum = 0.0f;
    for (std::size_t i = 0; i < s_.in * s_.hidden; ++i) sum += p[at_.w1 + i] * p[at_.w1 + i];
    for (std::size_t i = 0; i < s_.hidden * s_.out; ++i) sum += p[at_.w2 + i] * p[at_.w2 + i];
    return 0.5f * l2_ * sum;
  }

  // grad_w[k x cols] = in^T * d + l2 * w, grad_b = column sums of d.
  void affine_gradient(const float* in, std::size_t n, std::size_t k, const float* d,
                       std::size_t cols, const float* w, float* grad_w, float* grad_b) const {
    for (std::size_t j = 0; j < k * cols; ++j) grad_w[j] = l2_ * w[j];
    std::fill(grad_b, grad_b + cols, 0.0f);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t c = 0; c < cols; ++c) {
        grad_b[c] += d[i * cols + c];
        for (std::size_t j = 0; j < k; ++j) grad_w[j * cols + c] += in[i * k + j] * d[i * cols + c];
      }
  }

  void backward(const float* p, const batch& b, float* g) {
    affine_gradient(hidden_.data(), b.size, s_.hidden, dlogits_.data(), s_.out, p + at_.w2,
                    g + at_.w2, g + at_.b2);
    // Back through the output layer and the ReLU: zero where the unit was off.
    for (std::size_t i = 0; i < b.size; ++i)
      for (std::size_t h = 0; h < s_.hidden; ++h) {
        float sum = 0.0f;
        for (std::size_t c = 0; c < s_.out; ++c)
          sum += dlogits_[i * s_.out + c] * p[at_.w2 + h * s_.out + c];
        dhidden_[i * s_.hidden + h] = hidden_[i * s_.hidden + h] > 0.0f ? sum : 0.0f;
      }
    affine_gradient(b.x.data(), b.size, s_.in, dhidden_.data(), s_.hidden, p + at_.w1,
                    g + at_.w1, g + at_.b1);
  }

  offsets at_;
  sizes s_;
  float l2_;
  std::vector<float> hidden_, logits_, dlogits_, dhidden_;
};

class two_layer_network : public downpour::model {
 public:
  explicit two_layer_network(const downpour::model_request& r)
      : s_{r.data.features(), hidden_units, r.classes}, l2_(r.l2) {
    if (s_.in == 0 || s_.out < 2)
      throw std::invalid_argument("two_layer needs at least 1 feature and 2 classes, the data has " +
                                  std::to_string(s_.in) + " and " + std::to_string(s_.out));
    const downpour::initializer weights{downpour::init_kind::truncated_normal, 0.1f};
    layout_ = downpour::model_layout(
        "two_layer", std::to_string(s_.in) + "-" + std::to_string(s_.hidden) + "-" + std::to_string(s_.out),
        {{"hidden/weights", s_.in, s_.hidden, weights, true},
         {"hidden/biases", 1, s_.hidden, {}, false},
         {"output/weights", s_.hidden, s_.out, weights, true},
         {"output/biases", 1, s_.out, {}, false}});
  }

  downpour::model_layout layout() const override { return layout_; }
  std::size_t classes() const override { return s_.out; }
  std::unique_ptr<downpour::model_workspace> workspace(std::size_t batch_size) const override {
    return std::make_unique<two_layer_workspace>(layout_, s_, l2_, batch_size);
  }

 private:
  sizes s_;
  float l2_;
  downpour::model_layout layout_;
};

std::shared_ptr<const downpour::model> make_two_layer(const downpour::model_request& request) {
  return std::make_shared<const two_layer_network>(request);
}

}  // namespace

int main(int argc, char** argv) { return downpour::run_downpour(argc, argv, make_two_layer); }
