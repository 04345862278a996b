// The libsvm reader: what it accepts, the one-line error naming file, line
// and column for each kind of malformed line, block-wise reading, and the
// writer's text read back as the same examples.
#include <doctest/doctest.h>

#include <fstream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "data/libsvm.hpp"
#include "subprocess.hpp"

namespace downpour::test_libsvm {
namespace {

using testing::temp_dir;

std::string write_file(const temp_dir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir / name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// The message load_libsvm throws for a file holding text, or "" if none.
std::string load_error(const std::string& text) {
  temp_dir dir("libsvm");
  const std::string path = write_file(dir, "bad.libsvm", text);
  try {
    load_libsvm(path);
  } catch (const data_error& e) {
    const std::string message = e.what();
    // The temporary directory differs per run: keep what follows it.
    return message.substr(message.find("bad.libsvm"));
  }
  return "";
}

void check_same(const sparse_examples& a, const sparse_examples& b) {
  CHECK(a.offsets == b.offsets);
  CHECK(a.keys == b.keys);
  CHECK(a.values == b.values);
  CHECK(a.labels == b.labels);
}

}  // namespace

TEST_CASE("labels, comments, blank lines, tabs, CRLF and floats read as compressed rows") {
  temp_dir dir("libsvm");
  const std::string path = write_file(dir, "ok.libsvm",
                                      "# a header comment\n"
                                      "1 3:1 7:0.5 18446744073709551615:-2.5e-3\n"
                                      "\n"
                                      "-1\t0:+4 # trailing comment\r\n"
                                      "   \n"
                                      "+1\n"
                                      "0 5:1e3\r\n"
                                      "1.0 2:1");  // no newline at the end
  const sparse_examples set = load_libsvm(path);
  REQUIRE(set.size() == 5);
  CHECK(set.labels == std::vector<std::uint8_t>{1, 0, 1, 0, 1});
  CHECK(set.offsets == std::vector<std::uint64_t>{0, 3, 4, 4, 5, 6});
  CHECK(set.keys == std::vector<std::uint64_t>{3, 7, 18446744073709551615ull, 0, 5, 2});
  CHECK(set.values == std::vector<float>{1.0f, 0.5f, -2.5e-3f, 4.0f, 1000.0f, 1.0f});
}

TEST_CASE("every malformed line is one error naming file, line, column and the fault") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"1 3:1\n2 4:1\n", "bad.libsvm:2:1: bad label '2' (expected 0 or 1, or -1 or +1)"},
      {"yes 4:1\n", "bad.libsvm:1:1: bad label 'yes' (expected 0 or 1, or -1 or +1)"},
      {"3:1 4:1\n", "bad.libsvm:1:1: bad label '3:1' (expected 0 or 1, or -1 or +1)"},
      {"1 3:1 4\n", "bad.libsvm:1:7: missing ':' in '4' (expected index:value)"},
      {"0 -3:1\n", "bad.libsvm:1:3: bad index '-3' (expected an integer from 0 to "
                   "18446744073709551615)"},
      {"0 18446744073709551616:1\n", "bad.libsvm:1:3: bad index '18446744073709551616' "
                                     "(expected an integer from 0 to 18446744073709551615)"},
      {"0 :1\n", "bad.libsvm:1:3: bad index '' (expected an integer from 0 to "
                 "18446744073709551615)"},
      {"0 qid:3 1:1\n", "bad.libsvm:1:3: bad index 'qid' (expected an integer from 0 to "
                        "18446744073709551615)"},
      {"1 2:x\n", "bad.libsvm:1:5: bad value 'x' for index 2 (expected a float)"},
      {"1 2:\n", "bad.libsvm:1:5: bad value '' for index 2 (expected a float)"},
      {"1 2:1.5.1\n", "bad.libsvm:1:5: bad value '1.5.1' for index 2 (expected a float)"},
      {"1 2:nan\n", "bad.libsvm:1:5: value 'nan' for index 2 is not finite"},
      {"1 2:-inf\n", "bad.libsvm:1:5: value '-inf' for index 2 is not finite"},
      {"1 2:1e60\n", "bad.libsvm:1:5: value '1e60' for index 2 is out of float range"},
      {"1 5:1 5:2\n", "bad.libsvm:1:7: duplicate index 5 (indices must ascend within a line)"},
      {"1 5:1 3:2\n",
       "bad.libsvm:1:7: index 3 after index 5 (indices must ascend within a line)"},
      {"1 3:1\n\n# c\n0 1:1 2:1  1:1\r\n",
       "bad.libsvm:4:12: index 1 after index 2 (indices must ascend within a line)"},
  };
  for (const auto& [text, expected] : cases) {
    CAPTURE(text);
    CHECK(load_error(text) == expected);
  }
}

TEST_CASE("a missing or empty file is refused by name") {
  temp_dir dir("libsvm");
  CHECK_THROWS_WITH_AS(load_libsvm(dir / "none.libsvm"),
                       ("data: " + (dir / "none.libsvm") +
                        ": cannot open: No such file or directory").c_str(),
                       data_error);
  const std::string empty = write_file(dir, "empty.libsvm", "# only a comment\n\n");
  CHECK_THROWS_WITH_AS(load_libsvm(empty), ("data: " + empty + ": contains no examples").c_str(),
                       data_error);
}

TEST_CASE("written examples read back the same, whole or block by block") {
  // Random 64-bit indices, binary features and other floats (which take the
  // float parser both ways).
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<float> value(-100.0f, 100.0f);
  sparse_examples set;
  for (int i = 0; i < 3000; ++i) {
    std::set<std::uint64_t> keys;
    for (std::uint64_t n = rng() % 30; keys.size() < n;) keys.insert(rng() >> (rng() % 64));
    for (std::uint64_t k : keys) {
      set.keys.push_back(k);
      set.values.push_back(rng() % 2 ? 1.0f : value(rng));
    }
    set.close_example(static_cast<std::uint8_t>(rng() % 2));
  }
  temp_dir dir("libsvm");
  const std::string path = write_file(dir, "set.libsvm", libsvm_text(set));
  check_same(load_libsvm(path), set);

  libsvm_reader reader(path);
  sparse_examples joined;
  for (sparse_examples block = reader.next(1000); block.size() > 0; block = reader.next(1000)) {
    CHECK(block.size() == 1000);
    for (std::size_t i = 0; i < block.size(); ++i) {
      joined.keys.insert(joined.keys.end(), block.keys.begin() + block.offsets[i],
                         block.keys.begin() + block.offsets[i + 1]);
      joined.values.insert(joined.values.end(), block.values.begin() + block.offsets[i],
                           block.values.begin() + block.offsets[i + 1]);
      joined.close_example(block.labels[i]);
    }
  }
  check_same(joined, set);
}

TEST_CASE("a line longer than the read buffer is read whole, up to the longest allowed") {
  sparse_examples set;
  for (std::uint64_t k = 0; k < 600000; ++k) set.keys.push_back(k * 3);
  set.values.assign(set.keys.size(), 1.0f);
  set.close_example(1);
  set.keys.push_back(9);
  set.values.push_back(2.0f);
  set.close_example(0);
  temp_dir dir("libsvm");
  const std::string text = libsvm_text(set);
  REQUIRE(text.size() > (std::size_t{1} << 22));
  const std::string path = write_file(dir, "long.libsvm", text);
  libsvm_reader reader(path, std::size_t{8} << 20);
  check_same(reader.next(10), set);
  CHECK_THROWS_WITH_AS(load_libsvm(path),
                       ("data: " + path +
                        ":1:1: line longer than 1048576 bytes, the longest read (--max-line-bytes)")
                           .c_str(),
                       data_error);
}

TEST_CASE("a file damaged at random is read or refused with one data_error naming it") {
  const std::string good = "1 3:1 7:0.5 12:2\n0 1:1\n-1 4:3e2 9:1 # c\n+1\n";
  const std::string alphabet = "0123456789:+-.# \t\r\nenaix";
  std::mt19937_64 rng(13);
  temp_dir dir("libsvm");
  std::size_t refused = 0;
  for (int round = 0; round < 2000; ++round) {
    std::string text = good;
    for (std::uint64_t edits = 1 + rng() % 4; edits > 0; --edits) {
      const std::size_t at = rng() % text.size();
      if (rng() % 3 == 0) {
        text.erase(at, 1 + rng() % 3);
      } else {
        text[at] = alphabet[rng() % alphabet.size()];
      }
      if (text.empty()) text = "0";
    }
    const std::string path = write_file(dir, "damaged.libsvm", text);
    try {
      const sparse_examples set = load_libsvm(path);
      CHECK(set.offsets.back() == set.keys.size());
    } catch (const data_error& e) {
      ++refused;
      CHECK(std::string(e.what()).rfind("data: " + path + ":", 0) == 0);
    }
  }
  CHECK(refused > 500);
}

}  // namespace downpour::test_libsvm
