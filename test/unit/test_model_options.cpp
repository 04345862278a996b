// The options of the model and the data: --model, --hidden-units as a list,
// --data-format with its CSV or libsvm files and CSV's label column, the
// sparse models' options; what they refuse.
#include <doctest/doctest.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "config/cluster_fingerprint.hpp"
#include "config/options.hpp"
#include "parse_options.hpp"

namespace test_model_options {

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
  CHECK(error_of({"--model=rnn"}) ==
        "config: --model=rnn is not valid (expected mlp|softmax|cnn|logreg|fm|dlrm|wide_deep)");
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
  CHECK(error_of({"--train-file=a.csv"}) ==
        "config: --train-file is for --data-format=csv, libsvm, criteo or a registered format");
  CHECK(error_of({"--csv-label=last"}) == "config: --csv-label is for --data-format=csv");
  CHECK(error_of({"--data-format=svm"}) ==
        "config: --data-format=svm is not valid (expected idx|csv|libsvm|criteo)");
  CHECK(error_of({"--data-format=csv", "--train-file=a", "--test-file=b", "--csv-label=2"}) ==
        "config: --csv-label=2 is not valid (expected first|last)");
}

TEST_CASE("libsvm data needs both files; the sparse models need libsvm or Criteo data") {
  const options o = parse(
      {"--data-format=libsvm", "--train-file=a.libsvm", "--test-file=b.libsvm", "--model=logreg"});
  CHECK(o.data_format == data_format_kind::libsvm);
  CHECK(to_string(o.data_format) == "libsvm");
  CHECK(o.train_file == "a.libsvm");
  CHECK(o.test_file == "b.libsvm");
  CHECK(o.model == "logreg");
  CHECK(error_of({"--data-format=libsvm", "--test-file=b"}) ==
        "config: --data-format=libsvm needs --train-file and --test-file");
  CHECK(error_of({"--data-format=libsvm", "--train-file=a", "--test-file=b", "--csv-label=last"}) ==
        "config: --csv-label is for --data-format=csv");
  CHECK(error_of({"--model=logreg"}) ==
        "config: --model=logreg needs --data-format=libsvm or criteo");
  CHECK(error_of({"--model=fm", "--data-format=csv", "--train-file=a", "--test-file=b"}) ==
        "config: --model=fm needs --data-format=libsvm or criteo");
  CHECK(parse({"--data-format=criteo", "--train-file=a", "--test-file=b", "--model=fm"})
            .data_format == data_format_kind::criteo);
  // eval reads the test files only.
  CHECK(parse({"eval", "--data-format=libsvm", "--test-file=b"}).train_file.empty());
  CHECK(error_of({"eval", "--data-format=criteo"}) ==
        "config: --data-format=criteo needs --test-file");
}

TEST_CASE("dlrm and wide_deep take Criteo data and their shapes: --embedding-dim, --bottom-units, --top-units") {
  const std::vector<std::string> criteo = {"--data-format=criteo", "--train-file=a",
                                           "--test-file=b"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), criteo.begin(), criteo.end());
    return more;
  };
  const options d = parse(with({"--model=dlrm"}));
  CHECK(d.embedding_dim == 16);
  CHECK(d.bottom_units == std::vector<std::size_t>{512, 256, 64});
  CHECK(d.top_units == std::vector<std::size_t>{512, 256});
  const options small =
      parse(with({"--model=dlrm", "--embedding-dim=4", "--bottom-units=8", "--top-units=6,3"}));
  CHECK(small.embedding_dim == 4);
  CHECK(small.bottom_units == std::vector<std::size_t>{8});
  CHECK(small.top_units == std::vector<std::size_t>{6, 3});
  CHECK(parse(with({"--model=wide_deep", "--hidden-units=32,16", "--embedding-dim=8"}))
            .hidden_units == std::vector<std::size_t>{32, 16});
  CHECK(error_of({"--model=dlrm", "--data-format=libsvm", "--train-file=a", "--test-file=b"}) ==
        "config: --model=dlrm needs --data-format=criteo");
  CHECK(error_of({"--model=wide_deep"}) == "config: --model=wide_deep needs --data-format=criteo");
  CHECK(error_of(with({"--model=logreg", "--embedding-dim=8"})) ==
        "config: --embedding-dim is for --model=dlrm or wide_deep");
  CHECK(error_of(with({"--model=wide_deep", "--top-units=8"})) ==
        "config: --top-units is for --model=dlrm");
  CHECK(error_of(with({"--model=dlrm", "--hidden-units=8"})) ==
        "config: --hidden-units is for --model=mlp or wide_deep (dlrm has --bottom-units and "
        "--top-units)");
  CHECK(error_of(with({"--model=dlrm", "--embedding-dim=0"})).find("--embedding-dim") !=
        std::string::npos);
  CHECK(error_of(with({"--model=dlrm", "--bottom-units=8,0"})) ==
        "config: --bottom-units=8,0 has a bad entry '0' (expected a comma-separated list of "
        "integers >= 1, e.g. 500,300)");
}

TEST_CASE("streamed input: --input, --shuffle-buffer, --passes, --max-line-bytes and refusals") {
  const std::vector<std::string> libsvm = {"--data-format=libsvm", "--train-file=a",
                                           "--test-file=b"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), libsvm.begin(), libsvm.end());
    return more;
  };
  const options d = parse(libsvm);
  CHECK(streams_input(d));
  CHECK(d.shuffle_buffer == 65536);
  CHECK(d.passes == 0);
  CHECK(d.max_line_bytes == 1048576);
  CHECK_FALSE(streams_input(parse({})));
  CHECK_FALSE(streams_input(parse(with({"--input=memory"}))));
  CHECK(streams_input(parse({"--data-format=csv", "--train-file=a", "--test-file=b",
                             "--input=stream", "--passes=2"})));
  const options o = parse(with({"--passes=3", "--shuffle-buffer=1", "--max-line-bytes=4096"}));
  CHECK(o.passes == 3);
  CHECK(o.shuffle_buffer == 1);
  CHECK(o.max_line_bytes == 4096);
  CHECK(error_of({"--input=stream"}) ==
        "config: --input=stream is for --data-format=csv, libsvm or criteo (IDX images are read "
        "into memory)");
  CHECK(error_of({"--data-format=csv", "--train-file=a", "--test-file=b", "--passes=2"}) ==
        "config: --passes is for streamed input (--input=stream; libsvm and criteo files stream "
        "unless --input=memory)");
  CHECK(error_of(with({"--input=memory", "--shuffle-buffer=10"})).find("--shuffle-buffer is for "
                                                                       "streamed input") !=
        std::string::npos);
  CHECK(error_of(with({"--shuffle-buffer=0"})) ==
        "config: --shuffle-buffer=0 is out of range (expected an integer from 1 to 67108864)");
  CHECK(error_of({"--max-line-bytes=100"}) ==
        "config: --max-line-bytes is for --data-format=csv, libsvm or criteo");
  // Every node shares how the files are shared.
  CHECK(fingerprint_difference(cluster_fingerprint(parse(with({"--passes=1"}))),
                               cluster_fingerprint(parse(with({"--passes=2"}))), "ps 0") ==
        "passes=1 here but passes=2 at ps 0");
}

TEST_CASE("--sparse-rows, --fm-factors and --sparse-optimizer, and their one-line refusals") {
  const auto with = [](std::vector<std::string> more) {
    more.insert(more.begin(), {"--data-format=libsvm", "--train-file=a", "--test-file=b"});
    return more;
  };
  CHECK(parse({}).sparse_rows == 1048576);
  CHECK(parse({}).fm_factors == 8);
  CHECK(parse({}).sparse_optimizer == sparse_optimizer_kind::sgd);
  CHECK(parse({"--sparse-rows=67108864"}).sparse_rows == 67108864);
  CHECK(parse({"--sparse-rows=4611686018427387904"}).sparse_rows == std::uint64_t{1} << 62);
  CHECK(parse({"--sparse-optimizer=adagrad"}).sparse_optimizer == sparse_optimizer_kind::adagrad);
  CHECK(to_string(sparse_optimizer_kind::adagrad) == "adagrad");
  CHECK(parse(with({"--model=fm", "--fm-factors=16"})).fm_factors == 16);
  const std::string rows = " (expected an integer from 1 to 4611686018427387904)";
  CHECK(error_of({"--sparse-rows=0"}) == "config: --sparse-rows=0 is out of range" + rows);
  CHECK(error_of({"--sparse-rows=4611686018427387905"}) ==
        "config: --sparse-rows=4611686018427387905 is out of range" + rows);
  CHECK(error_of({"--sparse-rows=1e6"}) == "config: --sparse-rows=1e6 is not valid" + rows);
  CHECK(error_of({"--sparse-optimizer=adam"}) ==
        "config: --sparse-optimizer=adam is not valid (expected sgd|adagrad)");
  CHECK(error_of(with({"--model=fm", "--fm-factors=0"})) ==
        "config: --fm-factors=0 is out of range (expected an integer from 1 to 1024)");
  CHECK(error_of(with({"--model=logreg", "--fm-factors=4"})) ==
        "config: --fm-factors is for --model=fm");
}

TEST_CASE("the sparse options come from DOWNPOUR_ variables and are in the cluster fingerprint") {
  ::setenv("DOWNPOUR_SPARSE_ROWS", "67108864", 1);
  ::setenv("DOWNPOUR_SPARSE_OPTIMIZER", "adagrad", 1);
  const options from_env = parse({});
  const std::string bad = error_of({"--sparse-rows=x"});  // the command line wins
  ::setenv("DOWNPOUR_SPARSE_ROWS", "0", 1);
  const std::string env_error = error_of({});
  ::unsetenv("DOWNPOUR_SPARSE_ROWS");
  ::unsetenv("DOWNPOUR_SPARSE_OPTIMIZER");
  CHECK(from_env.sparse_rows == 67108864);
  CHECK(from_env.sparse_optimizer == sparse_optimizer_kind::adagrad);
  CHECK(bad.find("config: --sparse-rows=x is not valid") == 0);
  CHECK(env_error.find("config: DOWNPOUR_SPARSE_ROWS=0 is out of range") == 0);
  const std::string mine = cluster_fingerprint(parse({}));
  CHECK(fingerprint_difference(mine, cluster_fingerprint(parse({"--sparse-rows=1024"})), "ps 0") ==
        "sparse-rows=1048576 here but sparse-rows=1024 at ps 0");
  CHECK(fingerprint_difference(mine, cluster_fingerprint(parse({"--sparse-optimizer=adagrad"})),
                               "ps 0") ==
        "sparse-optimizer=sgd here but sparse-optimizer=adagrad at ps 0");
  CHECK_FALSE(fingerprint_difference(mine, cluster_fingerprint(parse({})), "ps 0"));
}

TEST_CASE("--help names the model and data options") {
  std::ostringstream out;
  CHECK_FALSE(parse({"--help"}, out).has_value());
  for (const char* name : {"--model NAME", "--hidden-units LIST", "--data-format F",
                           "--train-file FILE", "--test-file FILE", "--csv-label COL",
                           "--sparse-rows N", "--fm-factors K", "--sparse-optimizer OPT"})
    CHECK(out.str().find(std::string("  ") + name) != std::string::npos);
}

}  // namespace test_model_options
