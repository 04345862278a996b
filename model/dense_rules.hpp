// The dense variables' own rules (model/update_rule.hpp) over the part of the
// flat buffer a parameter shard owns. A shard's ranges may cut a variable:
// each piece of a variable in a range is a segment, updated as one long row
// by row_update, with its slots held next to it. Variables of plain SGD at
// the job's schedule with no regularizer have no segment: the shard's SGD
// kernel (model/update.hpp) already updates them, at its speed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/layout.hpp"
#include "model/sparse_table.hpp"

namespace downpour {

// True if v trains by the shard's SGD kernel alone: rule sgd at the job's
// learning rate, no regularizer.
bool plain_sgd(const variable_info& v);

struct dense_segment {
  std::size_t local = 0;     // first value in the shard's values (its ranges concatenated)
  std::size_t size = 0;
  std::size_t variable = 0;  // in the layout's dense variables
  std::size_t first = 0;     // first value within the variable
  std::size_t slot_at = 0;   // first slot in the shard's slots
};

class dense_rules {
 public:
  dense_rules() = default;
  // vars: the layout's dense variables; ranges: the shard's offset/size
  // pairs in buffer order. Slots start at their initial value.
  dense_rules(std::vector<variable_info> vars, const std::vector<std::uint64_t>& ranges);

  bool plain() const { return segments_.empty(); }
  const std::vector<dense_segment>& segments() const { return segments_; }
  const std::vector<variable_info>& variables() const { return vars_; }
  std::size_t values() const { return values_; }  // floats of all segments

  // Every segment's slots, segment after segment, each slot a block of the
  // segment's size (row_update's order).
  const std::vector<float>& slots() const { return slots_; }
  // Replaces them; throws std::invalid_argument unless there are slot_count().
  void set_slots(std::vector<float> slots);

  // One update of segment s: w holds its current values and gets the new
  // ones; g is its gradient.
  void apply(std::size_t s, float* w, const float* g, update_moment at);

  // The model's dense slots as a checkpoint keeps them (whole_slot_count),
  // copied from, and into, this shard's slots: only the parts it holds.
  void copy_out(float* whole) const;
  void copy_in(const float* whole);

 private:
  std::vector<variable_info> vars_;
  std::vector<dense_segment> segments_;
  std::vector<float> slots_;
  std::vector<std::size_t> whole_at_;  // each variable's first slot in the whole model's
  std::size_t values_ = 0;
};

// Floats of a model's dense slots in a checkpoint: each dense variable's
// slots (none for sgd) in declaration order, slot after slot, each of the
// variable's size. The order does not depend on the shards.
std::size_t whole_slot_count(const std::vector<variable_info>& vars);

// One shard's slots as its snapshot gives them, with its ranges.
struct dense_slot_part {
  std::vector<std::uint64_t> ranges;
  std::vector<float> slots;
};

// The whole model's slots from every shard's part; empty when no variable
// has slots. Throws std::invalid_argument for a part of the wrong size.
std::vector<float> whole_slots(const std::vector<variable_info>& vars,
                               const std::vector<dense_slot_part>& parts);

// A shard's slots (dense_rules order) cut from the whole model's.
std::vector<float> shard_slots(const std::vector<variable_info>& vars,
                               const std::vector<std::uint64_t>& ranges,
                               const std::vector<float>& whole);

}  // namespace downpour
