// Internal to runtime/files: what the checkpoint file's writer
// (checkpoint_encode.cpp) and reader (checkpoint_format.cpp) share.
#pragma once

#include <zlib.h>

#include <cereal/archives/portable_binary.hpp>
#include <cstddef>
#include <cstdint>

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

}  // namespace downpour::checkpoint_codec
