#include "runtime/files/npz.hpp"

#include <zip.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <numeric>

#include "runtime/files/durable_write.hpp"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "npz.cpp writes numbers as they lie in memory and labels them little-endian ('<f4', '<u8')"
#endif

namespace downpour {
namespace {

using source_ptr = std::unique_ptr<zip_source_t, decltype(&zip_source_free)>;
using archive_ptr = std::unique_ptr<zip_t, decltype(&zip_discard)>;

std::string shape_tuple(const std::vector<std::size_t>& shape) {
  std::string text = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  // A one-element tuple needs its comma in Python.
  return text + (shape.size() == 1 ? ",)" : ")");
}

[[noreturn]] void fail(const std::string& what, zip_error_t* error) {
  throw npz_error("npz: " + what + ": " + zip_error_strerror(error));
}

[[noreturn]] void fail(const std::string& what, zip_t* archive) {
  fail(what, zip_get_error(archive));
}

// For an error of our own rather than one an archive or source holds.
[[noreturn]] void fail_and_free(const std::string& what, zip_error_t& error) {
  std::string message = "npz: " + what + ": " + zip_error_strerror(&error);
  zip_error_fini(&error);
  throw npz_error(message);
}

void add_member(zip_t* archive, const std::string& name, const std::string& bytes) {
  zip_source_t* source = zip_source_buffer(archive, bytes.data(), bytes.size(), 0);
  if (!source) fail("cannot add " + name, archive);
  zip_int64_t index = zip_file_add(archive, name.c_str(), source, ZIP_FL_ENC_UTF_8);
  if (index < 0) {
    zip_source_free(source);
    fail("cannot add " + name, archive);
  }
  if (zip_set_file_compression(archive, static_cast<zip_uint64_t>(index), ZIP_CM_STORE, 0) != 0)
    fail("cannot store " + name, archive);
}

std::string read_source(zip_source_t* source) {
  zip_stat_t stat;
  zip_stat_init(&stat);
  if (zip_source_open(source) != 0) fail("cannot read the archive", zip_source_error(source));
  std::string bytes;
  if (zip_source_stat(source, &stat) == 0 && (stat.valid & ZIP_STAT_SIZE)) {
    bytes.resize(stat.size);
    zip_int64_t n = zip_source_read(source, bytes.data(), stat.size);
    if (n < 0 || static_cast<zip_uint64_t>(n) != stat.size) bytes.clear();
  }
  zip_source_close(source);
  if (bytes.empty()) fail("cannot read the archive", zip_source_error(source));
  return bytes;
}

}  // namespace

std::string npy_bytes(const std::vector<std::size_t>& shape, const void* data, npy_dtype dtype) {
  const bool u8 = dtype == npy_dtype::u8;
  std::string header = std::string("{'descr': '") + (u8 ? "<u8" : "<f4") +
                       "', 'fortran_order': False, 'shape': " + shape_tuple(shape) + ", }";
  // magic (6) + version (2) + header length (2) + header, ending in '\n'.
  std::size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::size_t count =
      std::accumulate(shape.begin(), shape.end(), std::size_t{1}, std::multiplies<std::size_t>());
  std::string bytes("\x93NUMPY\x01\x00", 8);
  bytes += static_cast<char>(header.size() & 0xff);
  bytes += static_cast<char>(header.size() >> 8);
  bytes += header;
  bytes.append(static_cast<const char*>(data),
               count * (u8 ? sizeof(std::uint64_t) : sizeof(float)));
  return bytes;
}

std::string npz_bytes(const std::vector<npy_array>& arrays) {
  if (arrays.empty()) throw npz_error("npz: no arrays to write");
  zip_error_t error;
  zip_error_init(&error);
  source_ptr buffer(zip_source_buffer_create(nullptr, 0, 0, &error), &zip_source_free);
  if (!buffer) fail_and_free("cannot create an archive in memory", error);
  archive_ptr archive(zip_open_from_source(buffer.get(), ZIP_TRUNCATE, &error), &zip_discard);
  if (!archive) fail_and_free("cannot create an archive in memory", error);
  // The archive took our reference and drops it on close; the result is read after.
  zip_source_keep(buffer.get());
  // libzip reads members when the archive is closed: they must live until then.
  std::vector<std::string> members;
  members.reserve(arrays.size());
  for (const auto& a : arrays) {
    members.push_back(npy_bytes(a.shape, a.data, a.dtype));
    add_member(archive.get(), a.name + ".npy", members.back());
  }
  if (zip_close(archive.get()) != 0) fail("cannot finish the archive", archive.get());
  archive.release();  // zip_close freed it
  return read_source(buffer.get());
}

void write_npz(const std::string& path, const std::vector<npy_array>& arrays) {
  try {
    write_durably(path, npz_bytes(arrays));
  } catch (const durable_write_error& e) {
    throw npz_error(std::string("npz: ") + e.what());
  }
}

}  // namespace downpour
