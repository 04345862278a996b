// Criteo's display-advertising format (the standard CTR benchmark): one
// example a line, 40 tab-separated fields: the label (0 or 1), 13 integer
// fields I1..I13 and 26 categorical fields C1..C26, any of them empty
// (missing). Read as a sparse example, as DLRM's preprocessing does:
//  - integer field i (0-based, 0..12) is feature i with value log(1 + x),
//    and a negative or missing one is 0 (no feature);
//  - categorical field j with the text s is feature criteo_key(j, s), value
//    1: s hashed with its field, so equal strings of two fields are two
//    features; a missing one is no feature.
// A feature tells its field (criteo_field_of), so that a model with one
// table per field (dlrm, wide_deep) looks each up in its own; logreg and fm
// hash features into their rows (--sparse-rows) like libsvm's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace downpour {

inline constexpr std::size_t criteo_integer_fields = 13;
inline constexpr std::size_t criteo_categorical_fields = 26;
inline constexpr std::size_t criteo_fields = 1 + criteo_integer_fields + criteo_categorical_fields;

// A feature's field in the line's order without the label: 0..12 the integer
// fields I1..I13, 13..38 the categorical C1..C26.
inline constexpr std::size_t criteo_feature_fields = criteo_integer_fields + criteo_categorical_fields;

// A categorical feature keeps its field in the top bits of its key, a hash of
// its text in the rest (58 bits: two values of one field share a key once in
// 2^58 / values^2).
inline constexpr unsigned criteo_field_shift = 58;

// The feature of categorical field (0..25) with text value: its field
// (13 + field) in the top 6 bits, a hash of both below.
std::uint64_t criteo_key(std::size_t field, std::string_view value);

// The field (0..38, as criteo_feature_fields counts them) of a feature of a
// parsed line: the key itself for an integer field, the top bits for a
// categorical one. Throws std::invalid_argument naming the key for one no
// Criteo line gives (libsvm data read by a Criteo model).
std::size_t criteo_field_of(std::uint64_t key);

// The example of one line appended to keys and values in field order (not
// ascending, as libsvm's: the models hash features into rows, in any order),
// its label returned; nullopt for an empty line. Throws line_fault
// (data/line_reader.hpp) naming the column (in bytes) and the field.
std::optional<std::uint8_t> parse_criteo_line(std::string_view line,
                                              std::vector<std::uint64_t>& keys,
                                              std::vector<float>& values);

}  // namespace downpour
