#include "model/dense_rules.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "model/row_update.hpp"

namespace downpour {

bool plain_sgd(const variable_info& v) {
  return v.update.rule == update_rule::sgd && v.update.learning_rate <= 0.0f &&
         v.reg.l1 == 0.0f && v.reg.l2 == 0.0f;
}

dense_rules::dense_rules(std::vector<variable_info> vars, const std::vector<std::uint64_t>& ranges)
    : vars_(std::move(vars)) {
  for (std::size_t v = 0, at = 0; v < vars_.size(); ++v) {
    whole_at_.push_back(at);
    at += slots_of(vars_[v].update.rule) * vars_[v].size();
  }
  std::size_t local = 0;
  for (std::size_t r = 0; r + 1 < ranges.size(); r += 2) {
    const std::size_t begin = ranges[r], end = begin + ranges[r + 1];
    for (std::size_t v = 0; v < vars_.size(); ++v) {
      const variable_info& var = vars_[v];
      const std::size_t from = std::max(begin, var.offset);
      const std::size_t to = std::min(end, var.offset + var.size());
      if (from >= to || plain_sgd(var)) continue;
      segments_.push_back({local + (from - begin), to - from, v, from - var.offset, slots_.size()});
      values_ += to - from;
      slots_.resize(slots_.size() + slots_of(var.update.rule) * (to - from));
      fill_initial_slots(var.update, slots_.data() + segments_.back().slot_at, to - from);
    }
    local += end - begin;
  }
}

void dense_rules::set_slots(std::vector<float> slots) {
  if (slots.size() != slots_.size())
    throw std::invalid_argument("dense slots of " + std::to_string(slots.size()) +
                                " floats for a shard holding " + std::to_string(slots_.size()));
  slots_ = std::move(slots);
}

void dense_rules::apply(std::size_t s, float* w, const float* g, update_moment at) {
  const dense_segment& seg = segments_[s];
  const variable_info& v = vars_[seg.variable];
  const row_update update(v.update, v.reg, at.learning_rate, at.step);
  update.apply(w, slots_.data() + seg.slot_at, g, seg.size);
}

void dense_rules::copy_out(float* whole) const {
  for (const auto& seg : segments_) {
    const variable_info& v = vars_[seg.variable];
    for (std::size_t k = 0; k < slots_of(v.update.rule); ++k)
      std::copy_n(slots_.data() + seg.slot_at + k * seg.size, seg.size,
                  whole + whole_at_[seg.variable] + k * v.size() + seg.first);
  }
}

void dense_rules::copy_in(const float* whole) {
  for (const auto& seg : segments_) {
    const variable_info& v = vars_[seg.variable];
    for (std::size_t k = 0; k < slots_of(v.update.rule); ++k)
      std::copy_n(whole + whole_at_[seg.variable] + k * v.size() + seg.first, seg.size,
                  slots_.data() + seg.slot_at + k * seg.size);
  }
}

std::size_t whole_slot_count(const std::vector<variable_info>& vars) {
  std::size_t n = 0;
  for (const auto& v : vars) n += slots_of(v.update.rule) * v.size();
  return n;
}

std::vector<float> whole_slots(const std::vector<variable_info>& vars,
                               const std::vector<dense_slot_part>& parts) {
  std::vector<float> whole(whole_slot_count(vars));
  if (whole.empty()) return whole;
  for (const auto& part : parts) {
    dense_rules rules(vars, part.ranges);
    rules.set_slots(part.slots);
    rules.copy_out(whole.data());
  }
  return whole;
}

std::vector<float> shard_slots(const std::vector<variable_info>& vars,
                               const std::vector<std::uint64_t>& ranges,
                               const std::vector<float>& whole) {
  dense_rules rules(vars, ranges);
  if (whole.size() != whole_slot_count(vars))
    throw std::invalid_argument("dense slots of " + std::to_string(whole.size()) +
                                " floats for a model of " +
                                std::to_string(whole_slot_count(vars)));
  rules.copy_in(whole.data());
  return rules.slots();
}

}  // namespace downpour
