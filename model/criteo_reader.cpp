#include "model/criteo_reader.hpp"

#include <stdexcept>
#include <string>

namespace downpour {

std::uint64_t criteo_row(std::uint64_t key, std::uint64_t table_rows) {
  constexpr std::uint64_t hash_bits = (std::uint64_t{1} << criteo_field_shift) - 1;
  return (key & hash_bits) % table_rows;
}

std::vector<ctr_table> field_embeddings(std::uint64_t rows, std::size_t dim,
                                        const update_spec& update) {
  constexpr float stddev = 0.05f;
  std::vector<ctr_table> out;
  for (std::size_t j = 0; j < criteo_categorical_fields; ++j)
    out.push_back({"embeddings/C" + std::to_string(j + 1), rows, dim,
                   {init_kind::truncated_normal, stddev}, update});
  return out;
}

void check_units(const std::string& kind, const std::string& option,
                 const std::vector<std::size_t>& units) {
  for (std::size_t u : units)
    if (u == 0) throw std::invalid_argument(kind + ": " + option + " has a layer of 0 units");
}

void check_embedding_dim(const std::string& kind, std::size_t dim) {
  if (dim == 0) throw std::invalid_argument(kind + ": --embedding-dim 0 (expected at least 1)");
}

std::string criteo_layout_spec(std::uint64_t rows, std::size_t dim,
                               const std::vector<std::vector<std::size_t>>& units) {
  std::string spec = std::to_string(rows) + "-" + std::to_string(dim);
  for (const auto& u : units) spec += "-" + units_text(u);
  return spec;
}

bool criteo_reader::same_as_last(const batch& b) const {
  return read_ && lookups_.size() == b.size && offsets_ == b.offsets && keys_ == b.keys &&
         values_ == b.values;
}

const ctr_batch& criteo_reader::read(const batch& b) {
  if (same_as_last(b)) return lookups_;
  if (b.offsets.size() < b.size + 1)
    throw std::invalid_argument(
        "ctr model: a batch without sparse features (the model needs --data-format=criteo)");
  read_ = false;
  lookups_.start(b.size);
  criteo_categoricals features{};
  for (std::size_t e = 0; e < b.size; ++e) {
    features.fill(0);
    for (std::uint64_t k = b.offsets[e]; k < b.offsets[e + 1]; ++k) {
      const std::size_t field = criteo_field_of(b.keys[k]);
      if (field < criteo_integer_fields)
        lookups_.set_numeric(e, field, b.values[k]);
      else
        features[field - criteo_integer_fields] = b.keys[k];
    }
    look_up(e, features);
  }
  lookups_.finish();
  offsets_ = b.offsets;
  keys_ = b.keys;
  values_ = b.values;
  read_ = true;
  return lookups_;
}

}  // namespace downpour
