// A CSV file as a data set: one example per line, comma-separated float
// features and one integer class label, in the first or the last column.
#pragma once

#include <memory>
#include <string>

#include "data/dataset.hpp"

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
// of another length, an empty file, a header without rows, or a file that
// cannot be read.
std::shared_ptr<const dataset> load_csv(const std::string& path, csv_label_column label);

}  // namespace downpour
