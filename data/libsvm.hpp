// libsvm-format data for sparse binary classification: one example a line,
// `label index:value index:value ... [# comment]`, held in compressed sparse
// rows (CSR). Labels 0/1 (or -1/+1, read as 0/1); indices are non-negative
// 64-bit integers, strictly ascending within a line (as libsvm itself
// requires); values are finite floats. Blank and comment-only lines are
// skipped. Every malformed line is one data_error naming the file, line and
// column. A gzip-compressed file is read as its text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "data/dataset.hpp"
#include "data/line_reader.hpp"
#include "data/sparse_examples.hpp"

namespace downpour {

// The example of one libsvm line appended to keys and values (the label
// returned), or nullopt for a blank or comment-only line. Throws
// line_fault (data/line_reader.hpp) naming the column and the fault.
std::optional<std::uint8_t> parse_libsvm_line(std::string_view line,
                                              std::vector<std::uint64_t>& keys,
                                              std::vector<float>& values);

// Reads a libsvm file (plain or gzip) block by block, so a trainer can
// stream a file larger than it wants to hold. Not copyable.
class libsvm_reader {
 public:
  // Throws data_error if the file cannot be opened.
  explicit libsvm_reader(std::string path, std::size_t max_line_bytes = default_max_line_bytes);
  ~libsvm_reader();
  libsvm_reader(const libsvm_reader&) = delete;
  libsvm_reader& operator=(const libsvm_reader&) = delete;

  // The next max_examples examples (fewer at the end of the file, none after
  // it). Throws data_error for a malformed line or a read error.
  sparse_examples next(std::size_t max_examples);

 private:
  byte_reader bytes_;
  line_reader lines_;
};

// The whole file. Throws data_error, also for a file without examples.
sparse_examples load_libsvm(const std::string& path,
                            std::size_t max_line_bytes = default_max_line_bytes);

// Examples held in memory as a data set: sparse(), no fixed features
// (features() is 0, copy_features writes nothing), labels 0 or 1.
class libsvm_set final : public dataset {
 public:
  explicit libsvm_set(sparse_examples examples) : examples_(std::move(examples)) {}
  std::size_t size() const override { return examples_.size(); }
  std::size_t features() const override { return 0; }
  void copy_features(std::size_t /*i*/, float* /*out*/) const override {}
  std::int32_t label(std::size_t i) const override { return examples_.labels[i]; }
  bool sparse() const override { return true; }
  sparse_row sparse_features(std::size_t i) const override {
    const std::uint64_t first = examples_.offsets[i];
    return {examples_.keys.data() + first, examples_.values.data() + first,
            static_cast<std::size_t>(examples_.offsets[i + 1] - first)};
  }
  const sparse_examples& examples() const { return examples_; }

 private:
  sparse_examples examples_;
};

// The examples as libsvm lines (labels 0/1, values in their shortest exact
// form): what load_libsvm reads back as the same examples.
std::string libsvm_text(const sparse_examples& set);

}  // namespace downpour
