// How a variable is updated from its gradient: its optimizer (TensorFlow
// 1.x's, with their defaults) and its regulariser. A shard keeps a row's
// optimizer state (slots) next to the row.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace downpour {

enum class update_rule { sgd, momentum, adagrad, adam, ftrl };

struct update_spec {
  update_rule rule = update_rule::sgd;
  float learning_rate = 0.0f;  // 0: the job's schedule (--learning-rate, decay); else fixed
  float momentum = 0.9f;                                  // momentum
  float initial_accumulator = 0.1f;                       // adagrad, ftrl
  float beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-8f;    // adam
  float ftrl_l1 = 0.0f, ftrl_l2 = 0.0f, lr_power = -0.5f;  // ftrl (McMahan 2013, TF FtrlOptimizer)
};

// L1 and L2 on the variable's values, applied once, by the runtime's update:
// the gradient gains l1 * sign(w) + l2 * w (TF's l1_l2_regularizer with
// l2_loss's 1/2, so the L2 term of the loss is l2 * sum(w^2) / 2).
struct regularizer {
  float l1 = 0.0f;
  float l2 = 0.0f;
};

// Floats of optimizer state per float of the variable: sgd 0, momentum 1
// (the velocity), adagrad 1 (the accumulator), adam 2 (m, v), ftrl 2 (n, z).
std::size_t slots_of(update_rule rule);

// "sgd", "momentum", "adagrad", "adam", "ftrl".
const char* to_string(update_rule rule);
std::optional<update_rule> update_rule_from(const std::string& name);

// Why spec cannot be used (a negative or non-finite setting, betas outside
// [0, 1), ftrl's lr_power above 0...), as a phrase naming the setting and
// its value; empty if it can.
std::string update_spec_problem(const update_spec& spec);
std::string regularizer_problem(const regularizer& reg);

}  // namespace downpour
