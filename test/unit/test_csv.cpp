// The CSV reader: what it reads from well-formed files, and the one line
// naming file, line and column that each kind of broken file fails with.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "data/csv.hpp"
#include "idx_files.hpp"
#include "subprocess.hpp"

namespace downpour::test_csv {
namespace {

using testing::process;
using testing::temp_dir;
using namespace std::chrono_literals;

std::string write_file(const temp_dir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir / name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::string write_gzip_file(const temp_dir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir / name;
  idx_files::write_gz(path, std::vector<std::uint8_t>(text.begin(), text.end()));
  return path;
}

std::vector<float> features_of(const dataset& data, std::size_t i) {
  std::vector<float> out(data.features());
  data.copy_features(i, out.data());
  return out;
}

std::vector<std::int32_t> labels_of(const dataset& data) {
  std::vector<std::int32_t> out;
  for (std::size_t i = 0; i < data.size(); ++i) out.push_back(data.label(i));
  return out;
}

// The message load_csv fails with (empty if it does not fail).
std::string csv_error(const std::string& path, csv_label_column label) {
  try {
    load_csv(path, label);
  } catch (const data_error& e) {
    return e.what();
  }
  return "";
}

// Writes text to a file and checks that loading it fails with exactly one
// line: the file's name, the location ("line L, column C: ") and the fault.
void check_fault(const std::string& text, const std::string& location, const std::string& fault,
                 csv_label_column label = csv_label_column::last) {
  temp_dir dir("csv");
  const std::string path = write_file(dir, "bad.csv", text);
  const std::string message = csv_error(path, label);
  CAPTURE(text);
  CHECK(message == "data: " + path + ": " + location + fault);
}

}  // namespace

TEST_CASE("a file with a header and one without read as the same examples") {
  temp_dir dir("csv");
  const std::string rows = "0.5,-1,2e3,2\n1.25,0,-0.125,0\n";
  const auto plain = load_csv(write_file(dir, "plain.csv", rows), csv_label_column::last);
  const auto headed =
      load_csv(write_file(dir, "headed.csv", "a,b,c,label\n" + rows), csv_label_column::last);
  for (const auto& data : {plain, headed}) {
    REQUIRE(data->size() == 2);
    REQUIRE(data->features() == 3);
    CHECK(features_of(*data, 0) == std::vector<float>{0.5f, -1.f, 2000.f});
    CHECK(features_of(*data, 1) == std::vector<float>{1.25f, 0.f, -0.125f});
    CHECK(labels_of(*data) == std::vector<std::int32_t>{2, 0});
  }
  // One non-number among the features makes the first line a header.
  CHECK(load_csv(write_file(dir, "partly.csv", "1,x,3,label\n" + rows), csv_label_column::last)
            ->size() == 2);
}

TEST_CASE("the label is read from the first or the last column as asked") {
  temp_dir dir("csv");
  const std::string path = write_file(dir, "d.csv", "label,f1,f2\n3,0.5,7\n1,8,9\n");
  const auto first = load_csv(path, csv_label_column::first);
  CHECK(first->features() == 2);
  CHECK(labels_of(*first) == std::vector<std::int32_t>{3, 1});
  CHECK(features_of(*first, 0) == std::vector<float>{0.5f, 7.f});
  CHECK(features_of(*first, 1) == std::vector<float>{8.f, 9.f});
  // Read with the label last, "label" and "f1" make the first line a header all the same.
  const auto last = load_csv(path, csv_label_column::last);
  CHECK(labels_of(*last) == std::vector<std::int32_t>{7, 9});
  CHECK(features_of(*last, 0) == std::vector<float>{3.f, 0.5f});
}

TEST_CASE("CRLF line ends, a byte order mark, blanks around fields and blank lines at the end "
          "are accepted") {
  temp_dir dir("csv");
  const std::string path = write_file(
      dir, "windows.csv", "\xEF\xBB\xBFx,y,label\r\n 1.5 ,\t+2,1\r\n-3,4e-1,0\r\n\r\n  \n\n");
  const auto data = load_csv(path, csv_label_column::last);
  REQUIRE(data->size() == 2);
  CHECK(features_of(*data, 0) == std::vector<float>{1.5f, 2.f});
  CHECK(features_of(*data, 1) == std::vector<float>{-3.f, 0.4f});
  CHECK(labels_of(*data) == std::vector<std::int32_t>{1, 0});
  // The mark is no part of the first field, header or not.
  const auto marked = load_csv(write_file(dir, "bom.csv", "\xEF\xBB\xBF" "1,2,0\n"),
                               csv_label_column::last);
  CHECK(features_of(*marked, 0) == std::vector<float>{1.f, 2.f});
  // The last line may lack its line end; a value below float's range is 0.
  const auto no_end = load_csv(write_file(dir, "e.csv", "1e-50,7\n2,8"), csv_label_column::last);
  CHECK(labels_of(*no_end) == std::vector<std::int32_t>{7, 8});
  CHECK(features_of(*no_end, 0) == std::vector<float>{0.f});
}

TEST_CASE("a written file reads back exactly, across many read chunks and a line longer than one") {
  temp_dir dir("csv");
  std::mt19937 random(18);
  std::normal_distribution<float> value(0.f, 100.f);
  const std::size_t rows = 4000;
  const std::size_t features = 60;
  std::vector<float> written;
  std::vector<std::int32_t> labels;
  std::string text;
  char number[32];
  for (std::size_t r = 0; r < rows; ++r) {
    labels.push_back(static_cast<std::int32_t>(random() % 10));
    text += std::to_string(labels.back());
    for (std::size_t f = 0; f < features; ++f) {
      written.push_back(value(random));
      std::snprintf(number, sizeof number, ",%.9g", written.back());  // 9 digits: exact
      text += number;
    }
    text += '\n';
  }
  REQUIRE(text.size() > (std::size_t{2} << 20));
  const auto data = load_csv(write_file(dir, "many.csv", text), csv_label_column::first);
  REQUIRE(data->size() == rows);
  REQUIRE(data->features() == features);
  CHECK(labels_of(*data) == labels);
  for (std::size_t r = 0; r < rows; ++r) {
    const std::vector<float> read = features_of(*data, r);
    REQUIRE(std::equal(read.begin(), read.end(), written.begin() + r * features));
  }

  std::string long_row;
  for (int f = 0; f < 300000; ++f) long_row += std::to_string(f % 7) + ".25,";
  long_row += "5\n";
  REQUIRE(long_row.size() > (std::size_t{1} << 20));
  const std::string wide_file = write_file(dir, "wide.csv", long_row + long_row);
  const auto wide = load_csv(wide_file, csv_label_column::last, std::size_t{4} << 20);
  REQUIRE(wide->size() == 2);
  REQUIRE(wide->features() == 300000);
  const std::vector<float> second = features_of(*wide, 1);
  for (std::size_t f = 0; f < second.size(); f += 999) REQUIRE(second[f] == float(f % 7) + 0.25f);
  CHECK(labels_of(*wide) == std::vector<std::int32_t>{5, 5});
  // The same line is refused under the default --max-line-bytes, naming the limit.
  const std::string refused = csv_error(wide_file, csv_label_column::last);
  CHECK(refused.find(wide_file + ":1:") != std::string::npos);
  CHECK(refused.find("--max-line-bytes") != std::string::npos);
}

TEST_CASE("a gzip file reads as the same examples as the plain file") {
  temp_dir dir("csv");
  const std::string rows = "a,b,label\n0.5,-1,2\n1.25,0,0\n";
  const std::string plain = write_file(dir, "plain.csv", rows);
  const std::string zipped = write_gzip_file(dir, "zipped.csv.gz", rows);
  const auto a = load_csv(plain, csv_label_column::last);
  const auto b = load_csv(zipped, csv_label_column::last);
  REQUIRE(b->size() == 2);
  CHECK(labels_of(*b) == labels_of(*a));
  CHECK(features_of(*b, 1) == features_of(*a, 1));
}

TEST_CASE("a field that is not a number is named by line and column") {
  check_fault("a,b,label\n1,2,0\n3,abc,1\n", "line 3, column 2: ", "feature 'abc' is not a number");
  check_fault("1,2,0\n3,,1\n", "line 2, column 2: ", "empty field, expected a number");
  check_fault("1,2,0\n3,1e,1\n", "line 2, column 2: ", "feature '1e' is not a number");
}

TEST_CASE("a label that is not a non-negative integer is named by line and column") {
  for (const std::string label : {"2.5", "-1", "x", "", "1e3", "2147483648"}) {
    check_fault("f,label\n1," + label + "\n", "line 2, column 2: ",
                "label '" + label + "' is not a non-negative integer (at most 2147483647)");
  }
  check_fault("label,f\n0,1\n-1,2\n", "line 3, column 1: ", "label '-1' is not a non-negative integer (at most 2147483647)",
              csv_label_column::first);
}

TEST_CASE("NaN, infinite and too large features are refused") {
  for (const std::string bad : {"nan", "NaN", "inf", "-inf", "infinity"}) {
    check_fault("1,2,0\n1," + bad + ",0\n", "line 2, column 2: ",
                "feature '" + bad + "' is not finite (NaN or infinity)");
  }
  check_fault("1,2,0\n1e39,2,0\n", "line 2, column 1: ", "feature '1e39' is out of the range of a float");
}

TEST_CASE("a row with another number of fields than the first says how many were expected") {
  check_fault("a,b,label\n1,2,0\n1,2\n", "line 3, column 3: ",
              "row has 2 fields, expected 3 as the first line has");
  check_fault("1,2,0\n1,2,0,4\n", "line 2, column 4: ",
              "row has 4 fields, expected 3 as the first line has");
  check_fault("1\n", "line 1, column 1: ", "1 field, expected at least 2 (features and a label)");
}

TEST_CASE("blank lines may end the file but not come before or between rows") {
  check_fault("1,0\n\n2,1\n", "line 3, column 1: ",
              "a row after the blank line 2 (blank lines may only end the file)");
  check_fault("\n1,0\n", "line 2, column 1: ", "blank lines before the first row");
}

TEST_CASE("a quote is refused at its column: quoted fields are not supported") {
  check_fault("\"a,b\",c,label\n1,2,0\n", "line 1, column 1: ",
              "a quote (\"): quoted fields are not supported, only plain numbers");
  check_fault("a,b,label\n1,\"2\",0\n", "line 2, column 2: ",
              "a quote (\"): quoted fields are not supported, only plain numbers");
}

TEST_CASE("an empty file, a header without rows and an unreadable file are each one clear line") {
  check_fault("", "", "empty file: expected lines of comma-separated features and a label");
  check_fault("\n \r\n", "", "empty file: expected lines of comma-separated features and a label");
  check_fault("a,b,label\n\n", "", "line 1 is a header and no rows follow it");
  temp_dir dir("csv");
  CHECK(csv_error(dir / "missing.csv", csv_label_column::last) ==
        "data: " + dir / "missing.csv" + ": cannot open: No such file or directory");
  CHECK(csv_error(dir.str(), csv_label_column::last) ==
        "data: " + dir.str() + ": is a directory, not a regular file");
}

TEST_CASE("a field shown in an error is shortened and its control bytes are escaped") {
  check_fault("1,0\n" + std::string(50, '7') + "x,1\n", "line 2, column 1: ",
              "feature '" + std::string(40, '7') + "...' is not a number");
  check_fault("1,0\n1\r2,1\n", "line 2, column 1: ", "feature '1\\x0d2' is not a number");
}

TEST_CASE("scripts/make-csv writes train and test files that load_csv reads, the same for a seed") {
  temp_dir dir("make-csv");
  const std::string script = std::string(DOWNPOUR_SOURCE_DIR) + "/scripts/make-csv";
  const auto make = [&](const std::string& out, const std::string& seed) {
    process p({"/usr/bin/python3", script, "--classes=3", "--features=25", "--train=900",
               "--test=300", "--seed=" + seed, dir / out},
              dir / (out + ".log"));
    CAPTURE(p.output());
    REQUIRE(p.wait(60s) == 0);
    CHECK(p.output().find("the planted model's test accuracy is 0.") != std::string::npos);
  };
  make("a", "7");
  make("b", "7");
  make("c", "8");
  const auto train = load_csv(dir / "a/train.csv", csv_label_column::last);
  const auto test = load_csv(dir / "a/test.csv", csv_label_column::last);
  CHECK(train->size() == 900);
  CHECK(test->size() == 300);
  CHECK(train->features() == 25);
  CHECK(test->features() == 25);
  std::vector<std::size_t> per_class(3);
  for (std::int32_t label : labels_of(*train)) ++per_class.at(static_cast<std::size_t>(label));
  for (std::size_t count : per_class) CHECK(count > 50);
  // The labels belong to their rows: the nearest class mean of the training
  // rows (~0.74 for this seed; chance is at most 0.42) predicts the test labels.
  std::vector<std::vector<double>> means(3, std::vector<double>(25));
  for (std::size_t i = 0; i < train->size(); ++i) {
    const std::vector<float> x = features_of(*train, i);
    const auto label = static_cast<std::size_t>(train->label(i));
    for (std::size_t f = 0; f < 25; ++f) means[label][f] += x[f] / double(per_class[label]);
  }
  std::size_t right = 0;
  for (std::size_t i = 0; i < test->size(); ++i) {
    const std::vector<float> x = features_of(*test, i);
    std::vector<double> distance(3);
    for (std::size_t c = 0; c < 3; ++c)
      for (std::size_t f = 0; f < 25; ++f) distance[c] += std::pow(x[f] - means[c][f], 2);
    const auto nearest = std::min_element(distance.begin(), distance.end()) - distance.begin();
    right += nearest == test->label(i);
  }
  CHECK(double(right) / double(test->size()) > 0.6);

  const auto slurp = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  CHECK(slurp(dir / "a/train.csv") == slurp(dir / "b/train.csv"));
  CHECK(slurp(dir / "a/train.csv") != slurp(dir / "c/train.csv"));

  process usage({"/usr/bin/python3", script}, dir / "usage.log");
  CHECK(usage.wait(60s) == 2);
  CHECK(usage.output().find("usage: make-csv [--classes N] [--features N] [--train N] [--test N] "
                            "[--seed S] OUT_DIR") != std::string::npos);
}

}  // namespace downpour::test_csv
