#include <doctest/doctest.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "data/batcher.hpp"
#include "data/idx.hpp"

namespace downpour {
namespace {

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

std::vector<std::uint8_t> be_words(std::initializer_list<std::uint32_t> words) {
  std::vector<std::uint8_t> bytes;
  for (std::uint32_t w : words) {
    for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back((w >> shift) & 0xff);
  }
  return bytes;
}

std::vector<std::uint8_t> concat(std::vector<std::uint8_t> a, const std::vector<std::uint8_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Deterministic made-up pixels: example i, pixel k holds (7*i + k) mod 256.
std::vector<std::uint8_t> fake_pixels(std::uint32_t count, std::uint32_t rows, std::uint32_t cols) {
  std::vector<std::uint8_t> pixels(std::size_t{count} * rows * cols);
  const std::size_t n = std::size_t{rows} * cols;
  for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = (7 * (i / n) + i % n) & 0xff;
  return pixels;
}

std::vector<std::uint8_t> image_file(std::uint32_t count, std::uint32_t rows, std::uint32_t cols) {
  return concat(be_words({2051, count, rows, cols}), fake_pixels(count, rows, cols));
}

std::vector<std::uint8_t> label_file(std::uint32_t count, std::uint8_t classes = 10) {
  std::vector<std::uint8_t> labels(count);
  for (std::uint32_t i = 0; i < count; ++i) labels[i] = i % classes;
  return concat(be_words({2049, count}), labels);
}

void write_plain(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  REQUIRE(out.good());
}

void write_gz(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  gzFile file = gzopen(path.c_str(), "wb");
  REQUIRE(file != nullptr);
  CHECK(gzwrite(file, bytes.data(), static_cast<unsigned>(bytes.size())) ==
        static_cast<int>(bytes.size()));
  REQUIRE(gzclose(file) == Z_OK);
}

// The full set of four files, train with train_count examples and t10k with test_count.
void write_mnist(const temp_dir& dir, std::uint32_t train_count, std::uint32_t test_count,
                 bool gzip) {
  const auto write = gzip ? write_gz : write_plain;
  const std::string suffix = gzip ? ".gz" : "";
  write(dir.file("train-images-idx3-ubyte" + suffix), image_file(train_count, 4, 3));
  write(dir.file("train-labels-idx1-ubyte" + suffix), label_file(train_count));
  write(dir.file("t10k-images-idx3-ubyte" + suffix), image_file(test_count, 4, 3));
  write(dir.file("t10k-labels-idx1-ubyte" + suffix), label_file(test_count));
}

std::string load_error(const std::string& images, const std::string& labels) {
  try {
    load_idx_pair(images, labels);
  } catch (const data_error& e) {
    return e.what();
  }
  FAIL("expected a data_error");
  return {};
}

std::string mnist_error(const std::string& dir, std::size_t validation_size) {
  try {
    load_mnist(dir, validation_size);
  } catch (const data_error& e) {
    return e.what();
  }
  FAIL("expected a data_error");
  return {};
}

bool one_line(const std::string& s) {
  return s.find('\n') == std::string::npos;
}

// A set of count 1x1 images whose pixel and label both equal the example index.
std::shared_ptr<const mnist_data> indexed_set(std::size_t count) {
  auto data = std::make_shared<mnist_data>();
  data->train.count = count;
  data->train.rows = data->train.cols = 1;
  for (std::size_t i = 0; i < count; ++i) {
    data->train.pixels.push_back(static_cast<std::uint8_t>(i));
    data->train.labels.push_back(static_cast<std::uint8_t>(i));
  }
  data->num_classes = count;
  return data;
}

std::vector<std::int32_t> draw_labels(batcher& b, std::size_t batches) {
  std::vector<std::int32_t> seen;
  for (std::size_t k = 0; k < batches; ++k) {
    const batch& out = b.next_batch();
    seen.insert(seen.end(), out.y.begin(), out.y.end());
  }
  return seen;
}

}  // namespace

TEST_CASE("the Fashion-MNIST files load as TF's 55000/5000/10000 split of 28x28 images") {
  const auto begin = std::chrono::steady_clock::now();
  const auto data = load_mnist(DOWNPOUR_DEFAULT_DATA_DIR, 5000);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  MESSAGE("load_mnist took " << seconds << " s");

  CHECK(data->train.count == 55000);
  CHECK(data->validation.count == 5000);
  CHECK(data->test.count == 10000);
  CHECK(data->num_classes == 10);
  CHECK(data->input_size() == 784);
  for (const image_set* set : {&data->train, &data->validation, &data->test}) {
    CHECK(set->rows == 28);
    CHECK(set->cols == 28);
    CHECK(set->pixels.size() == set->count * 784);
    CHECK(set->labels.size() == set->count);
    const auto [lo, hi] = std::minmax_element(set->pixels.begin(), set->pixels.end());
    CHECK(*lo == 0);
    CHECK(*hi == 255);
  }

  std::array<std::size_t, 10> train_per_class{};
  std::array<std::size_t, 10> test_per_class{};
  for (const image_set* set : {&data->train, &data->validation}) {
    for (std::uint8_t label : set->labels) ++train_per_class.at(label);
  }
  for (std::uint8_t label : data->test.labels) ++test_per_class.at(label);
  for (std::size_t c = 0; c < 10; ++c) {
    CHECK(train_per_class[c] == 6000);
    CHECK(test_per_class[c] == 1000);
  }
}

TEST_CASE("the validation set is the first training examples and train is the rest") {
  temp_dir dir;
  write_mnist(dir, 10, 4, false);
  const image_set full =
      load_idx_pair(dir.file("train-images-idx3-ubyte"), dir.file("train-labels-idx1-ubyte"));
  const auto data = load_mnist(dir.str(), 3);
  REQUIRE(data->validation.count == 3);
  REQUIRE(data->train.count == 7);
  CHECK(data->test.count == 4);
  CHECK(std::equal(data->validation.pixels.begin(), data->validation.pixels.end(),
                   full.pixels.begin()));
  CHECK(std::equal(data->train.pixels.begin(), data->train.pixels.end(),
                   full.pixels.begin() + 3 * 12));
  CHECK(std::equal(data->train.labels.begin(), data->train.labels.end(), full.labels.begin() + 3));

  CHECK(load_mnist(dir.str(), 10)->train.count == 0);
  const std::string msg = mnist_error(dir.str(), 11);
  CHECK(msg.find("validation size 11 exceeds the 10 training examples") != std::string::npos);
}

TEST_CASE("gzipped and plain files are both accepted and read the same") {
  temp_dir plain_dir;
  temp_dir gz_dir;
  write_mnist(plain_dir, 9, 5, false);
  write_mnist(gz_dir, 9, 5, true);
  const auto plain = load_mnist(plain_dir.str(), 2);
  const auto gz = load_mnist(gz_dir.str(), 2);
  CHECK(plain->train.pixels == gz->train.pixels);
  CHECK(plain->train.labels == gz->train.labels);
  CHECK(plain->test.pixels == gz->test.pixels);
  CHECK(gz->test.pixels == fake_pixels(5, 4, 3));
  CHECK(gz->num_classes == 9);  // labels are i % 10 over 9 examples: 0..8

  // A directory may also mix the two.
  fs::remove(gz_dir.file("t10k-labels-idx1-ubyte.gz"));
  write_plain(gz_dir.file("t10k-labels-idx1-ubyte"), label_file(5));
  CHECK(load_mnist(gz_dir.str(), 2)->test.labels == plain->test.labels);
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

TEST_CASE("a batch that crosses the epoch end takes the old rest and the new permutation's start") {
  const auto data = indexed_set(10);
  batcher b(data, data->train, 4, 42);
  const std::vector<std::int32_t> first_two = draw_labels(b, 2);
  CHECK(b.epochs_completed() == 0);
  const batch& third = b.next_batch();
  CHECK(b.epochs_completed() == 1);
  std::vector<std::int32_t> epoch0 = first_two;
  epoch0.insert(epoch0.end(), third.y.begin(), third.y.begin() + 2);
  std::vector<std::int32_t> sorted0 = epoch0;
  std::sort(sorted0.begin(), sorted0.end());
  std::vector<std::int32_t> all(10);
  std::iota(all.begin(), all.end(), 0);
  CHECK(sorted0 == all);
  CHECK(std::set<std::int32_t>{third.y[2], third.y[3]}.size() == 2);

  // Across many epochs the stream of examples is a concatenation of permutations.
  batcher long_run(data, data->train, 4, 7);
  const std::vector<std::int32_t> stream = draw_labels(long_run, 50);  // 200 = 20 epochs
  std::vector<std::vector<std::int32_t>> epochs;
  for (std::size_t e = 0; e < 20; ++e) {
    std::vector<std::int32_t> one(stream.begin() + 10 * e, stream.begin() + 10 * (e + 1));
    epochs.push_back(one);
    std::sort(one.begin(), one.end());
    CHECK(one == all);
  }
  CHECK(long_run.epochs_completed() == 19);  // the 20th epoch's end is not yet crossed
  CHECK(epochs[0] != epochs[1]);             // reshuffled at the boundary
}

TEST_CASE("epochs_completed counts epoch ends crossed, as in TF") {
  for (std::size_t count : {8, 10, 13}) {
    const auto data = indexed_set(count);
    batcher b(data, data->train, 4, 1);
    for (std::size_t k = 1; k <= 40; ++k) {
      b.next_batch();
      CHECK(b.epochs_completed() == (4 * k - 1) / count);
    }
  }
  const auto data = indexed_set(5);
  batcher whole(data, data->train, 5, 3);
  for (std::size_t k = 1; k <= 4; ++k) {
    std::vector<std::int32_t> y = whole.next_batch().y;
    CHECK(whole.epochs_completed() == k - 1);
    std::sort(y.begin(), y.end());
    CHECK(y == std::vector<std::int32_t>{0, 1, 2, 3, 4});
  }
}

TEST_CASE("the same seed replays the same batches and a different seed does not") {
  const auto data = indexed_set(100);
  batcher a(data, data->train, 16, 2024);
  batcher b(data, data->train, 16, 2024);
  batcher c(data, data->train, 16, 2025);
  const auto seq_a = draw_labels(a, 40);
  CHECK(seq_a == draw_labels(b, 40));
  CHECK(seq_a != draw_labels(c, 40));
}

TEST_CASE("the shuffle puts every example first about equally often") {
  const auto data = indexed_set(10);
  batcher b(data, data->train, 10, 99);
  std::array<int, 10> first{};
  for (int epoch = 0; epoch < 20000; ++epoch) ++first.at(b.next_batch().y[0]);
  for (int n : first) {
    CHECK(n > 1700);  // expectation 2000, standard deviation about 42
    CHECK(n < 2300);
  }
}

TEST_CASE("pixels are scaled to [0,1] exactly as TF does and labels become int32") {
  auto data = std::make_shared<mnist_data>();
  data->train.count = 2;
  data->train.rows = 2;
  data->train.cols = 2;
  data->train.pixels = {0, 255, 128, 1, 0, 255, 128, 1};
  data->train.labels = {3, 3};
  batcher b(data, data->train, 2, 5);
  const batch& out = b.next_batch();
  CHECK(out.size == 2);
  CHECK(out.input_size == 4);
  REQUIRE(out.x.size() == 8);
  CHECK(out.x[0] == 0.0f);
  CHECK(out.x[1] == 1.0f);
  CHECK(out.x[2] == static_cast<float>(128) * (1.0f / 255.0f));
  CHECK(out.x[3] == 1.0f / 255.0f);
  CHECK(out.y == std::vector<std::int32_t>{3, 3});
}

TEST_CASE("batches reuse one buffer and never allocate per step") {
  const auto data = indexed_set(10);
  batcher b(data, data->train, 3, 11);
  const batch& first = b.next_batch();
  const float* x = first.x.data();
  const std::int32_t* y = first.y.data();
  for (int k = 0; k < 20; ++k) {
    const batch& next = b.next_batch();
    CHECK(&next == &first);
    CHECK(next.x.data() == x);
    CHECK(next.y.data() == y);
  }
}

TEST_CASE("a batch larger than the set or of size zero is refused at construction") {
  const auto data = indexed_set(10);
  CHECK_THROWS_WITH_AS(batcher(data, data->train, 11, 1),
                       "data: batch size 11 exceeds the 10 examples in the set", data_error);
  CHECK_THROWS_AS(batcher(data, data->train, 0, 1), data_error);
  CHECK_NOTHROW(batcher(data, data->train, 10, 1));
}

TEST_CASE("batches of the real training set hold valid labels and scaled pixels") {
  const auto data = load_mnist(DOWNPOUR_DEFAULT_DATA_DIR, 5000);
  batcher b(data, data->train, 100, 123);
  for (int k = 0; k < 600; ++k) {  // crosses the 550-batch epoch end
    const batch& out = b.next_batch();
    REQUIRE(out.x.size() == 100 * 784);
    CHECK(std::all_of(out.y.begin(), out.y.end(), [](std::int32_t l) { return l >= 0 && l < 10; }));
    CHECK(std::all_of(out.x.begin(), out.x.end(), [](float v) { return v >= 0.0f && v <= 1.0f; }));
  }
  CHECK(b.epochs_completed() == 1);
}

}  // namespace downpour
