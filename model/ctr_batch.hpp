// A batch of a CTR model with one table per field (dlrm, wide_deep): its
// numeric inputs, and the rows each example looks up, gathered into the
// keys a worker pulls and the embedding bags' lists over them.
//
// The tables are the model's row variables in declaration order, so table t's
// row r is key first_key + r of the one key space (model/layout.hpp), and the
// values of the keys a worker pulls come concatenated in key order, each key
// as wide as its table. A bag reads consecutive tables of one width: its
// block of those values is contiguous.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "data/batcher.hpp"
#include "model/layers/embedding_bag.hpp"
#include "model/layout.hpp"

namespace downpour {

// A row variable as a CTR model declares it, and where its keys start.
struct ctr_table {
  std::string name;
  std::uint64_t rows = 0;
  std::size_t cols = 0;
  initializer init;
  update_spec update;
  regularizer reg;              // L1/L2 on its rows, applied by the runtime's update
  std::uint64_t first_key = 0;  // set by ctr_tables
};

// Tables [first_table, end_table): the rows one embedding bag sums.
struct ctr_bag {
  std::size_t first_table = 0;
  std::size_t end_table = 0;
};

// Where a bag's block of rows lies in the pulled values.
struct ctr_block {
  std::size_t first_value = 0;  // floats before it
  std::size_t rows = 0;
  std::size_t cols = 0;
};

// The tables with their first keys: each table's keys follow the last one's.
// Throws std::invalid_argument naming the table for 0 rows or columns, or a
// key space beyond 2^63.
std::vector<ctr_table> ctr_tables(const std::vector<ctr_table>& declared);

class ctr_batch {
 public:
  // Throws std::invalid_argument for a bag of no tables, outside tables, or
  // of tables of different widths.
  ctr_batch(std::vector<ctr_table> tables, std::vector<ctr_bag> bags, std::size_t numeric_width);

  // Begins a batch of n examples: numerics 0, no lookups.
  void start(std::size_t n);
  void set_numeric(std::size_t example, std::size_t column, float value) {
    numerics_[example * numeric_width_ + column] = value;
  }
  // Example `example` of bag `bag` looks up row `row` of table `table`: a
  // bag's lookups come in example order. row < the table's rows.
  void look_up(std::size_t bag, std::size_t example, std::size_t table, std::uint64_t row);
  // Gathers the keys and the bags' lists; the calls below read them.
  void finish();

  std::size_t size() const { return examples_; }
  std::size_t numeric_width() const { return numeric_width_; }
  const float* numerics() const { return numerics_.data(); }
  // Ascending, unique: the keys to pull.
  const std::vector<std::uint64_t>& keys() const { return keys_; }
  std::size_t values() const { return values_; }  // floats of keys()' values
  std::size_t bags() const { return bags_.size(); }
  layers::bag_lists lists(std::size_t bag) const;
  const ctr_block& block(std::size_t bag) const { return bags_[bag].block; }
  const std::vector<ctr_table>& tables() const { return tables_; }

 private:
  struct bag_state {
    ctr_bag tables;
    std::vector<std::uint64_t> keys;  // the lookups' keys, then their positions in the block
    std::vector<std::uint32_t> positions;
    std::vector<std::uint64_t> offsets;
    ctr_block block;
  };
  void close_lists(bag_state& b, std::size_t through_example) const;
  void place(bag_state& b);

  std::vector<ctr_table> tables_;
  std::vector<bag_state> bags_;
  std::size_t numeric_width_;
  std::size_t examples_ = 0;
  std::vector<float> numerics_;
  std::vector<std::uint64_t> keys_;
  std::size_t values_ = 0;
};

}  // namespace downpour
