// The LibTorch adapter (model/torch/) against the built-in MLP: the same
// job's first 100 steps from the same initial values give the same
// parameters, and the layout names the module's parameters.
#include "torch_doctest.hpp"  // first: doctest's CHECK, not glog's

#include <algorithm>
#include <cmath>
#include <vector>

#include "data/batcher.hpp"
#include "data/idx.hpp"
#include "model/init.hpp"
#include "model/mlp.hpp"
#include "model/schedule.hpp"
#include "model/update.hpp"
#include "torch_mlp/mlp_network.hpp"

namespace test_torch_model {

using namespace downpour;

namespace {

model_request mnist_request(const data_splits& data) {
  model_request r;
  r.data = data.shape;
  r.classes = data.classes;
  r.l2 = 1e-4f;
  return r;
}

// The built-in MLP's flat parameters in the torch module's layout: its
// weights are [in, out], torch::nn::Linear's [out, in].
std::vector<float> to_torch_order(const model_layout& from, const model_layout& to,
                                  const std::vector<float>& p) {
  std::vector<float> out(to.size());
  for (std::size_t v = 0; v < from.variables().size(); ++v) {
    const variable_info& a = from.variables()[v];
    const variable_info& b = to.variables()[v];
    for (std::size_t r = 0; r < a.rows; ++r)
      for (std::size_t c = 0; c < a.cols; ++c)
        out[b.offset + (a.rows == 1 ? c : c * a.rows + r)] = p[a.offset + r * a.cols + c];
  }
  return out;
}

float largest_difference(const std::vector<float>& a, const std::vector<float>& b) {
  float most = 0.0f;
  for (std::size_t i = 0; i < a.size(); ++i) most = std::max(most, std::abs(a[i] - b[i]));
  return most;
}

}  // namespace

TEST_CASE("the LibTorch MLP names its variables after the module's parameters") {
  model_request r;
  r.data.dims = {784};
  r.classes = 10;
  const auto m = make_torch_model(torch_mlp::spec_for(r));
  CHECK(m->layout().to_string() == "torch_mlp 784-500-10");
  CHECK(m->layout().variables_text() == "0/weight 500x784,0/bias 1x500,2/weight 10x500,2/bias 1x10");
  CHECK(m->layout().variables()[0].regularized);
  CHECK_FALSE(m->layout().variables()[1].regularized);
}

TEST_CASE("the LibTorch MLP matches the built-in MLP step for step to 1e-4 over 100 steps") {
  const data_splits data = load_mnist(DOWNPOUR_DEFAULT_DATA_DIR, 5000);
  const model_request request = mnist_request(data);
  const auto builtin = make_mlp({500}, request);
  const auto torch_model = make_torch_model(torch_mlp::spec_for(request));
  const model_layout& a = builtin->layout();
  const model_layout b = torch_model->layout();
  std::vector<float> pa = initial_parameters(a, 7);
  std::vector<float> pb = to_torch_order(a, b, pa);
  std::vector<float> ga(a.size()), gb(b.size()), next(std::max(a.size(), b.size()));
  auto wa = builtin->workspace(100);
  auto wb = torch_model->workspace(100);
  batcher batches(data.train, 100, 1);
  float worst = 0.0f;
  for (std::int64_t step = 0; step < 100; ++step) {
    const batch& x = batches.next_batch();
    const float la = wa->loss_and_gradient(pa.data(), x, ga.data());
    const float lb = wb->loss_and_gradient(pb.data(), x, gb.data());
    REQUIRE(std::abs(la - lb) <= 1e-4f);
    const float lr = learning_rate_at(lr_schedule{}, step);
    sgd_into(next.data(), pa.data(), ga.data(), a.size(), lr);
    std::copy(next.begin(), next.begin() + a.size(), pa.begin());
    sgd_into(next.data(), pb.data(), gb.data(), b.size(), lr);
    std::copy(next.begin(), next.begin() + b.size(), pb.begin());
    worst = std::max(worst, largest_difference(to_torch_order(a, b, pa), pb));
    REQUIRE(worst <= 1e-4f);
  }
  MESSAGE("largest parameter difference over 100 steps: " << worst);
  // Their scores agree too (evaluation takes the arg max of these).
  const batch& x = batches.next_batch();
  const float* sa = wa->scores(pa.data(), x);
  const float* sb = wb->scores(pb.data(), x);
  for (std::size_t i = 0; i < 100 * 10; ++i) CHECK(std::abs(sa[i] - sb[i]) <= 1e-3f);
}

}  // namespace test_torch_model
