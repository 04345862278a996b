// The options of the model and the data: --model, --hidden-units as a list,
// --data-format with its CSV files and label column; what they refuse.
#include <doctest/doctest.h>

#include <sstream>

#include "config/options.hpp"
#include "parse_options.hpp"

using namespace downpour;
using downpour::testing::error_of;
using downpour::testing::parse;

TEST_CASE("--model and --hidden-units choose the built-in model and its hidden layers") {
  CHECK(parse({}).model == "mlp");
  CHECK(parse({}).hidden_units == std::vector<std::size_t>{500});
  const options o = parse({"--model=mlp", "--hidden-units=500,300"});
  CHECK(o.hidden_units == std::vector<std::size_t>{500, 300});
  CHECK(parse({"--model", "softmax"}).model == "softmax");
  CHECK(parse({"--model=cnn"}).model == "cnn");  // refused, if not built, by the model factory
}

TEST_CASE("a bad --model or --hidden-units is one line naming the bad value") {
  CHECK(error_of({"--model=rnn"}) == "config: --model=rnn is not valid (expected mlp|softmax|cnn)");
  const std::string expected = " (expected a comma-separated list of integers >= 1, e.g. 500,300)";
  CHECK(error_of({"--hidden-units=500,x"}) ==
        "config: --hidden-units=500,x has a bad entry 'x'" + expected);
  CHECK(error_of({"--hidden-units=500,,300"}) ==
        "config: --hidden-units=500,,300 has a bad entry ''" + expected);
  CHECK(error_of({"--hidden-units=0"}) ==
        "config: --hidden-units=0 has a bad entry '0'" + expected);
  CHECK(error_of({"--hidden-units=300,"}) ==
        "config: --hidden-units=300, has a bad entry ''" + expected);
  CHECK(error_of({"--model=softmax", "--hidden-units=300"}) ==
        "config: --hidden-units is for --model=mlp (softmax has no hidden layer)");
}

TEST_CASE("CSV data needs both files and the files need CSV data") {
  const options o =
      parse({"--data-format=csv", "--train-file=a.csv", "--test-file=b.csv", "--csv-label=last"});
  CHECK(o.data_format == data_format_kind::csv);
  CHECK(o.train_file == "a.csv");
  CHECK(o.test_file == "b.csv");
  CHECK(o.csv_label == csv_label_kind::last);
  CHECK(parse({}).data_format == data_format_kind::idx);
  CHECK(parse({"--data-format=csv", "--train-file=a", "--test-file=b"}).csv_label ==
        csv_label_kind::first);
  CHECK(error_of({"--data-format=csv", "--train-file=a.csv"}) ==
        "config: --data-format=csv needs --train-file and --test-file");
  CHECK(error_of({"--train-file=a.csv"}) == "config: --train-file is for --data-format=csv");
  CHECK(error_of({"--csv-label=last"}) == "config: --csv-label is for --data-format=csv");
  CHECK(error_of({"--data-format=libsvm"}) ==
        "config: --data-format=libsvm is not valid (expected idx|csv)");
  CHECK(error_of({"--data-format=csv", "--train-file=a", "--test-file=b", "--csv-label=2"}) ==
        "config: --csv-label=2 is not valid (expected first|last)");
}

TEST_CASE("--help names the model and data options") {
  std::ostringstream out;
  CHECK_FALSE(parse({"--help"}, out).has_value());
  for (const char* name : {"--model NAME", "--hidden-units LIST", "--data-format F",
                           "--train-file FILE", "--test-file FILE", "--csv-label COL"})
    CHECK(out.str().find(std::string("  ") + name) != std::string::npos);
}
