// Criteo's display-advertising format (the standard CTR benchmark): one
// example a line, 40 tab-separated fields: the label (0 or 1), 13 integer
// fields I1..I13 and 26 categorical fields C1..C26, any of them empty
// (missing). Read as a sparse example, as DLRM's preprocessing does:
//  - integer field i (0-based, 0..12) is feature i with value log(1 + x),
//    and a negative or missing one is 0 (no feature);
//  - categorical field j with the text s is feature criteo_key(j, s), value
//    1: s hashed with its field, so equal strings of two fields are two
//    features; a missing one is no feature.
// The model hashes features into its rows (--sparse-rows) like libsvm's.
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

// The feature of categorical field (0..25) with text value: a 64-bit hash
// of both, never one of the integer fields' 0..12.
std::uint64_t criteo_key(std::size_t field, std::string_view value);

// The example of one line appended to keys and values in field order (not
// ascending, as libsvm's: the models hash features into rows, in any order),
// its label returned; nullopt for an empty line. Throws line_fault
// (data/line_reader.hpp) naming the column (in bytes) and the field.
std::optional<std::uint8_t> parse_criteo_line(std::string_view line,
                                              std::vector<std::uint64_t>& keys,
                                              std::vector<float>& values);

}  // namespace downpour
