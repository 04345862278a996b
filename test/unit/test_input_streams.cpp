// Streamed input files: plain and gzip bytes, lines with the longest allowed,
// file lists and globs, the Criteo format, and the one-line error for each
// kind of bad input met mid-stream. (Opening them, and the other input
// files, as bounded regular files: test_input_files.cpp.)
#include <doctest/doctest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "data/criteo.hpp"
#include "data/csv.hpp"
#include "data/byte_reader.hpp"
#include "data/libsvm.hpp"
#include "data/line_reader.hpp"
#include "data/shard_plan.hpp"
#include "data/text_format.hpp"
#include "subprocess.hpp"

namespace downpour::test_input_streams {
namespace {

using testing::temp_dir;

std::string write_file(const temp_dir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir / name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// text as one gzip member per part (gzip -c a b > ab).
std::string write_gzip(const temp_dir& dir, const std::string& name,
                       const std::vector<std::string>& parts) {
  const std::string path = dir / name;
  std::remove(path.c_str());
  for (const auto& part : parts) {
    gzFile f = gzopen(path.c_str(), "ab");
    REQUIRE(f);
    REQUIRE(gzwrite(f, part.data(), static_cast<unsigned>(part.size())) == static_cast<int>(part.size()));
    gzclose(f);
  }
  return path;
}

std::string read_all(byte_reader& in) {
  std::string out;
  char chunk[7];
  for (std::size_t n; (n = in.read(chunk, sizeof chunk)) > 0;) out.append(chunk, n);
  return out;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const data_error& e) {
    return e.what();
  }
  return "";
}

std::vector<std::string> lines_of(const std::string& path, std::size_t max_line) {
  byte_reader in(path, std::nullopt);
  line_reader lines(in, max_line);
  std::vector<std::string> out;
  while (auto l = lines.next()) out.emplace_back(l->text);
  return out;
}

}  // namespace

TEST_CASE("a gzip file of several members reads as its text, and seeks by uncompressed offset") {
  temp_dir dir("input");
  const std::string text = "1 3:1\n0 4:1\n1 5:2\n";
  const auto gz = write_gzip(dir, "a.gz", {"1 3:1\n0 4", ":1\n1 5:2\n"});
  byte_reader in(gz, std::nullopt);
  CHECK(in.gzip());
  CHECK(read_all(in) == text);
  in.seek(6);
  CHECK(read_all(in) == text.substr(6));
  in.seek(2);  // backwards: read again from the start
  CHECK(read_all(in) == text.substr(2));
  const auto plain = write_file(dir, "a.libsvm", text);
  byte_reader p(plain, std::nullopt);
  p.seek(12);
  CHECK(read_all(p) == text.substr(12));
  CHECK(load_libsvm(gz).size() == 3);
}

TEST_CASE("a truncated or corrupt gzip file is one error naming the file and the byte") {
  temp_dir dir("input");
  const auto gz = write_gzip(dir, "t.gz", {std::string(5000, 'x') + "\n"});
  const auto size = std::filesystem::file_size(gz);
  std::filesystem::resize_file(gz, size - 12);
  byte_reader in(gz, std::nullopt);
  CHECK(error_of([&] { read_all(in); }) ==
        "data: " + gz + ": byte " + std::to_string(size - 12) +
            ": the gzip stream is truncated (it ends inside a member)");
  const auto junk = write_gzip(dir, "j.gz", {"1 2:1\n"});
  std::ofstream(junk, std::ios::app | std::ios::binary) << "trailing";
  byte_reader j(junk, std::nullopt);
  CHECK(error_of([&] { read_all(j); }).find(": bytes after the last gzip member are not gzip data") !=
        std::string::npos);
}

TEST_CASE("a file that shrank or vanished since the job started is refused where it ends") {
  temp_dir dir("input");
  const auto path = write_file(dir, "s.libsvm", "1 2:1\n0 3:1\n");
  byte_reader in(path, 40);
  CHECK(error_of([&] { read_all(in); }) ==
        "data: " + path +
            ": byte 12: the file ends here but held 40 bytes when the job started (it shrank or "
            "was replaced)");
  std::filesystem::remove(path);
  CHECK(error_of([&] { byte_reader gone(path, 12); }) ==
        "data: " + path + ": cannot open: No such file or directory");
  CHECK(error_of([&] { byte_reader d(dir.str(), std::nullopt); }) ==
        "data: " + dir.str() + ": is a directory, not a regular file");
}

TEST_CASE("lines up to the longest allowed are read whole; a longer one is refused by line") {
  temp_dir dir("input");
  const std::string long_line = "1 " + std::string(3000, '7') + ":1";
  const auto path = write_file(dir, "l.libsvm", "0 1:1\n" + long_line + "\n1 2:1");
  CHECK(lines_of(path, 4000) == std::vector<std::string>{"0 1:1", long_line, "1 2:1"});
  CHECK(error_of([&] { lines_of(path, 1000); }) ==
        "data: " + path + ":2:1: line longer than 1000 bytes, the longest read (--max-line-bytes)");
  // Refused at the limit, not read whole first.
  CHECK(error_of([&] { libsvm_reader(path, 1000).next(10); }).find(":2:1: line longer than") !=
        std::string::npos);
}

TEST_CASE("a bad token is echoed cut to 40 characters") {
  temp_dir dir("input");
  const auto path = write_file(dir, "b.libsvm", "1 " + std::string(100000, 'x') + ":1\n");
  CHECK(error_of([&] { load_libsvm(path); }) ==
        "data: " + path + ":1:3: bad index '" + std::string(40, 'x') +
            "...' (expected an integer from 0 to 18446744073709551615)");
  CHECK(shown_token(std::string("a\tb", 3)) == "'a\\x09b'");
}

TEST_CASE("file lists take commas and globs, in name order, each file once") {
  temp_dir dir("input");
  for (const char* name : {"train-2.libsvm", "train-1.libsvm", "train-10.libsvm", "other.txt"})
    write_file(dir, name, "1 1:1\n");
  const auto files = list_data_files(dir / "train-*.libsvm" + "," + dir / "other.txt");
  REQUIRE(files.size() == 4);
  CHECK(files[0].path == dir / "train-1.libsvm");
  CHECK(files[1].path == dir / "train-10.libsvm");
  CHECK(files[3].path == dir / "other.txt");
  CHECK(files[3].size == 6);
  CHECK(error_of([&] { list_data_files(dir / "none-*.gz"); }) ==
        "data: '" + dir / "none-*.gz" + "' matches no file");
  CHECK(error_of([&] { list_data_files(dir / "other.txt," + dir / "other.txt"); }) ==
        "data: " + dir / "other.txt" + " is named twice in '" + dir / "other.txt," +
            dir / "other.txt" + "'");
  CHECK(error_of([&] { list_data_files(" , "); }) == "data: ' , ' names no file");
}

TEST_CASE("a Criteo line is label, 13 integers as log(1 + x) and 26 categoricals hashed by field") {
  std::string line = "1";
  for (int i = 1; i <= 13; ++i) line += "\t" + std::string(i == 2 ? "" : i == 3 ? "-5" : "3");
  for (int j = 1; j <= 26; ++j) line += "\t" + std::string(j == 4 ? "" : "68fd1e64");
  std::vector<std::uint64_t> keys;
  std::vector<float> values;
  REQUIRE(parse_criteo_line(line, keys, values) == std::uint8_t{1});
  CHECK(keys.size() == 11 + 25);  // I2 empty, I3 negative, C4 empty
  CHECK(keys[0] == 0);
  CHECK(values[0] == doctest::Approx(std::log1p(3.0)));
  CHECK(keys[1] == 3);
  // In field order: the categoricals after the integers, C4 left out.
  CHECK(keys[11] == criteo_key(0, "68fd1e64"));
  CHECK(keys[14] == criteo_key(4, "68fd1e64"));
  // Equal strings of two fields are two features.
  CHECK(criteo_key(0, "68fd1e64") != criteo_key(1, "68fd1e64"));
  CHECK(criteo_key(0, "68fd1e64") >= criteo_integer_fields);
  auto fault = [](const std::string& text) {
    std::vector<std::uint64_t> k;
    std::vector<float> v;
    try {
      parse_criteo_line(text, k, v);
    } catch (const line_fault& f) {
      return std::to_string(f.column) + ": " + f.what;
    }
    return std::string();
  };
  CHECK(fault("2" + line.substr(1)) == "1: bad label '2' (expected 0 or 1)");
  CHECK(fault("0\tx" + line.substr(3)) == "3: I1: bad number 'x' (expected an integer, or nothing)");
  CHECK(fault("0\t1\t2") == "6: 3 tab-separated fields, expected 40 (the label, I1..I13, C1..C26)");
  CHECK(fault(line + "\tx").find("more than 40 tab-separated fields") != std::string::npos);
}

TEST_CASE("a streamed CSV line whose label is past the test files' classes is refused at its field") {
  text_spec spec;
  spec.format = text_format::csv;
  spec.label = csv_label_column::last;
  const example_parser parser(spec, 3, 10);
  batch b;
  clear_batch(b, parser);
  CHECK(parser.parse("\xEF\xBB\xBF" "0.5,1,9\r", 0, 0, b));
  REQUIRE(b.size == 1);
  CHECK(b.y == std::vector<std::int32_t>{9});
  CHECK(b.x == std::vector<float>{0.5f, 1.0f});
  try {
    parser.parse("0.5,1,10", 0, 12, b);
    FAIL("label 10 of 10 classes was taken");
  } catch (const line_fault& f) {
    CHECK(f.column == 3);
    CHECK(f.what.find("label 10 is beyond the 10 classes") == 0);
  }
  CHECK(b.size == 1);
}

TEST_CASE("a Criteo feature tells its field: an integer field's key is the field, a categorical's in its top bits") {
  for (std::size_t i = 0; i < criteo_integer_fields; ++i) CHECK(criteo_field_of(i) == i);
  for (std::size_t j = 0; j < criteo_categorical_fields; ++j)
    for (const char* text : {"", "68fd1e64", "a value longer than eight bytes"}) {
      const std::uint64_t key = criteo_key(j, text);
      CHECK(criteo_field_of(key) == criteo_integer_fields + j);
      CHECK((key >> criteo_field_shift) == criteo_integer_fields + j);
    }
  // Below the field the hash still tells values apart.
  CHECK(((criteo_key(3, "68fd1e64") ^ criteo_key(3, "68fd1e65")) >> 40) != 0);
  std::string refused;
  try {
    criteo_field_of(13);
  } catch (const std::invalid_argument& e) {
    refused = e.what();
  }
  CHECK(refused ==
        "criteo: feature key 13 is not one a Criteo line gives (expected 0..12 or a categorical "
        "field in the top 6 bits; --data-format=criteo)");
  CHECK_THROWS_AS(criteo_field_of(std::uint64_t{39} << criteo_field_shift), std::invalid_argument);
}

}  // namespace downpour::test_input_streams
