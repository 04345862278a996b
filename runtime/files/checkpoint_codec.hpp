// Internal to runtime/files: what the checkpoint file's writer
// (checkpoint_encode.cpp) and reader (checkpoint_format.cpp) share.
#pragma once

#include <zlib.h>

#include <cereal/archives/portable_binary.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "model/checkpoint_data.hpp"
#include "model/layout.hpp"

namespace downpour::checkpoint_codec {

using out_archive = cereal::PortableBinaryOutputArchive;
using in_archive = cereal::PortableBinaryInputArchive;
using u64 = std::uint64_t;

inline constexpr char magic[] = "DOWNPOUR-CKPT";
inline constexpr std::size_t magic_size = sizeof(magic) - 1;
// A read position on disk (format 4): the worker, then its seven counts.
inline constexpr u64 position_bytes = 4 + 7 * 8;

inline std::uint32_t crc_of(const char* data, std::size_t size) {
  auto crc = crc32_z(crc32_z(0, nullptr, 0), reinterpret_cast<const Bytef*>(data), size);
  return static_cast<std::uint32_t>(crc);
}

// The row variables' part of the header (checkpoint_rows.cpp). Formats 3
// and 4 hold at most one row variable (4 with a flag before it), its rule
// not stored: AdaGrad's if the file holds slots, else SGD. Format 5 holds a
// count, then each variable's name, rows, cols and rule.
bool needs_row_format(const model_layout& layout);  // format 5: several, or another rule
void write_row_variables(out_archive& ar, const model_layout& layout, std::uint32_t format);
std::vector<row_variable_info> read_row_variables(in_archive& ar, std::uint32_t format);

// The rows' keys ascending inside the key space, each key's values and
// slots (all or none) as wide as its variable and rule say; else why not.
std::string row_contents_problem(const checkpoint& c);

}  // namespace downpour::checkpoint_codec
