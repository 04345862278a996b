// Operator input read as bounded regular files (io/input_file.hpp): FIFOs,
// devices and directories refused without waiting, sizes known before a
// read, and the labels of a data set checked against its classes.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "data/csv.hpp"
#include "data/idx.hpp"
#include "data/libsvm.hpp"
#include "fifo.hpp"
#include "idx_files.hpp"
#include "io/input_file.hpp"

namespace downpour::test_input_files {
namespace {

namespace fs = std::filesystem;
using idx_files::temp_dir;

template <class Call>
std::string error_of(Call call) {
  try {
    call();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

}  // namespace

TEST_CASE("only a regular file opens as input: a FIFO, a device or a directory is named, never waited on") {
  temp_dir dir;
  const std::string fifo = dir.file("fifo");
  testing::make_fifo(fifo);
  CHECK(testing::without_blocking(fifo, [&] { return error_of([&] { input_file f(fifo); }); }) ==
        fifo + ": is a FIFO, not a regular file");
  CHECK(error_of([] { input_file f("/dev/zero"); }) ==
        "/dev/zero: is a character device, not a regular file");
  CHECK(error_of([&] { input_file f(dir.str()); }) == dir.str() + ": is a directory, not a regular file");
  CHECK(error_of([&] { input_file f(dir.file("missing")); }) ==
        dir.file("missing") + ": cannot open: No such file or directory");
  try {
    input_file f("/dev/null");
    FAIL("/dev/null opened");
  } catch (const input_error& e) {
    CHECK(e.reason() == "is a character device, not a regular file");
  }
}

TEST_CASE("a file's size is known at open, bounded when asked, and reads stop at its end") {
  temp_dir dir;
  const std::string path = dir.file("ten");
  write_text(path, "0123456789");
  input_file f(path);
  CHECK(f.size() == 10);
  CHECK(f.read_at(3, 4) == "3456");
  CHECK(error_of([&] { f.read_at(8, 4); }) == path + ": ended after 10 of 12 bytes (did it shrink?)");
  CHECK(error_of([&] { input_file small(path, 9); }) == path + ": is 10 bytes, more than the 9 allowed");
  CHECK(read_input(path, 10) == "0123456789");
  // Sparse: a huge size costs nothing until read.
  fs::resize_file(path, std::uintmax_t{50} << 30);
  CHECK(error_of([&] { read_input(path, 1 << 20); }) ==
        path + ": is 53687091200 bytes, more than the 1048576 allowed");
}

TEST_CASE("a FIFO or a device as a CSV, libsvm or IDX file is one data line, never a wait") {
  temp_dir dir;
  const std::string fifo = dir.file("train.csv");
  testing::make_fifo(fifo);
  const std::string expected = "data: " + fifo + ": is a FIFO, not a regular file";
  CHECK(testing::without_blocking(fifo, [&] {
          return error_of([&] { load_csv(fifo, csv_label_column::first); });
        }) == expected);
  CHECK(testing::without_blocking(fifo, [&] { return error_of([&] { load_libsvm(fifo); }); }) ==
        expected);
  CHECK(error_of([] { load_csv("/dev/zero", csv_label_column::first); }) ==
        "data: /dev/zero: is a character device, not a regular file");
  CHECK(error_of([] { load_libsvm("/dev/zero"); }) ==
        "data: /dev/zero: is a character device, not a regular file");

  temp_dir mnist;
  idx_files::write_mnist(mnist, 20, 10, false);
  const std::string images = mnist.file("train-images-idx3-ubyte");
  fs::remove(images);
  testing::make_fifo(images);
  CHECK(testing::without_blocking(images, [&] {
          return error_of([&] { load_mnist(mnist.str(), 5); });
        }) == "data: " + images + ": is a FIFO, not a regular file");
  CHECK(testing::without_blocking(images, [&] {
          return error_of([&] { summarize_mnist(mnist.str()); });
        }) == "data: " + images + ": is a FIFO, not a regular file");
}

TEST_CASE("a plain IDX file shorter or longer than its header says is refused before its payload is read") {
  temp_dir dir;
  const std::string images = dir.file("images");
  const std::string labels = dir.file("labels");
  // 4294967295 images of 28x28 claimed by a 116-byte file.
  idx_files::write_plain(images, idx_files::concat(idx_files::be_words({2051, 4294967295u, 28, 28}),
                                                   std::vector<std::uint8_t>(100)));
  idx_files::write_plain(labels, idx_files::label_file(3));
  CHECK(error_of([&] { load_idx_pair(images, labels); }) ==
        "data: " + images +
            ": truncated: expected 3367254359280 bytes of pixel data after the header, got 100");
}

TEST_CASE("a label beyond the classes of the other labels names the file, the example and the label") {
  temp_dir dir;
  idx_files::write_mnist(dir, 20, 10, false);  // labels i % 10: the classes 0 to 9
  const std::string train_labels = dir.file("train-labels-idx1-ubyte");
  auto bytes = idx_files::label_file(20);
  bytes[8 + 7] = 200;  // one damaged byte: example 7
  idx_files::write_plain(train_labels, bytes);
  const std::string train_error =
      "data: " + train_labels +
      ": example 7 has label 200, but no training example has label 10 (expected the classes 0 "
      "to 9 of the other labels, each with examples)";
  CHECK(error_of([&] { load_mnist(dir.str(), 5); }) == train_error);
  CHECK(error_of([&] { summarize_mnist(dir.str()); }) == train_error);

  idx_files::write_plain(train_labels, idx_files::label_file(20));
  const std::string test_labels = dir.file("t10k-labels-idx1-ubyte");
  bytes = idx_files::label_file(10);
  bytes[8 + 2] = 200;
  idx_files::write_plain(test_labels, bytes);
  const std::string test_error = "data: " + test_labels +
                                 ": example 2 has label 200, not a class of the training data "
                                 "(expected 0 to 9)";
  CHECK(error_of([&] { load_mnist(dir.str(), 5); }) == test_error);
  CHECK(error_of([&] { summarize_mnist(dir.str()); }) == test_error);

  idx_files::write_plain(test_labels, idx_files::label_file(10));
  CHECK(load_mnist(dir.str(), 5).classes == 10);
  CHECK(summarize_mnist(dir.str()).classes == 10);

  // A CSV file's labels are held to the same rule.
  const std::string train_csv = dir.file("train.csv");
  const std::string test_csv = dir.file("test.csv");
  write_text(train_csv, "0,0.5\n1,0.5\n3,0.5\n");
  write_text(test_csv, "0,0.5\n");
  auto train = load_csv(train_csv, csv_label_column::first);
  auto test = load_csv(test_csv, csv_label_column::first);
  CHECK(error_of([&] { class_count({train_csv, train}, {test_csv, test}); }) ==
        "data: " + train_csv +
            ": example 2 has label 3, but no training example has label 2 (expected the classes 0 "
            "to 1 of the other labels, each with examples)");
}

}  // namespace downpour::test_input_files
