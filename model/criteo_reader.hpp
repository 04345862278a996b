// How dlrm and wide_deep read a Criteo batch (data/criteo.hpp): the integer
// fields' log(1 + x) as the numeric inputs, and per example its categorical
// features by field, handed to the design to look up in its tables.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/criteo.hpp"
#include "model/ctr_network.hpp"

namespace downpour {

// An example's categorical features, field by field; 0 where a field is
// missing (no categorical key is 0: its field is in its top bits).
using criteo_categoricals = std::array<std::uint64_t, criteo_categorical_fields>;

// The row of table_rows a categorical feature hashes into.
std::uint64_t criteo_row(std::uint64_t key, std::uint64_t table_rows);

class criteo_reader : public ctr_reader {
 public:
  // lookups: the design's tables and bags, numeric width 13.
  explicit criteo_reader(ctr_batch lookups) : lookups_(std::move(lookups)) {}
  // Throws std::invalid_argument naming the key for a feature that is not
  // a Criteo one, or for a batch without sparse features.
  const ctr_batch& read(const batch& b) final;

 protected:
  // Example e's lookups into lookups(), in bag order per example.
  virtual void look_up(std::size_t example, const criteo_categoricals& features) = 0;
  ctr_batch& lookups() { return lookups_; }

 private:
  bool same_as_last(const batch& b) const;

  ctr_batch lookups_;
  bool read_ = false;
  std::vector<std::uint64_t> offsets_, keys_;
  std::vector<float> values_;
};

// The 26 fields' embedding tables, "embeddings/C1".."embeddings/C26", each
// of rows x dim from a truncated normal of stddev 0.05, updated by update.
std::vector<ctr_table> field_embeddings(std::uint64_t rows, std::size_t dim,
                                        const update_spec& update);

// Throws std::invalid_argument naming kind and option for an MLP layer of 0 units.
void check_units(const std::string& kind, const std::string& option,
                 const std::vector<std::size_t>& units);
// Throws std::invalid_argument naming kind for an embedding width of 0.
void check_embedding_dim(const std::string& kind, std::size_t dim);

// "N-D-units-units...": each table's rows, the embedding width, then each
// MLP's hidden units, as a Criteo design's layout names its shape.
std::string criteo_layout_spec(std::uint64_t rows, std::size_t dim,
                               const std::vector<std::vector<std::size_t>>& units);

// A Criteo design's parts: its layout's kind and spec, the update of its
// graph's dense variables, its tables (as declared), bags and tables' rows.
struct criteo_parts {
  std::string kind;
  std::string spec;
  update_spec dense_update;
  std::vector<ctr_table> tables;
  std::vector<ctr_bag> bags;
  std::uint64_t rows = 0;
};

// What a design on Criteo data shares: its tables and bags, its Reader
// (a criteo_reader made from them and the tables' rows), its graph in
// both scalars (Design::graph<T>()) and its layout.
template <class Design, class Reader>
class criteo_design : public ctr_design {
 public:
  explicit criteo_design(criteo_parts parts)
      : kind_(std::move(parts.kind)),
        spec_(std::move(parts.spec)),
        dense_update_(parts.dense_update),
        tables_(ctr_tables(parts.tables)),
        bags_(std::move(parts.bags)),
        rows_(parts.rows) {}

  model_layout layout() const final {
    return ctr_layout(kind_, spec_, float_graph().variables(), dense_update_, tables_);
  }
  const std::vector<ctr_table>& tables() const final { return tables_; }
  std::unique_ptr<ctr_reader> reader() const final {
    return std::make_unique<Reader>(ctr_batch(tables_, bags_, criteo_integer_fields), rows_);
  }
  layers::graph<float> float_graph() const final { return design().template graph<float>(); }
  layers::graph<double> double_graph() const final { return design().template graph<double>(); }

 private:
  const Design& design() const { return static_cast<const Design&>(*this); }

  std::string kind_, spec_;
  update_spec dense_update_;
  std::vector<ctr_table> tables_;
  std::vector<ctr_bag> bags_;
  std::uint64_t rows_;
};

}  // namespace downpour
