// The tables of a model's row variables, as one store over the model's key
// space: one sparse_table per row variable, each keyed by its own key range
// (model/layout.hpp, row_space). A list of keys (ascending, unique) is a run
// of keys per table; its values are each key's cols floats, concatenated in
// key order, and its slots likewise (each key its rule's slots).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "model/sparse_table.hpp"

namespace downpour {

// The tables' specs in key order, covering keys [0, keys()).
struct row_tables_spec {
  std::vector<sparse_table_spec> tables;

  bool empty() const { return tables.empty(); }
  std::uint64_t keys() const { return tables.empty() ? 0 : tables.back().end_key(); }
  // The table of key (which must be below keys()).
  std::size_t table_of(std::uint64_t key) const;
  // Floats of the keys [first, last) of an ascending list: their values, and
  // their slots. Throw std::length_error on overflow.
  std::size_t values_for(const std::uint64_t* first, const std::uint64_t* last) const;
  std::size_t slots_for(const std::uint64_t* first, const std::uint64_t* last) const;
  std::size_t values_for(const std::vector<std::uint64_t>& keys) const {
    return values_for(keys.data(), keys.data() + keys.size());
  }
  std::size_t slots_for(const std::vector<std::uint64_t>& keys) const {
    return slots_for(keys.data(), keys.data() + keys.size());
  }
  // The most floats of one row: its values and slots (for page sizes).
  std::size_t widest_row() const;
};

// The tables of layout's row variables (none for a dense model), rows drawn
// from seed as each initializer says, updated by each variable's rule.
row_tables_spec row_tables_of(const model_layout& layout, std::uint64_t seed);

class row_tables {
 public:
  // Throws std::invalid_argument for tables not one after another from key 0.
  explicit row_tables(const row_tables_spec& spec);

  const row_tables_spec& spec() const { return spec_; }
  std::uint64_t rows_held() const;
  std::size_t bytes_used() const;

  std::optional<sparse_refusal> check_keys(const std::vector<std::uint64_t>& keys) const;
  // As sparse_table's, over all tables: values in key order, each key its
  // table's dim floats.
  std::vector<float> pull(const std::vector<std::uint64_t>& keys) const;
  std::optional<sparse_refusal> push(const keyed_rows& gradient, update_moment at);

  // As sparse_table's, over all tables: the values written to into
  // (spec().values_for(keys) floats), each key's row in its own table.
  std::vector<row_ref> read(const std::vector<std::uint64_t>& keys, float* into) const;
  // As sparse_table's, gradient in pull's order; refs from read of these
  // keys, or none: every key looked up.
  void apply(const std::vector<std::uint64_t>& keys, const std::vector<row_ref>& refs,
             const float* gradient, update_moment at);
  std::uint64_t refused(sparse_refusal why) const;
  row_dump dump(std::uint64_t first, std::uint64_t last) const;
  // Replaces every table's rows (a restore); throws std::invalid_argument
  // as sparse_table::load, naming the key.
  void load(const row_dump& rows);

  // TensorFlow's SparseConditionalAccumulator rule for a sync round (see
  // mean_per_row), each key its table's width.
  keyed_rows mean_per_row(const std::vector<keyed_rows>& gradients) const;

 private:
  // The tables' runs of keys: table t holds keys [cuts[t], cuts[t + 1]).
  std::vector<std::size_t> cuts(const std::vector<std::uint64_t>& keys) const;

  row_tables_spec spec_;
  std::vector<sparse_table> tables_;
  std::array<std::uint64_t, kSparseRefusals> refused_{};
};

}  // namespace downpour
