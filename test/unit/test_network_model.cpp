// network_model (model/network_model.hpp): a program's own network of layers
// as a model, its variables declared by name with their own regularizers;
// the built-in mlp is made by it too.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "model/layers/activations.hpp"
#include "model/layers/dense.hpp"
#include "model/mlp.hpp"
#include "model/network_model.hpp"

namespace test_network_model {

using namespace downpour;

namespace {

// 5 features, 4 hidden units, 3 classes: the custom-model example's shape.
layers::sequential<float> small_network() {
  layers::sequential<float> net(5);
  net.add("hidden", layers::dense<float>(5, 4));
  net.add(layers::relu<float>(4));
  net.add("output", layers::dense<float>(4, 3));
  return net;
}

std::vector<variable_spec> declared() {
  const initializer w{init_kind::truncated_normal, 0.1f};
  return {{.name = "hidden/weights", .rows = 5, .cols = 4, .init = w, .reg = {.l2 = 0.5f}},
          {.name = "hidden/biases", .rows = 1, .cols = 4},
          {.name = "output/weights", .rows = 4, .cols = 3, .init = w, .reg = {.l2 = 0.5f}},
          {.name = "output/biases", .rows = 1, .cols = 3}};
}

batch random_batch(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  batch b;
  b.size = n;
  b.input_size = 5;
  for (std::size_t i = 0; i < n * 5; ++i) b.x.push_back(u(rng));
  for (std::size_t i = 0; i < n; ++i) b.y.push_back(static_cast<std::int32_t>(rng() % 3));
  return b;
}

std::string refusal(const std::vector<variable_spec>& vars) {
  try {
    network_model(model_layout("mine", "5-4-3", vars), 3, small_network);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "nothing refused";
}

}  // namespace

std::vector<float> random_params(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> nd(0.0f, 0.5f);
  std::vector<float> params(n);
  for (float& p : params) p = nd(rng);
  return params;
}

TEST_CASE(
    "a network model's loss and gradient are its layers' with the softmax cross-entropy, "
    "as the built-in mlp's without --l2 (the L2 its variables declare is the runtime's)") {
  const auto mine = network_model(model_layout("mine", "5-4-3", declared()), 3, small_network);
  CHECK(mine->classes() == 3);
  CHECK(mine->layout().variable("output/weights").reg.l2 == 0.5f);
  // The built-in mlp of the same shape with no --l2: the same network.
  const auto builtin = mlp_model_of("mlp", mlp_spec{5, {4}, 3}, 0.0f);
  REQUIRE(builtin->layout().size() == mine->layout().size());
  const std::vector<float> params = random_params(mine->layout().size(), 7);
  const batch b = random_batch(6, 8);
  std::vector<float> g_mine(params.size(), -1.0f), g_builtin(params.size(), -2.0f);
  const float loss = mine->workspace(6)->loss_and_gradient(params.data(), b, g_mine.data());
  const float builtin_loss =
      builtin->workspace(6)->loss_and_gradient(params.data(), b, g_builtin.data());
  CHECK(loss == doctest::Approx(builtin_loss).epsilon(1e-6));
  CHECK(g_mine == g_builtin);
  CHECK(mine->workspace(6)->loss(params.data(), b) == loss);
}

TEST_CASE(
    "a variable's own reg is in neither the loss nor the gradient: the runtime's update "
    "applies it") {
  auto plain = declared(), with_reg = declared();
  for (auto* vars : {&plain, &with_reg})
    for (auto& v : *vars) v.reg = {};
  with_reg[0].reg = {.l1 = 0.25f, .l2 = 0.5f};
  const auto a = network_model(model_layout("mine", "5-4-3", plain), 3, small_network);
  const auto b = network_model(model_layout("mine", "5-4-3", with_reg), 3, small_network);
  const std::vector<float> params = random_params(a->layout().size(), 11);
  const batch data = random_batch(4, 12);
  std::vector<float> ga(params.size()), gb(params.size());
  const float la = a->workspace(4)->loss_and_gradient(params.data(), data, ga.data());
  const float lb = b->workspace(4)->loss_and_gradient(params.data(), data, gb.data());
  CHECK(la == lb);
  CHECK(ga == gb);
}

TEST_CASE("the built-in mlp carries its L2 term in the loss, as TensorFlow's job does") {
  const mlp_spec spec{5, {4}, 3};
  std::vector<float> params(spec.layout("mlp").size(), 0.5f);
  const batch b = random_batch(4, 9);
  const float plain = mlp_model_of("mlp", spec, 0.0f)->workspace(4)->loss(params.data(), b);
  const float with_l2 = mlp_model_of("mlp", spec, 0.1f)->workspace(4)->loss(params.data(), b);
  // l2 * sum(w^2) / 2 over the 5x4 + 4x3 weights of 0.5.
  CHECK(with_l2 - plain == doctest::Approx(0.1 * 32 * 0.25 / 2).epsilon(1e-5));
}

TEST_CASE(
    "a network model refuses a layout other than its network's variables, naming the "
    "first that differs") {
  auto vars = declared();
  std::swap(vars[0], vars[1]);
  CHECK(refusal(vars) ==
        "mine: variable 1 of the network is hidden/weights [5x4], of the layout hidden/biases "
        "[1x4] (expected the network's variables in its order)");
  vars = declared();
  vars[2].cols = 2;
  CHECK(refusal(vars) ==
        "mine: variable 3 of the network is output/weights [4x3], of the layout output/weights "
        "[4x2] (expected the network's variables in its order)");
  vars = declared();
  vars.pop_back();
  CHECK(refusal(vars) == "mine: the network's output/biases [1x3] is not declared");
  vars = declared();
  vars.push_back({.name = "extra", .rows = 1, .cols = 1});
  CHECK(refusal(vars) == "mine: the layout declares extra, which the network has not");
  vars = declared();
  vars.push_back({.name = "table", .rows = 9, .cols = 2, .store = storage::rows});
  CHECK(refusal(vars) ==
        "mine: the row variable table (a network of layers has dense variables only)");
  CHECK_THROWS_WITH_AS(network_model(model_layout("mine", "5-4-3", declared()), 4, small_network),
                       "mine: the network gives 3 outputs for 4 classes", std::invalid_argument);
}

}  // namespace test_network_model
