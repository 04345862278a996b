// The IDX reader: the real Fashion-MNIST files, the validation split, gzip,
// and every broken file reported in one line naming it.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "data/idx.hpp"
#include "idx_files.hpp"

namespace downpour::test_data {

using namespace idx_files;

// Every example's features and the labels of a data set, through the interface.
std::vector<float> features_of(const dataset& d) {
  std::vector<float> all(d.size() * d.features());
  for (std::size_t i = 0; i < d.size(); ++i) d.copy_features(i, all.data() + i * d.features());
  return all;
}

std::vector<std::int32_t> labels_of(const dataset& d) {
  std::vector<std::int32_t> all(d.size());
  for (std::size_t i = 0; i < d.size(); ++i) all[i] = d.label(i);
  return all;
}

TEST_CASE("the Fashion-MNIST files load as TF's 55000/5000/10000 split of 28x28 images") {
  const auto begin = std::chrono::steady_clock::now();
  const data_splits data = load_mnist(DOWNPOUR_DEFAULT_DATA_DIR, 5000);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  MESSAGE("load_mnist took " << seconds << " s");

  CHECK(data.train->size() == 55000);
  CHECK(data.validation->size() == 5000);
  CHECK(data.test->size() == 10000);
  CHECK(data.classes == 10);
  CHECK(data.shape.dims == std::vector<std::size_t>{28, 28, 1});
  const data_summary header = summarize_mnist(DOWNPOUR_DEFAULT_DATA_DIR);
  CHECK(header.shape.dims == data.shape.dims);
  CHECK(header.classes == data.classes);
  std::array<std::size_t, 10> train_per_class{};
  std::array<std::size_t, 10> test_per_class{};
  for (const auto& set : {data.train, data.validation, data.test}) {
    CHECK(set->features() == 784);
    const std::vector<float> x = features_of(*set);
    const auto [lo, hi] = std::minmax_element(x.begin(), x.end());
    CHECK(*lo == 0.0f);
    CHECK(*hi == 255.0f * (1.0f / 255.0f));
    for (std::int32_t label : labels_of(*set))
      ++(set == data.test ? test_per_class : train_per_class).at(label);
  }
  for (std::size_t c = 0; c < 10; ++c) {
    CHECK(train_per_class[c] == 6000);
    CHECK(test_per_class[c] == 1000);
  }
}

TEST_CASE("features are the pixels times float(1/255), as TF's read_data_sets scales them") {
  temp_dir dir;
  write_plain(dir.file("images"), image_file(256, 1, 1));  // 7i mod 256: every value once
  write_plain(dir.file("labels"), label_file(256));
  const auto set = load_idx_pair(dir.file("images"), dir.file("labels"));
  for (std::size_t i = 0; i < 256; ++i) {
    float x = -1.0f;
    set->copy_features(i, &x);
    CHECK(x == static_cast<float>(set->image(i)[0]) * (1.0f / 255.0f));
  }
}

TEST_CASE("the validation set is the first training examples and train is the rest") {
  temp_dir dir;
  write_mnist(dir, 10, 4, false);
  const auto full =
      load_idx_pair(dir.file("train-images-idx3-ubyte"), dir.file("train-labels-idx1-ubyte"));
  const data_splits data = load_mnist(dir.str(), 3);
  REQUIRE(data.validation->size() == 3);
  REQUIRE(data.train->size() == 7);
  CHECK(data.test->size() == 4);
  const std::vector<float> all = features_of(*full);
  const std::vector<float> validation = features_of(*data.validation);
  const std::vector<float> train = features_of(*data.train);
  CHECK(std::equal(validation.begin(), validation.end(), all.begin()));
  CHECK(std::equal(train.begin(), train.end(), all.begin() + 3 * 12));
  const std::vector<std::int32_t> labels = labels_of(*full);
  CHECK(labels_of(*data.train) == std::vector<std::int32_t>(labels.begin() + 3, labels.end()));

  CHECK(load_mnist(dir.str(), 9).train->size() == 1);
  // Holding out every example would leave workers nothing to draw a batch from.
  CHECK(mnist_error(dir.str(), 10)
            .find("validation size 10 takes all 10 training examples, "
                  "leaving none to train on") != std::string::npos);
  const std::string msg = mnist_error(dir.str(), 11);
  CHECK(msg.find("validation size 11 exceeds the 10 training examples") != std::string::npos);
}

TEST_CASE("gzipped and plain files are both accepted and read the same") {
  temp_dir plain_dir;
  temp_dir gz_dir;
  write_mnist(plain_dir, 9, 5, false);
  write_mnist(gz_dir, 9, 5, true);
  const data_splits plain = load_mnist(plain_dir.str(), 2);
  const data_splits gz = load_mnist(gz_dir.str(), 2);
  CHECK(features_of(*plain.train) == features_of(*gz.train));
  CHECK(labels_of(*plain.train) == labels_of(*gz.train));
  CHECK(features_of(*plain.test) == features_of(*gz.test));
  const auto* test_images = dynamic_cast<const idx_images*>(gz.test.get());
  REQUIRE(test_images != nullptr);
  CHECK(test_images->pixels() == fake_pixels(5, 4, 3));
  CHECK(gz.classes == 9);  // labels are i % 10 over 9 examples: 0..8
  CHECK(summarize_mnist(gz_dir.str()).classes == 9);

  // A directory may also mix the two.
  fs::remove(gz_dir.file("t10k-labels-idx1-ubyte.gz"));
  write_plain(gz_dir.file("t10k-labels-idx1-ubyte"), label_file(5));
  CHECK(labels_of(*load_mnist(gz_dir.str(), 2).test) == labels_of(*plain.test));
}

TEST_CASE("a missing file is reported with the path tried") {
  temp_dir dir;
  write_mnist(dir, 6, 3, false);
  fs::remove(dir.file("t10k-images-idx3-ubyte"));
  const std::string msg = mnist_error(dir.str(), 1);
  CHECK(msg.find(dir.file("t10k-images-idx3-ubyte")) != std::string::npos);
  CHECK(msg.find("not found") != std::string::npos);
  CHECK(one_line(msg));

  const std::string no_dir = mnist_error(dir.file("nonexistent"), 1);
  CHECK(no_dir.find(dir.file("nonexistent")) != std::string::npos);
  CHECK(no_dir.find("not found") != std::string::npos);
}

TEST_CASE("a bad magic number is reported with the file name and the expected value") {
  temp_dir dir;
  const std::string images = dir.file("images");
  const std::string labels = dir.file("labels");
  write_plain(images, concat(be_words({1234, 2, 2, 2}), fake_pixels(2, 2, 2)));
  write_plain(labels, label_file(2));
  const std::string msg = load_error(images, labels);
  CHECK(msg == "data: " + images + ": bad magic number 1234 (expected 2051 for an IDX image file)");

  // Images and labels swapped: each has the other's magic number.
  const std::string swapped = load_error(labels, images);
  CHECK(swapped.find(labels + ": bad magic number 2049 (expected 2051") != std::string::npos);
  write_gz(images, image_file(2, 2, 2));
  const std::string bad_labels = load_error(images, images);
  CHECK(bad_labels ==
        "data: " + images + ": bad magic number 2051 (expected 2049 for an IDX label file)");
}

TEST_CASE("a truncated image file is reported with its name and the missing byte count") {
  temp_dir dir;
  const std::string images = dir.file("images.gz");
  const std::string labels = dir.file("labels");
  std::vector<std::uint8_t> bytes = image_file(4, 3, 4);  // 48 pixel bytes
  bytes.resize(bytes.size() - 8);
  write_gz(images, bytes);
  write_plain(labels, label_file(4));
  const std::string msg = load_error(images, labels);
  CHECK(msg.find("data: " + images + ": truncated") == 0);
  CHECK(msg.find("expected 48 bytes of pixel data after the header, got 40") != std::string::npos);
  CHECK(one_line(msg));

  // A header cut short is a distinct, also named, fault.
  write_plain(images, be_words({2051, 4}));
  const std::string header = load_error(images, labels);
  CHECK(header == "data: " + images + ": truncated header: expected 16 bytes, got 8");
  write_plain(images, {8, 3});
  CHECK(load_error(images, labels).find("truncated header: expected 16 bytes, got 2") !=
        std::string::npos);

  std::vector<std::uint8_t> short_labels = label_file(4);
  short_labels.pop_back();
  write_plain(labels, short_labels);
  write_plain(images, image_file(4, 3, 4));
  CHECK(load_error(images, labels).find("expected 4 bytes of labels after the header, got 3") !=
        std::string::npos);
}

TEST_CASE("trailing bytes after the declared payload are an error") {
  temp_dir dir;
  const std::string images = dir.file("images");
  const std::string labels = dir.file("labels.gz");
  write_plain(images, concat(image_file(3, 2, 2), {1, 2, 3}));
  write_gz(labels, label_file(3));
  const std::string msg = load_error(images, labels);
  CHECK(msg ==
        "data: " + images + ": 3 unexpected trailing bytes after the 12 bytes of pixel data");

  write_plain(images, image_file(3, 2, 2));
  write_gz(labels, concat(label_file(3), {0}));
  CHECK(load_error(images, labels).find(labels + ": 1 unexpected trailing bytes") !=
        std::string::npos);
}

TEST_CASE("image and label files with different counts are rejected naming both") {
  temp_dir dir;
  const std::string images = dir.file("images");
  const std::string labels = dir.file("labels");
  write_plain(images, image_file(5, 2, 2));
  write_plain(labels, label_file(4));
  const std::string msg = load_error(images, labels);
  CHECK(msg == "data: " + images + ": holds 5 images but " + labels + " holds 4 labels");
}

TEST_CASE("zero or absurd image dimensions and empty files are rejected") {
  temp_dir dir;
  const std::string images = dir.file("images");
  const std::string labels = dir.file("labels");
  write_plain(labels, label_file(2));
  write_plain(images, be_words({2051, 2, 0, 28}));
  CHECK(load_error(images, labels).find("implausible image size 0x28") != std::string::npos);
  write_plain(images, be_words({2051, 2, 2048, 1024}));
  CHECK(load_error(images, labels).find("implausible image size 2048x1024") != std::string::npos);
  write_plain(images, be_words({2051, 0, 28, 28}));
  CHECK(load_error(images, labels).find("contains no images") != std::string::npos);
  // A header claiming billions of images fails as truncated, not as an allocation failure.
  write_plain(images, concat(be_words({2051, 0xffffffffu, 1024, 1024}), {1, 2}));
  CHECK(load_error(images, labels).find("truncated: expected 4503599626321920 bytes") !=
        std::string::npos);
  write_plain(images, {});
  CHECK(load_error(images, labels).find("truncated header: expected 16 bytes, got 0") !=
        std::string::npos);
}

TEST_CASE("a corrupt gzip stream is reported with the file name") {
  temp_dir dir;
  const std::string images = dir.file("images.gz");
  write_gz(images, image_file(50, 8, 8));
  std::vector<char> bytes(fs::file_size(images));
  std::ifstream(images, std::ios::binary).read(bytes.data(), bytes.size());
  // Offset 10 starts the deflate data: all ones is an invalid block type.
  for (std::size_t i = 10; i < bytes.size() - 8; ++i) bytes[i] = static_cast<char>(0xff);
  std::ofstream(images, std::ios::binary).write(bytes.data(), bytes.size());
  write_plain(dir.file("labels"), label_file(50));
  const std::string msg = load_error(images, dir.file("labels"));
  CHECK(msg.find("data: " + images + ": read error: ") == 0);
  CHECK(one_line(msg));
}

TEST_CASE("training and test images of different sizes are rejected") {
  temp_dir dir;
  write_mnist(dir, 6, 3, false);
  write_plain(dir.file("t10k-images-idx3-ubyte"), image_file(3, 3, 4));
  const std::string msg = mnist_error(dir.str(), 1);
  CHECK(msg.find(dir.file("t10k-images-idx3-ubyte") + ": images are 3x4 but those in ") !=
        std::string::npos);
  CHECK(msg.find("are 4x3") != std::string::npos);
}

}  // namespace downpour::test_data
