// Reading float32 arrays back from an .npz (numpy.savez: a zip of stored
// .npy files), for tests that compare Downpour with test/golden/golden.py.
#pragma once

#include <zip.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace downpour::testing {

struct npy_floats {
  std::vector<std::size_t> shape;
  std::vector<float> values;
};

namespace npz_detail {

// The shape tuple of a format 1.0/2.0 header, "(784, 500)" or "(10,)".
inline std::vector<std::size_t> header_shape(const std::string& header, const std::string& what) {
  if (header.find("'descr': '<f4'") == std::string::npos ||
      header.find("'fortran_order': False") == std::string::npos)
    throw std::runtime_error(what + ": not a C-order float32 array: " + header);
  auto open = header.find("'shape': (");
  auto close = header.find(')', open);
  if (open == std::string::npos || close == std::string::npos)
    throw std::runtime_error(what + ": no shape in " + header);
  std::vector<std::size_t> shape;
  std::string dims = header.substr(open + 10, close - open - 10);
  for (std::size_t pos = 0; pos < dims.size();) {
    auto comma = dims.find(',', pos);
    std::string dim = dims.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (dim.find_first_not_of(' ') != std::string::npos) shape.push_back(std::stoull(dim));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return shape;
}

inline npy_floats parse_npy(const std::string& bytes, const std::string& what) {
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0)
    throw std::runtime_error(what + ": not an .npy file");
  const auto major = static_cast<unsigned char>(bytes[6]);
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  std::size_t header_len = 0;
  for (std::size_t i = 0; i < len_bytes; ++i)
    header_len |= std::size_t(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
  const std::size_t data_at = 8 + len_bytes + header_len;
  if (data_at > bytes.size()) throw std::runtime_error(what + ": truncated header");
  npy_floats a;
  a.shape = header_shape(bytes.substr(8 + len_bytes, header_len), what);
  std::size_t count = 1;
  for (auto d : a.shape) count *= d;
  if (bytes.size() - data_at != count * sizeof(float))
    throw std::runtime_error(what + ": " + std::to_string(bytes.size() - data_at) +
                             " data bytes for " + std::to_string(count) + " floats");
  a.values.resize(count);
  std::memcpy(a.values.data(), bytes.data() + data_at, count * sizeof(float));
  return a;
}

}  // namespace npz_detail

// The array stored as NAME.npy in the .npz at path; throws std::runtime_error.
inline npy_floats read_npz_array(const std::string& path, const std::string& name) {
  int code = 0;
  std::unique_ptr<zip_t, decltype(&zip_discard)> archive(zip_open(path.c_str(), ZIP_RDONLY, &code),
                                                         &zip_discard);
  if (!archive) throw std::runtime_error(path + ": cannot open as a zip archive");
  const std::string member = name + ".npy";
  zip_stat_t stat;
  if (zip_stat(archive.get(), member.c_str(), 0, &stat) != 0 || !(stat.valid & ZIP_STAT_SIZE))
    throw std::runtime_error(path + ": no array " + name);
  std::unique_ptr<zip_file_t, decltype(&zip_fclose)> file(
      zip_fopen(archive.get(), member.c_str(), 0), &zip_fclose);
  std::string bytes(stat.size, '\0');
  if (!file || zip_fread(file.get(), bytes.data(), stat.size) != static_cast<zip_int64_t>(stat.size))
    throw std::runtime_error(path + ": cannot read " + member);
  return npz_detail::parse_npy(bytes, path + ": " + name);
}

}  // namespace downpour::testing
