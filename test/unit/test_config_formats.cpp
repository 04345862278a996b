// --data-format with the formats a program registered (runtime/cli/app.hpp):
// their names are accepted next to the built-in ones and nothing else is.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "config/options.hpp"

namespace test_config_formats {

using namespace downpour;

namespace {

const known_formats colon_and_tsv{{"colon", "tsv"}};

options parse_with(const std::vector<std::string>& args, const known_formats& formats) {
  std::vector<const char*> argv{"program"};
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out;
  auto o = parse_options(static_cast<int>(argv.size()), argv.data(), out, formats);
  REQUIRE(o.has_value());
  return *o;
}

std::string error_with(const std::vector<std::string>& args, const known_formats& formats) {
  try {
    parse_with(args, formats);
  } catch (const config_error& e) {
    return e.what();
  }
  return "(no error)";
}

const std::vector<std::string> files = {"--train-file=a.colon", "--test-file=b.colon"};

std::vector<std::string> with_files(std::vector<std::string> args) {
  args.insert(args.end(), files.begin(), files.end());
  return args;
}

}  // namespace

TEST_CASE("a registered format's name is accepted with its files, and named as given") {
  const options o = parse_with(with_files({"--data-format=tsv"}), colon_and_tsv);
  CHECK(o.data_format == data_format_kind::registered);
  CHECK(o.registered_format == "tsv");
  CHECK(data_format_name(o) == "tsv");
  CHECK(o.train_file == "a.colon");
  CHECK(o.test_file == "b.colon");
  CHECK_FALSE(streams_input(o));
  // The built-in formats keep their meaning.
  const options csv = parse_with(with_files({"--data-format=csv"}), colon_and_tsv);
  CHECK(csv.data_format == data_format_kind::csv);
  CHECK(data_format_name(csv) == "csv");
  CHECK(csv.registered_format.empty());
}

TEST_CASE("a format nobody registered is refused naming the value and every format there is") {
  CHECK(error_with(with_files({"--data-format=semicolon"}), colon_and_tsv) ==
        "config: --data-format=semicolon is not valid (expected idx|csv|libsvm|criteo|colon|tsv)");
  // Without registered formats, the names of one program mean nothing to another.
  CHECK(error_with(with_files({"--data-format=colon"}), {}) ==
        "config: --data-format=colon is not valid (expected idx|csv|libsvm|criteo)");
}

TEST_CASE("a registered format needs its files and reads into memory") {
  CHECK(error_with({"--data-format=colon", "--train-file=a"}, colon_and_tsv) ==
        "config: --data-format=colon needs --train-file and --test-file");
  CHECK(error_with({"eval", "--data-format=colon"}, colon_and_tsv) ==
        "config: --data-format=colon needs --test-file");
  CHECK(parse_with({"eval", "--data-format=colon", "--test-file=b"}, colon_and_tsv).test_file ==
        "b");
  CHECK(error_with(with_files({"--data-format=colon", "--input=stream"}), colon_and_tsv) ==
        "config: --input=stream is for --data-format=csv, libsvm or criteo (a registered format "
        "is read into memory)");
  CHECK(error_with(with_files({"--data-format=colon", "--csv-label=last"}), colon_and_tsv) ==
        "config: --csv-label is for --data-format=csv");
  // Its reader may give sparse examples: the sparse models are the model factory's to refuse.
  CHECK(parse_with(with_files({"--data-format=colon", "--model=logreg"}), colon_and_tsv).model ==
        "logreg");
}

}  // namespace test_config_formats
