#include "model/update_rule.hpp"

#include <cmath>

namespace downpour {
namespace {

constexpr const char* kNames[] = {"sgd", "momentum", "adagrad", "adam", "ftrl"};

bool non_negative(float x) { return std::isfinite(x) && x >= 0.0f; }

std::string bad(const char* setting, float value, const char* expected) {
  return std::string(setting) + " " + std::to_string(value) + " (expected " + expected + ")";
}

}  // namespace

std::size_t slots_of(update_rule rule) {
  switch (rule) {
    case update_rule::sgd: return 0;
    case update_rule::momentum:
    case update_rule::adagrad: return 1;
    case update_rule::adam:
    case update_rule::ftrl: return 2;
  }
  return 0;
}

const char* to_string(update_rule rule) { return kNames[static_cast<int>(rule)]; }

std::optional<update_rule> update_rule_from(const std::string& name) {
  for (int i = 0; i < 5; ++i)
    if (name == kNames[i]) return static_cast<update_rule>(i);
  return std::nullopt;
}

std::string update_spec_problem(const update_spec& s) {
  if (!non_negative(s.learning_rate)) return bad("learning_rate", s.learning_rate, ">= 0");
  if (!non_negative(s.momentum)) return bad("momentum", s.momentum, ">= 0");
  if (!non_negative(s.initial_accumulator))
    return bad("initial_accumulator", s.initial_accumulator, ">= 0");
  if (s.rule == update_rule::adagrad && s.initial_accumulator <= 0.0f)
    return bad("initial_accumulator", s.initial_accumulator, "> 0 for adagrad");
  if (!non_negative(s.beta1) || s.beta1 >= 1.0f) return bad("beta1", s.beta1, "in [0, 1)");
  if (!non_negative(s.beta2) || s.beta2 >= 1.0f) return bad("beta2", s.beta2, "in [0, 1)");
  if (!std::isfinite(s.epsilon) || s.epsilon <= 0.0f) return bad("epsilon", s.epsilon, "> 0");
  if (!non_negative(s.ftrl_l1)) return bad("ftrl_l1", s.ftrl_l1, ">= 0");
  if (!non_negative(s.ftrl_l2)) return bad("ftrl_l2", s.ftrl_l2, ">= 0");
  if (!std::isfinite(s.lr_power) || s.lr_power > 0.0f)
    return bad("lr_power", s.lr_power, "<= 0");
  return "";
}

std::string regularizer_problem(const regularizer& r) {
  if (!non_negative(r.l1)) return bad("l1", r.l1, ">= 0");
  if (!non_negative(r.l2)) return bad("l2", r.l2, ">= 0");
  return "";
}

}  // namespace downpour
