// NumPy .npz files: a zip of .npy files, one per array, stored uncompressed as
// numpy.savez does. Each .npy is format 1.0: the magic, a header dict padded
// with spaces to a multiple of 64 bytes, then the data in C order.
// Array names may contain '/' ("layer1/weights"): the member is then
// "layer1/weights.npy" and numpy.load gives it the key "layer1/weights".
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace downpour {

// Thrown when an archive cannot be built or written; what() is one line.
struct npz_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The element types an array may have: floats ('<f4') and, for the keys of
// a sparse variable's rows, unsigned 64-bit integers ('<u8').
enum class npy_dtype { f4, u8 };

// One array to store; data points at product(shape) elements owned elsewhere.
struct npy_array {
  std::string name;
  std::vector<std::size_t> shape;
  const void* data = nullptr;
  npy_dtype dtype = npy_dtype::f4;
};

// The bytes of one .npy file.
std::string npy_bytes(const std::vector<std::size_t>& shape, const void* data,
                      npy_dtype dtype = npy_dtype::f4);

// The bytes of an .npz holding arrays in the given order; names must differ.
std::string npz_bytes(const std::vector<npy_array>& arrays);

// Writes an .npz so that path holds the old file or the whole new one, never
// part of one (runtime/durable_write.hpp).
void write_npz(const std::string& path, const std::vector<npy_array>& arrays);

}  // namespace downpour
