// The line formats streamed from --train-file and --test-file, and the one
// parser that turns a line of any of them into an example of a batch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "data/batcher.hpp"
#include "data/csv.hpp"
#include "data/line_reader.hpp"

namespace downpour {

enum class text_format {
  libsvm,  // label index:value ... (data/libsvm.hpp), sparse
  criteo,  // label, I1..I13, C1..C26, tab-separated (data/criteo.hpp), sparse
  csv,     // comma-separated numbers and an integer label (data/csv.hpp), dense
};

struct text_spec {
  text_format format = text_format::libsvm;
  csv_label_column label = csv_label_column::first;  // csv
  std::size_t max_line_bytes = default_max_line_bytes;
};

inline bool is_sparse(text_format f) { return f != text_format::csv; }

// Appends examples to a batch (size, y, origins, and offsets/keys/values
// or x). A CSV file's number of fields is fixed by the first line of the
// first file (csv_fields_of), the same for every file.
class example_parser {
 public:
  // csv_classes > 0: a CSV label from it on is refused (the model has that
  // many classes).
  example_parser(text_spec spec, std::size_t csv_fields, std::size_t csv_classes = 0);
  // The example of the line at offset of file `file`, if it holds one (not
  // blank, a comment, or a CSV file's header line). Throws line_fault.
  bool parse(std::string_view line, std::uint32_t file, std::uint64_t offset, batch& out) const;
  bool sparse() const { return is_sparse(spec_.format); }
  std::size_t features() const;  // per example of a dense format, else 0
  const text_spec& spec() const { return spec_; }

 private:
  text_spec spec_;
  csv_row_layout csv_;
  std::size_t csv_classes_ = 0;
};

// An empty batch of the parser's kind (offsets {0} when sparse).
void clear_batch(batch& b, const example_parser& parser);

// The fields of a CSV file, from its first non-blank line. Throws data_error.
std::size_t csv_fields_of(const std::string& path, const text_spec& spec);

}  // namespace downpour
