// Test helpers for the IDX reader: made-up IDX files (plain and gzipped) in a
// temporary directory, and the error text a load fails with.
#pragma once

#include <doctest/doctest.h>
#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "data/idx.hpp"

namespace downpour::idx_files {

namespace fs = std::filesystem;

// A fresh directory under the system temp dir, removed with everything in it.
class temp_dir {
 public:
  temp_dir() {
    std::random_device entropy;
    for (;;) {
      const std::uint64_t tag = (std::uint64_t{entropy()} << 32) | entropy();
      path_ = fs::temp_directory_path() / ("downpour-test-data-" + std::to_string(tag));
      if (fs::create_directory(path_)) return;
    }
  }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string str() const { return path_.string(); }

 private:
  fs::path path_;
};

inline std::vector<std::uint8_t> be_words(std::initializer_list<std::uint32_t> words) {
  std::vector<std::uint8_t> bytes;
  for (std::uint32_t w : words) {
    for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back((w >> shift) & 0xff);
  }
  return bytes;
}

inline std::vector<std::uint8_t> concat(std::vector<std::uint8_t> a,
                                        const std::vector<std::uint8_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Deterministic made-up pixels: example i, pixel k holds (7*i + k) mod 256.
inline std::vector<std::uint8_t> fake_pixels(std::uint32_t count, std::uint32_t rows,
                                             std::uint32_t cols) {
  std::vector<std::uint8_t> pixels(std::size_t{count} * rows * cols);
  const std::size_t n = std::size_t{rows} * cols;
  for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = (7 * (i / n) + i % n) & 0xff;
  return pixels;
}

inline std::vector<std::uint8_t> image_file(std::uint32_t count, std::uint32_t rows,
                                            std::uint32_t cols) {
  return concat(be_words({2051, count, rows, cols}), fake_pixels(count, rows, cols));
}

inline std::vector<std::uint8_t> label_file(std::uint32_t count, std::uint8_t classes = 10) {
  std::vector<std::uint8_t> labels(count);
  for (std::uint32_t i = 0; i < count; ++i) labels[i] = i % classes;
  return concat(be_words({2049, count}), labels);
}

inline void write_plain(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  REQUIRE(out.good());
}

inline void write_gz(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  gzFile file = gzopen(path.c_str(), "wb");
  REQUIRE(file != nullptr);
  CHECK(gzwrite(file, bytes.data(), static_cast<unsigned>(bytes.size())) ==
        static_cast<int>(bytes.size()));
  REQUIRE(gzclose(file) == Z_OK);
}

// The full set of four files, train with train_count examples and t10k with test_count.
inline void write_mnist(const temp_dir& dir, std::uint32_t train_count, std::uint32_t test_count,
                 bool gzip) {
  const auto write = gzip ? write_gz : write_plain;
  const std::string suffix = gzip ? ".gz" : "";
  write(dir.file("train-images-idx3-ubyte" + suffix), image_file(train_count, 4, 3));
  write(dir.file("train-labels-idx1-ubyte" + suffix), label_file(train_count));
  write(dir.file("t10k-images-idx3-ubyte" + suffix), image_file(test_count, 4, 3));
  write(dir.file("t10k-labels-idx1-ubyte" + suffix), label_file(test_count));
}

inline std::string load_error(const std::string& images, const std::string& labels) {
  try {
    load_idx_pair(images, labels);
  } catch (const data_error& e) {
    return e.what();
  }
  FAIL("expected a data_error");
  return {};
}

inline std::string mnist_error(const std::string& dir, std::size_t validation_size) {
  try {
    load_mnist(dir, validation_size);
  } catch (const data_error& e) {
    return e.what();
  }
  FAIL("expected a data_error");
  return {};
}

inline bool one_line(const std::string& s) {
  return s.find('\n') == std::string::npos;
}

}  // namespace downpour::idx_files
