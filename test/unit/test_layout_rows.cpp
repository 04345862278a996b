// Several row variables in one key space, variables looked up by name, and
// each variable's optimizer and regularizer as declared.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "model/layout.hpp"

namespace test_layout_rows {

using namespace downpour;

namespace {

model_layout two_tables() {
  return model_layout(
      "ctr", "",
      {{.name = "wide", .rows = 10, .cols = 1, .store = storage::rows,
        .update = {.rule = update_rule::ftrl}, .reg = {.l1 = 0.5f}},
       {.name = "bias", .rows = 1, .cols = 1},
       {.name = "emb", .rows = 4, .cols = 3, .store = storage::rows,
        .update = {.rule = update_rule::adagrad, .learning_rate = 0.05f}},
       {.name = "dense/weights", .rows = 3, .cols = 2,
        .update = {.rule = update_rule::adam}}});
}

std::string refusal(const std::vector<variable_spec>& vars) {
  try {
    model_layout("m", "", vars);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("row variables take consecutive key ranges in declaration order") {
  const model_layout l = two_tables();
  REQUIRE(l.row_variables().size() == 2);
  CHECK(l.row_variables()[0].name == "wide");
  CHECK(l.row_variables()[0].first_key == 0);
  CHECK(l.row_variables()[1].name == "emb");
  CHECK(l.row_variables()[1].first_key == 10);
  CHECK(l.rows().keys() == 14);
  CHECK(l.size() == 7);  // bias, then the 3x2 weights
  CHECK(l.variables_text() == "bias 1x1,dense/weights 3x2,wide rows 10x1,emb rows 4x3");
}

TEST_CASE("a key names its variable, its width and back its row") {
  const model_layout l = two_tables();
  const row_space& s = l.rows();
  CHECK(s.variable_of(0) == 0);
  CHECK(s.variable_of(9) == 0);
  CHECK(s.variable_of(10) == 1);
  CHECK(s.variable_of(13) == 1);
  CHECK(s.width_of(9) == 1);
  CHECK(s.width_of(10) == 3);
  CHECK(s.key_of(1, 2) == 12);
  CHECK(s.key_of(0, 9) == 9);
  CHECK_THROWS_WITH_AS(s.variable_of(14), "key 14 is outside the row variables' 14 keys",
                       std::out_of_range);
  CHECK_THROWS_AS(s.key_of(1, 4), std::out_of_range);
  CHECK_THROWS_AS(s.key_of(2, 0), std::out_of_range);
}

TEST_CASE("the values of keys are the sum of their variables' widths") {
  const model_layout l = two_tables();
  const row_space& s = l.rows();
  CHECK(s.values_for(std::vector<std::uint64_t>{}) == 0);
  CHECK(s.values_for(std::vector<std::uint64_t>{3, 9, 10, 13}) == 1 + 1 + 3 + 3);
  CHECK(s.values_for(std::vector<std::uint64_t>{12, 0}) == 4);
  CHECK(s.values_for(0, 14) == 10 + 12);
  CHECK(s.values_for(8, 11) == 2 + 3);
  CHECK(s.values_for(11, 11) == 0);
  CHECK_THROWS_AS(s.values_for(std::vector<std::uint64_t>{14}), std::out_of_range);
  CHECK_THROWS_AS(s.values_for(3, 15), std::out_of_range);
}

TEST_CASE("sizes past a size_t are refused, not wrapped") {
  const std::uint64_t half = std::uint64_t{1} << 62;
  const model_layout l("m", "",
                       {{.name = "a", .rows = half, .cols = 8, .store = storage::rows},
                        {.name = "b", .rows = half, .cols = 8, .store = storage::rows}});
  CHECK(l.rows().keys() == std::uint64_t{1} << 63);
  CHECK(l.rows().variable_of(half) == 1);
  CHECK_THROWS_AS(l.rows().values_for(0, half), std::length_error);
}

TEST_CASE("more than 2^63 rows in all are refused naming the variable past the limit") {
  const std::uint64_t half = std::uint64_t{1} << 62;
  CHECK(refusal({{.name = "a", .rows = half, .cols = 1, .store = storage::rows},
                 {.name = "b", .rows = half, .cols = 1, .store = storage::rows},
                 {.name = "c", .rows = 1, .cols = 1, .store = storage::rows}}) ==
        "m: variable c has 1 rows, taking the row variables past 2^63 rows in all");
}

TEST_CASE("variables are found by name, and a missing name is an error naming it") {
  const model_layout l = two_tables();
  CHECK(l.variable("dense/weights").offset == 1);
  CHECK(l.variable("dense/weights").update.rule == update_rule::adam);
  CHECK(l.row_variable("emb").first_key == 10);
  CHECK(l.row_variable("emb").update.learning_rate == 0.05f);
  CHECK(l.row_variable("wide").update.rule == update_rule::ftrl);
  CHECK(l.row_variable("wide").reg.l1 == 0.5f);
  CHECK_THROWS_WITH_AS(l.variable("nope"), "ctr: no variable named 'nope'", std::invalid_argument);
  CHECK_THROWS_WITH_AS(l.row_variable("nope"), "ctr: no row variable named 'nope'",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(l.variable("emb"), "ctr: variable emb is a row variable (see row_variable)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(l.row_variable("bias"), "ctr: variable bias is dense, not a row variable",
                       std::invalid_argument);
}

TEST_CASE("update settings and regularizers outside their ranges are refused by name") {
  CHECK(refusal({{.name = "w", .rows = 1, .cols = 1,
                  .update = {.rule = update_rule::adam, .beta1 = 1.0f}}}) ==
        "m: variable w (adam) has beta1 1.000000 (expected in [0, 1))");
  CHECK(refusal({{.name = "w", .rows = 1, .cols = 1,
                  .update = {.rule = update_rule::ftrl, .lr_power = 0.5f}}}) ==
        "m: variable w (ftrl) has lr_power 0.500000 (expected <= 0)");
  CHECK(refusal({{.name = "w", .rows = 1, .cols = 1,
                  .update = {.rule = update_rule::adagrad, .initial_accumulator = 0.0f}}}) ==
        "m: variable w (adagrad) has initial_accumulator 0.000000 (expected > 0 for adagrad)");
  CHECK(refusal({{.name = "w", .rows = 1, .cols = 1, .reg = {.l2 = -1.0f}}}) ==
        "m: variable w has regularizer l2 -1.000000 (expected >= 0)");
  CHECK(refusal({{.name = "w", .rows = 1, .cols = 1, .regularized = true, .reg = {.l2 = 1.0f}}}) ==
        "m: variable w is both regularized (the job's --l2) and has its own regularizer");
}

TEST_CASE("each rule keeps its number of slots and its name") {
  CHECK(slots_of(update_rule::sgd) == 0);
  CHECK(slots_of(update_rule::momentum) == 1);
  CHECK(slots_of(update_rule::adagrad) == 1);
  CHECK(slots_of(update_rule::adam) == 2);
  CHECK(slots_of(update_rule::ftrl) == 2);
  for (auto r : {update_rule::sgd, update_rule::momentum, update_rule::adagrad, update_rule::adam,
                 update_rule::ftrl})
    CHECK(update_rule_from(to_string(r)) == r);
  CHECK_FALSE(update_rule_from("rmsprop"));
}

TEST_CASE("a layout with several row variables is refused where the runtime holds one") {
  CHECK(only_row_variable(model_layout("m", "", {{.name = "w", .rows = 1, .cols = 1}})) ==
        nullptr);
  CHECK_THROWS_WITH_AS(only_row_variable(two_tables()),
                       "ctr: 2 row variables (this part of the runtime holds one)",
                       std::invalid_argument);
}

}  // namespace test_layout_rows
