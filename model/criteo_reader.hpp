// How dlrm and wide_deep read a Criteo batch (data/criteo.hpp): the integer
// fields' log(1 + x) as the numeric inputs, and per example its categorical
// features by field, handed to the design to look up in its tables.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
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

}  // namespace downpour
