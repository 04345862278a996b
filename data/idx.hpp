// MNIST-format IDX files as a data set: reading, validation and the
// train/validation/test split of TensorFlow's read_data_sets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/dataset.hpp"

namespace downpour {

// Images kept as uint8 (row-major, size x rows x cols) with one label each;
// features are the pixels scaled to [0, 1] as TF's read_data_sets does.
class idx_images final : public dataset {
 public:
  idx_images(std::size_t rows, std::size_t cols, std::vector<std::uint8_t> pixels,
             std::vector<std::uint8_t> labels);

  std::size_t size() const override { return labels_.size(); }
  std::size_t features() const override { return rows_ * cols_; }
  void copy_features(std::size_t i, float* out) const override;
  std::int32_t label(std::size_t i) const override { return labels_[i]; }

  std::size_t rows() const { return rows_; }
  std::size_t cols() const { return cols_; }
  const std::uint8_t* image(std::size_t i) const { return pixels_.data() + i * features(); }
  const std::vector<std::uint8_t>& pixels() const { return pixels_; }
  const std::vector<std::uint8_t>& labels() const { return labels_; }

 private:
  std::size_t rows_;
  std::size_t cols_;
  std::vector<std::uint8_t> pixels_;  // size() * rows * cols
  std::vector<std::uint8_t> labels_;
};

// Reads an IDX image file and an IDX label file (gzipped or not) and checks
// magic numbers (2051/2049), dimensions, matching counts and file length.
// Throws data_error.
std::shared_ptr<const idx_images> load_idx_pair(const std::string& images_path,
                                                const std::string& labels_path);

// Loads train-* and t10k-* from dir, each as NAME or NAME.gz, and holds out
// the first validation_size training examples; at least one must be left to
// train on. The shape is {rows, cols, 1}. Throws data_error.
data_splits load_mnist(const std::string& dir, std::size_t validation_size);

// The shape and classes load_mnist gives, read from the image files' headers
// and the label files only: a ps needs the model's layout, not the images.
// Throws data_error.
data_summary summarize_mnist(const std::string& dir);

}  // namespace downpour
