// Sparse examples held in memory: what the libsvm and Criteo readers give
// and what a program's own reader of sparse data returns
// (data/data_reader.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace downpour {

// Examples in CSR form: example i's features are keys/values
// [offsets[i], offsets[i + 1]).
struct sparse_examples {
  std::vector<std::uint64_t> offsets{0};
  std::vector<std::uint64_t> keys;
  std::vector<float> values;
  std::vector<std::uint8_t> labels;  // 0 or 1

  std::size_t size() const { return labels.size(); }
  std::size_t nonzeros() const { return keys.size(); }
  // Appends one example whose features were pushed onto keys and values.
  void close_example(std::uint8_t label) {
    labels.push_back(label);
    offsets.push_back(keys.size());
  }
};

}  // namespace downpour
