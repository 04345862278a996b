// libsvm-format data for sparse binary classification: one example a line,
// `label index:value index:value ... [# comment]`, held in compressed sparse
// rows (CSR). Labels 0/1 (or -1/+1, read as 0/1); indices are non-negative
// 64-bit integers, strictly ascending within a line (as libsvm itself
// requires); values are finite floats. Blank and comment-only lines are
// skipped. Every malformed line is one data_error naming the file, line and
// column.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "data/dataset.hpp"

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

// Reads a libsvm file block by block, so a trainer can stream a file larger
// than it wants to hold. Not copyable.
class libsvm_reader {
 public:
  // Throws data_error if the file cannot be opened or is gzip-compressed.
  explicit libsvm_reader(std::string path);
  ~libsvm_reader();
  libsvm_reader(const libsvm_reader&) = delete;
  libsvm_reader& operator=(const libsvm_reader&) = delete;

  // The next max_examples examples (fewer at the end of the file, none after
  // it). Throws data_error for a malformed line or a read error.
  sparse_examples next(std::size_t max_examples);

 private:
  bool refill();
  void parse_line(const char* begin, const char* end);

  std::string path_;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file_;
  std::vector<char> buffer_;
  std::size_t begin_ = 0;  // unparsed bytes are buffer_[begin_, end_)
  std::size_t end_ = 0;
  bool eof_ = false;
  std::uint64_t line_ = 0;  // of the last line parsed
  sparse_examples block_;   // what next() has read so far
};

// The whole file. Throws data_error, also for a file without examples.
sparse_examples load_libsvm(const std::string& path);

// The examples as libsvm lines (labels 0/1, values in their shortest exact
// form): what load_libsvm reads back as the same examples.
std::string libsvm_text(const sparse_examples& set);

}  // namespace downpour
