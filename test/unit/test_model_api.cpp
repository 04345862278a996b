// The model interface: layouts and their checks, initialization by each
// variable's initializer, the built-in models by name, and evaluation
// through a model's scores.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "data/idx.hpp"
#include "model/builtin.hpp"
#include "model/init.hpp"
#include "model/mlp.hpp"

namespace test_model_api {

using namespace downpour;

namespace {

model_request request_for(std::vector<std::size_t> dims, std::size_t classes,
                          model_choice choice = {}) {
  return model_request{data_shape{std::move(dims)}, classes, 1e-4f, std::move(choice)};
}

std::string invalid(const std::string& kind, const std::vector<variable_spec>& vars) {
  try {
    model_layout layout(kind, "1", vars);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

// A model of fixed scores: example i of a batch scores its feature 0 as the
// class, so evaluate's arg max is exactly that.
class echo_model final : public model {
 public:
  model_layout layout() const override {
    return model_layout("echo", "", {{"w", 1, 1, {}, false}});
  }
  std::size_t classes() const override { return 3; }
  std::unique_ptr<model_workspace> workspace(std::size_t n) const override {
    struct ws final : model_workspace {
      std::vector<float> out;
      explicit ws(std::size_t n) : out(n * 3) {}
      float loss_and_gradient(const float*, const batch&, float*) override { return 0; }
      float loss(const float*, const batch&) override { return 0; }
      const float* scores(const float*, const batch& b) override {
        std::fill(out.begin(), out.end(), 0.0f);
        for (std::size_t i = 0; i < b.size; ++i)
          out.at(i * 3 + static_cast<std::size_t>(b.x[i * b.input_size])) = 1.0f;
        return out.data();
      }
    };
    return std::make_unique<ws>(n);
  }
};

}  // namespace

TEST_CASE("a layout lays its variables out in declaration order and refuses bad ones by name") {
  const model_layout l("net", "a",
                       {{"conv1/filters", 25, 8, {}, true}, {"conv1/bias", 1, 8, {}, false}});
  CHECK(l.size() == 208);
  CHECK(l.variables()[1].offset == 200);
  CHECK(l.to_string() == "net a");
  CHECK(model_layout("net", "", {{"w", 1, 1, {}, false}}).to_string() == "net");
  CHECK(invalid("net", {{"", 1, 1, {}, false}}) ==
        "net 1: variable name '' is not valid (expected "
        "letters, digits and _ . / -)");
  CHECK(invalid("net", {{"w x", 1, 1, {}, false}}).find("variable name 'w x' is not valid") !=
        std::string::npos);
  CHECK(invalid("net", {{"w", 1, 1, {}, false}, {"w", 2, 2, {}, false}}) ==
        "net 1: variable w is declared twice");
  CHECK(invalid("net", {{"w", 0, 3, {}, false}}) ==
        "net 1: variable w has a zero dimension [0, 3]");
  const std::size_t huge = std::size_t{1} << 40;
  CHECK(invalid("net", {{"w", huge, huge, {}, false}}) ==
        "net 1: variable w makes the model too large");
}

TEST_CASE("layouts are equal when kind, spec and variables agree, whatever their initializers") {
  const model_layout a("net", "a", {{"w", 2, 3, {init_kind::truncated_normal, 0.1f}, true}});
  CHECK(a == model_layout("net", "a", {{"w", 2, 3, {}, true}}));
  CHECK(a != model_layout("other", "a", {{"w", 2, 3, {}, true}}));
  CHECK(a != model_layout("net", "b", {{"w", 2, 3, {}, true}}));
  CHECK(a != model_layout("net", "a", {{"v", 2, 3, {}, true}}));
  CHECK(a != model_layout("net", "a", {{"w", 3, 2, {}, true}}));
  CHECK(a != model_layout("net", "a", {{"w", 2, 3, {}, false}}));
}

TEST_CASE("initial parameters follow each variable's initializer in declaration order") {
  const model_layout l("net", "",
                       {{"zero", 1, 1000, {}, false},
                        {"narrow", 1, 1000, {init_kind::truncated_normal, 0.01f}, true},
                        {"wide", 1, 1000, {init_kind::truncated_normal, 1.0f}, false}});
  const auto p = initial_parameters(l, 5);
  CHECK(std::all_of(p.begin(), p.begin() + 1000, [](float x) { return x == 0.0f; }));
  CHECK(std::all_of(p.begin() + 1000, p.begin() + 2000,
                    [](float x) { return std::abs(x) <= 0.02f && x != 0.0f; }));
  CHECK(std::all_of(p.begin() + 2000, p.end(), [](float x) { return std::abs(x) <= 2.0f; }));
  CHECK(*std::max_element(p.begin() + 2000, p.end()) > 1.0f);
  // The draws continue from one source: the wide ones are not the narrow ones scaled.
  CHECK(p[2000] != p[1000] * 100.0f);
  // The MLP's: weights drawn in order, biases zero, as the seed's initializer.
  const model_layout mlp = mlp_spec{4, {3}, 2}.layout("mlp");
  const auto q = initial_parameters(mlp, 5);
  CHECK(q[12] == 0.0f);  // layer1/biases
  CHECK(q[15] != 0.0f);  // layer2/weights
}

TEST_CASE("the built-in models are chosen by name and refuse what they cannot build") {
  const auto request = request_for({28, 28, 1}, 10);
  CHECK(make_builtin_model({"mlp", {500}}, request)->layout().to_string() == "mlp 784-500-10");
  CHECK(make_builtin_model({"mlp", {500, 300}}, request)->layout().size() ==
        784 * 500 + 500 + 500 * 300 + 300 + 300 * 10 + 10);
  const auto softmax = make_builtin_model({"softmax", {500}}, request);
  CHECK(softmax->layout().to_string() == "softmax 784-10");
  CHECK(softmax->classes() == 10);
  CHECK(make_builtin_model({"cnn", {}}, request)->layout().kind() == "cnn");
  CHECK_THROWS_AS(make_builtin_model({"cnn", {}}, request_for({784}, 10)), std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      make_builtin_model({"rnn", {}}, request),
      "--model=rnn is not a built-in model (expected mlp, softmax, cnn, logreg, fm, dlrm or "
      "wide_deep)",
      std::invalid_argument);
  CHECK_THROWS_AS(make_builtin_model({"mlp", {}}, request), std::invalid_argument);
  CHECK_THROWS_AS(make_builtin_model({"mlp", {500}}, request_for({}, 10)), std::invalid_argument);
}

TEST_CASE("evaluate takes the arg max of the model's scores per class, in chunks") {
  // 2500 examples (chunks of 1000, 1000, 500): feature i % 3, label i % 2.
  std::vector<std::uint8_t> pixels, labels;
  for (std::size_t i = 0; i < 2500; ++i) {
    pixels.push_back(static_cast<std::uint8_t>(i % 3));
    labels.push_back(static_cast<std::uint8_t>(i % 2));
  }
  // idx_images scales pixels by 1/255: undo it in a model of raw features.
  struct raw final : dataset {
    idx_images images;
    explicit raw(idx_images i) : images(std::move(i)) {}
    std::size_t size() const override { return images.size(); }
    std::size_t features() const override { return 1; }
    void copy_features(std::size_t i, float* out) const override { *out = images.image(i)[0]; }
    std::int32_t label(std::size_t i) const override { return images.label(i); }
  } set{idx_images(1, 1, pixels, labels)};
  const float params = 0.0f;
  const accuracy_report r = evaluate(echo_model{}, &params, set);
  // Right when i % 3 == i % 2: i % 6 in {0, 1}.
  CHECK(r.overall == doctest::Approx(834.0 / 2500).epsilon(1e-12));
  REQUIRE(r.per_class.size() == 3);
  CHECK(r.per_class[0] == doctest::Approx(417.0 / 1250));
  CHECK(r.per_class[1] == doctest::Approx(417.0 / 1250));
  CHECK(r.per_class[2] == 0.0);  // no example of class 2
  // Scores one-hot at 1: -log softmax is log(e + 2) - 1 when right, log(e + 2) when wrong.
  const double wrong = std::log(std::exp(1.0) + 2.0);
  CHECK(r.log_loss == doctest::Approx((834 * (wrong - 1) + 1666 * wrong) / 2500).epsilon(1e-12));
  CHECK(r.auc == 0.0);  // three classes
}

TEST_CASE("a rows variable is the layout's row variable, outside the flat buffer") {
  const model_layout l(
      "lr", "N",
      {{"weights", std::size_t{1} << 40, 2, {}, false, storage::rows}, {"bias", 1, 1, {}, false}});
  CHECK(l.size() == 1);
  REQUIRE(l.variables().size() == 1);
  CHECK(l.variables()[0].name == "bias");
  CHECK(l.variables()[0].offset == 0);
  REQUIRE(only_row_variable(l));
  CHECK(only_row_variable(l)->name == "weights");
  CHECK(only_row_variable(l)->rows == std::uint64_t{1} << 40);
  CHECK(only_row_variable(l)->cols == 2);
  CHECK(l.variables_text() == "bias 1x1,weights rows 1099511627776x2");
  CHECK(l.to_string() == "lr N");
  CHECK_FALSE(only_row_variable(mlp_spec{}.layout("mlp")));
  const model_layout only("lr", "", {{"w", 8, 1, {}, false, storage::rows}});
  CHECK(only.size() == 0);
  CHECK(only.variables_text() == "w rows 8x1");
}

TEST_CASE("a layout refuses a regularized or oversized rows variable, and names it") {
  const variable_spec rows{"w", 8, 1, {}, false, storage::rows};
  CHECK(invalid("lr", {{"w", 8, 1, {}, true, storage::rows}}) ==
        "lr 1: variable w is stored as rows and cannot be regularized (its regularizer `reg` is)");
  CHECK(invalid("lr", {rows, {"w", 1, 1, {}, false}}) == "lr 1: variable w is declared twice");
  CHECK(invalid("lr", {{"w", 1, 1, {}, false}, rows}) == "lr 1: variable w is declared twice");
  CHECK(invalid("lr", {{"w", 0, 1, {}, false, storage::rows}}) ==
        "lr 1: variable w has a zero dimension [0, 1]");
  CHECK(invalid("lr", {{"w x", 8, 1, {}, false, storage::rows}})
            .find("variable name 'w x' is not valid") != std::string::npos);
  CHECK(invalid("lr", {{"w", (std::size_t{1} << 63) + 1, 1, {}, false, storage::rows}}) ==
        "lr 1: variable w has 9223372036854775809 rows, taking the row variables past 2^63 "
        "rows in all");
}

TEST_CASE("layouts with a rows variable are equal only when its name and shape agree") {
  const auto layout = [](const char* name, std::size_t rows, std::size_t cols) {
    return model_layout(
        "lr", "", {{name, rows, cols, {init_kind::truncated_normal, 0.1f}, false, storage::rows}});
  };
  CHECK(layout("w", 8, 1) == model_layout("lr", "", {{"w", 8, 1, {}, false, storage::rows}}));
  CHECK(layout("w", 8, 1) != layout("v", 8, 1));
  CHECK(layout("w", 8, 1) != layout("w", 9, 1));
  CHECK(layout("w", 8, 1) != layout("w", 8, 2));
  CHECK(layout("w", 8, 1) != model_layout("lr", "", {}));
  CHECK(layout("w", 8, 1) != model_layout("lr", "", {{"w", 8, 1, {}, false}}));
}

TEST_CASE("a dense model touches no rows and its calls with rows are the dense ones") {
  const auto m = make_builtin_model({"softmax", {}}, request_for({3}, 2));
  auto ws = m->workspace(2);
  batch b;
  b.size = 2;
  b.input_size = 3;
  b.x = {1, 2, 3, -1, 0, 2};
  b.y = {0, 1};
  CHECK(ws->touched_rows(b).empty());
  CHECK(&ws->touched_rows(b) == &m->workspace(1)->touched_rows(b));  // one static list
  const std::vector<float> params = {0.1f, -0.2f, 0.3f, 0.05f, 0.4f, -0.1f, 0.01f, 0.02f};
  REQUIRE(params.size() == m->layout().size());
  std::vector<float> dense(params.size()), with_rows(params.size());
  const float loss = ws->loss_and_gradient(params.data(), b, dense.data());
  CHECK(ws->loss_and_gradient(params.data(), nullptr, b, with_rows.data(), nullptr) == loss);
  CHECK(dense == with_rows);
  const std::vector<float> scores(ws->scores(params.data(), b), ws->scores(params.data(), b) + 4);
  const float* again = ws->scores(params.data(), nullptr, b);
  CHECK(std::vector<float>(again, again + 4) == scores);
}

}  // namespace test_model_api
