// MNIST-format IDX files: reading, validation and the train/validation/test split.
#pragma once

#include "data/dataset.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace downpour {

// Images kept as uint8 (row-major, count x rows x cols) with one label each.
struct image_set {
  std::size_t count = 0;
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::vector<std::uint8_t> pixels;  // count * rows * cols
  std::vector<std::uint8_t> labels;  // count
  std::size_t input_size() const { return rows * cols; }
  const std::uint8_t* image(std::size_t i) const { return pixels.data() + i * input_size(); }
};

// The three splits of a data set; immutable once loaded and shared by workers.
struct mnist_data {
  image_set train;       // training set minus the held-out validation examples
  image_set validation;  // the first validation_size training examples (TF read_data_sets)
  image_set test;
  std::size_t num_classes = 0;  // 1 + the largest label seen
  std::size_t input_size() const { return train.input_size(); }
};

// Reads an IDX image file and an IDX label file (gzipped or not) and checks
// magic numbers (2051/2049), dimensions, matching counts and file length.
image_set load_idx_pair(const std::string& images_path, const std::string& labels_path);

// The input size (rows x cols) of the training images in dir, from the
// header only. Throws data_error.
std::size_t idx_image_size(const std::string& dir);

// Loads train-* and t10k-* from dir, each as NAME or NAME.gz, and holds out the
// first validation_size training examples; at least one must be left to
// train on. Throws data_error.
std::shared_ptr<const mnist_data> load_mnist(const std::string& dir,
                                             std::size_t validation_size);

}  // namespace downpour
