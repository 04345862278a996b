// A CSV file as a data set: one example per line, comma-separated float
// features and one integer class label, in the first or the last column.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "data/dataset.hpp"
#include "data/line_reader.hpp"

namespace downpour {

enum class csv_label_column { first, last };

// Reads the whole file. The first line is a header if one of its feature
// fields is not a number; every line must have as many fields as the first.
// Blank lines may end the file; CRLF line ends and a UTF-8 byte order mark
// are accepted, spaces and tabs around a field ignored. Quoted fields are
// refused: only numbers are read, so a quote means the file is not what is
// expected. Throws data_error naming the file, line and column (1-based, in
// fields) of the first fault: a field that is not a number, a NaN or
// infinite feature, a label that is not a non-negative 32-bit integer, a row
// of another length, an empty file, a header without rows, a line longer
// than max_line_bytes (--max-line-bytes), or a file that cannot be read.
// A gzip file is read through zlib, as the streamed readers do.
std::shared_ptr<const dataset> load_csv(const std::string& path, csv_label_column label,
                                        std::size_t max_line_bytes = default_max_line_bytes);

// One line at a time, for the reader above and the streamed one
// (data/text_format.hpp). Faults are line_fault with the column counted in
// fields (1-based), as the reader's messages name it.

// A line as the CSV readers see it: without the '\r' of a CRLF line end and,
// at offset 0 (a file's start), without a UTF-8 byte order mark.
std::string_view csv_line_text(std::string_view line, std::uint64_t offset);

// A file's rows: fields per line, and the label's column (1-based).
struct csv_row_layout {
  std::size_t fields = 0;
  std::size_t label_column = 0;
};

// The layout the first line of a file fixes. Throws line_fault for fewer
// than 2 fields.
csv_row_layout csv_layout_of(std::string_view first_line, csv_label_column label);

// A header line: one of its feature fields is not a number.
bool csv_is_header(std::string_view line, const csv_row_layout& layout);

// The row's label; its features (fields - 1 floats) written to features.
std::int32_t parse_csv_row(std::string_view line, const csv_row_layout& layout, float* features);

}  // namespace downpour
