// Fuzzes the IDX reader (data/idx.cpp): load_idx_pair, and load_mnist over a
// directory holding the pair, on files written from the input.
//
// Input layout (fuzz/corpus/fuzz_idx holds examples):
//   u16 little-endian  length of the image file (clamped to what is there)
//   u8                 flags: bit 0 also runs load_mnist on a directory with the
//                      pair as train-* and t10k-*; bit 1 names those files NAME.gz
//   u8                 validation size for load_mnist
//   image file bytes, then label file bytes (plain IDX or gzip; gzread reads both)
// A data_error is the reader's answer to a bad file and is fine; any other
// exception, a crash, a sanitizer report or a leak is a bug.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "data/idx.hpp"
#include "fuzz/fuzz_common.hpp"

namespace {

using downpour::data_error;
using downpour::dataset;
using downpour::idx_images;

constexpr const char* target = "fuzz_idx";

void check_set(const idx_images& s, const char* what) {
  if (s.size() == 0 || s.rows() == 0 || s.cols() == 0)
    fuzz::broken(target, std::string(what) + ": accepted an empty set or image");
  if (s.pixels().size() != s.size() * s.rows() * s.cols() || s.labels().size() != s.size())
    fuzz::broken(target, std::string(what) + ": sizes do not match the header");
}

// Example i of part is example first + i of whole: features and label.
bool same_examples(const dataset& part, const idx_images& whole, std::size_t first) {
  std::vector<float> a(whole.features()), b(whole.features());
  for (std::size_t i = 0; i < part.size(); ++i) {
    part.copy_features(i, a.data());
    whole.copy_features(first + i, b.data());
    if (a != b || part.label(i) != whole.label(first + i)) return false;
  }
  return true;
}

void check_split(const idx_images& whole, const downpour::data_splits& d, std::size_t validation) {
  if (!d.train || !d.validation || !d.test) fuzz::broken(target, "load_mnist: a split is null");
  if (d.validation->size() != validation || d.train->size() != whole.size() - validation ||
      d.test->size() != whole.size())
    fuzz::broken(target, "load_mnist: split counts are wrong");
  for (const auto& s : {d.validation, d.train, d.test})
    if (s->features() != whole.features())
      fuzz::broken(target, "load_mnist: a split's sizes are inconsistent");
  if (d.shape.dims != std::vector<std::size_t>{whole.rows(), whole.cols(), 1})
    fuzz::broken(target, "load_mnist: wrong shape");
  if (!same_examples(*d.validation, whole, 0) || !same_examples(*d.train, whole, validation) ||
      !same_examples(*d.test, whole, 0))
    fuzz::broken(target, "load_mnist: the splits are not the file's images in order");
  const auto& labels = whole.labels();
  const std::size_t classes = 1 + *std::max_element(labels.begin(), labels.end());
  if (d.classes != classes) fuzz::broken(target, "load_mnist: wrong number of classes");
}

// Labels with a class below the largest that no example has: load_mnist
// refuses them (data/dataset.hpp, class_count); load_idx_pair reads them.
bool has_class_gap(const std::vector<std::uint8_t>& labels) {
  std::vector<bool> seen(256, false);
  for (auto y : labels) seen[y] = true;
  const std::size_t classes = 1 + *std::max_element(labels.begin(), labels.end());
  return std::find(seen.begin(), seen.begin() + static_cast<std::ptrdiff_t>(classes), false) !=
         seen.begin() + static_cast<std::ptrdiff_t>(classes);
}

void run_load_mnist(const idx_images& whole, const std::string& images, const std::string& labels,
                    bool gz, std::size_t validation) {
  namespace fs = std::filesystem;
  const std::string dir = fuzz::scratch_path("mnist");
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directory(dir);
  const std::string suffix = gz ? ".gz" : "";
  fuzz::write_file(dir + "/train-images-idx3-ubyte" + suffix, images);
  fuzz::write_file(dir + "/train-labels-idx1-ubyte" + suffix, labels);
  fuzz::write_file(dir + "/t10k-images-idx3-ubyte" + suffix, images);
  fuzz::write_file(dir + "/t10k-labels-idx1-ubyte" + suffix, labels);
  try {
    const auto data = downpour::load_mnist(dir, validation);
    check_split(whole, data, validation);
    const auto summary = downpour::summarize_mnist(dir);
    if (summary.shape.dims != data.shape.dims || summary.classes != data.classes)
      fuzz::broken(target, "summarize_mnist disagrees with load_mnist");
  } catch (const data_error&) {
    if (validation < whole.size() && !has_class_gap(whole.labels()))
      fuzz::broken(target, "load_mnist refused a pair that load_idx_pair accepted");
  } catch (const std::exception& e) {
    fuzz::broken(target, std::string("load_mnist threw a non-data_error: ") + e.what());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 4) return -1;
  const std::size_t image_bytes = std::min<std::size_t>(data[0] | (data[1] << 8), size - 4);
  const bool with_mnist = data[2] & 1;
  const bool gz = data[2] & 2;
  const std::size_t validation = data[3];
  const std::string images(reinterpret_cast<const char*>(data) + 4, image_bytes);
  const std::string labels(reinterpret_cast<const char*>(data) + 4 + image_bytes,
                           size - 4 - image_bytes);

  static const std::string images_path = fuzz::scratch_path("images");
  static const std::string labels_path = fuzz::scratch_path("labels");
  fuzz::write_file(images_path, images);
  fuzz::write_file(labels_path, labels);
  std::shared_ptr<const idx_images> whole;
  try {
    whole = downpour::load_idx_pair(images_path, labels_path);
  } catch (const data_error&) {
    return 0;
  } catch (const std::exception& e) {
    fuzz::broken(target, std::string("load_idx_pair threw a non-data_error: ") + e.what());
  }
  check_set(*whole, "load_idx_pair");
  if (with_mnist) run_load_mnist(*whole, images, labels, gz, validation);
  return 0;
}
