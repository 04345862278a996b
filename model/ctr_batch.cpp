#include "model/ctr_batch.hpp"

#include <algorithm>
#include <stdexcept>

namespace downpour {
namespace {

constexpr std::uint64_t max_keys = std::uint64_t{1} << 63;

}  // namespace

std::vector<ctr_table> ctr_tables(const std::vector<ctr_table>& declared) {
  std::vector<ctr_table> out;
  std::uint64_t next = 0;
  for (ctr_table t : declared) {
    if (t.rows == 0 || t.cols == 0)
      throw std::invalid_argument("ctr model: table " + t.name + " has " + std::to_string(t.rows) +
                                  " rows of " + std::to_string(t.cols) + " (expected at least 1)");
    if (t.rows > max_keys - next)
      throw std::invalid_argument("ctr model: table " + t.name +
                                  " takes the model's keys beyond 2^63");
    t.first_key = next;
    next += t.rows;
    out.push_back(std::move(t));
  }
  return out;
}

ctr_batch::ctr_batch(std::vector<ctr_table> tables, std::vector<ctr_bag> bags,
                     std::size_t numeric_width)
    : tables_(std::move(tables)), numeric_width_(numeric_width) {
  for (const ctr_bag& b : bags) {
    if (b.first_table >= b.end_table || b.end_table > tables_.size())
      throw std::invalid_argument("ctr model: a bag of tables [" + std::to_string(b.first_table) +
                                  ", " + std::to_string(b.end_table) + "), expected some of the " +
                                  std::to_string(tables_.size()));
    for (std::size_t t = b.first_table; t < b.end_table; ++t)
      if (tables_[t].cols != tables_[b.first_table].cols)
        throw std::invalid_argument("ctr model: a bag reads table " + tables_[t].name + " of " +
                                    std::to_string(tables_[t].cols) + " columns after one of " +
                                    std::to_string(tables_[b.first_table].cols));
    bag_state s;
    s.tables = b;
    s.block.cols = tables_[b.first_table].cols;
    bags_.push_back(std::move(s));
  }
}

void ctr_batch::start(std::size_t n) {
  examples_ = n;
  numerics_.assign(n * numeric_width_, 0.0f);
  for (bag_state& b : bags_) {
    b.keys.clear();
    b.offsets.assign(1, 0);
  }
}

// Examples up to through_example - 1 have all their lookups.
void ctr_batch::close_lists(bag_state& b, std::size_t through_example) const {
  while (b.offsets.size() < through_example + 1) b.offsets.push_back(b.keys.size());
}

void ctr_batch::look_up(std::size_t bag, std::size_t example, std::size_t table,
                        std::uint64_t row) {
  bag_state& b = bags_[bag];
  if (example + 1 < b.offsets.size())
    throw std::logic_error("ctr_batch: a lookup of example " + std::to_string(example) +
                           " after one of a later example");
  close_lists(b, example);
  b.keys.push_back(tables_[table].first_key + row);
}

// The bag's block: the keys of its tables among all keys; its lookups
// become positions in it.
void ctr_batch::place(bag_state& b) {
  const std::uint64_t first = tables_[b.tables.first_table].first_key;
  const std::uint64_t end = b.tables.end_table < tables_.size()
                                ? tables_[b.tables.end_table].first_key
                                : tables_.back().first_key + tables_.back().rows;
  const auto lo = std::lower_bound(keys_.begin(), keys_.end(), first);
  const auto hi = std::lower_bound(lo, keys_.end(), end);
  b.positions.resize(b.keys.size());
  for (std::size_t i = 0; i < b.keys.size(); ++i)
    b.positions[i] = static_cast<std::uint32_t>(std::lower_bound(lo, hi, b.keys[i]) - lo);
  b.block.rows = static_cast<std::size_t>(hi - lo);
}

void ctr_batch::finish() {
  keys_.clear();
  for (bag_state& b : bags_) {
    close_lists(b, examples_);
    keys_.insert(keys_.end(), b.keys.begin(), b.keys.end());
  }
  std::sort(keys_.begin(), keys_.end());
  keys_.erase(std::unique(keys_.begin(), keys_.end()), keys_.end());
  for (bag_state& b : bags_) place(b);
  // Blocks follow each other in key order, as the tables do.
  std::vector<std::size_t> order(bags_.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    return bags_[x].tables.first_table < bags_[y].tables.first_table;
  });
  values_ = 0;
  for (std::size_t k : order) {
    bags_[k].block.first_value = values_;
    values_ += bags_[k].block.rows * bags_[k].block.cols;
  }
}

layers::bag_lists ctr_batch::lists(std::size_t bag) const {
  const bag_state& b = bags_[bag];
  return {examples_, b.offsets.data(), b.positions.data()};
}

}  // namespace downpour
