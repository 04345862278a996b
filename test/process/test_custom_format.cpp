// A program with a data format of its own (test/support/custom_format_main.cpp,
// docs/library.md "Your own data"): --data-format=colon reads its made-up
// format in a local job, a cluster of ps and worker processes and eval; a bad
// file is one line and exit 1, a format nobody registered one line and exit 2.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "cluster_procs.hpp"
#include "log_lines.hpp"

namespace test_custom_format {

using namespace downpour::testing;
using namespace std::chrono_literals;

namespace {

const std::string program =
    (std::filesystem::path(DOWNPOUR_BINARY).parent_path() / "downpour_custom_format").string();

// n examples of 3 classes in the colon format, 4 features each: the class's
// own feature is 2 higher than the others, all with noise.
void write_colon(const std::string& path, std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0.0, 0.5);
  std::ofstream out(path);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t label = rng() % 3;
    out << label << ":";
    for (std::size_t f = 0; f < 4; ++f) out << " " << (f == label ? 2.0 : 0.0) + noise(rng);
    out << "\n";
  }
}

struct finished {
  int code = -1;
  std::string output;
};

finished run_program(std::vector<std::string> args, const std::string& log) {
  args.insert(args.begin(), program);
  process p(args, log);
  const int code = p.wait(120s);
  return {code, p.output()};
}

struct colon_data {
  temp_dir dir{"custom-format"};
  std::string train = dir / "train.colon", test = dir / "test.colon";
  colon_data() {
    write_colon(train, 1200, 1);
    write_colon(test, 300, 2);
  }
  std::vector<std::string> options() const {
    return {"--data-format=colon", "--train-file=" + train, "--test-file=" + test,
            "--validation-size=200", "--learning-rate=0.1", "--save-checkpoint-secs=0",
            "--quiet"};
  }
};

}  // namespace

TEST_CASE("a registered format trains a local job and eval reads its test file") {
  colon_data data;
  auto args = data.options();
  args.insert(args.end(), {"--last-step=300", "--checkpoint-dir=" + data.dir / "local"});
  const auto trained = run_program(args, data.dir / "local.log");
  REQUIRE_MESSAGE(trained.code == 0, trained.output);
  const auto final = final_of(trained.output);
  REQUIRE_MESSAGE(final, trained.output);
  CHECK(final->global_step == 300);
  CHECK(final->test_accuracy > 0.8);  // 3 planted classes: chance is 1/3

  const auto evaluated =
      run_program({"eval", "--data-format=colon", "--test-file=" + data.test,
                   "--checkpoint-dir=" + data.dir / "local"},
                  data.dir / "eval.log");
  CHECK_MESSAGE(evaluated.code == 0, evaluated.output);
  // The final line's accuracies: the same test examples, read by the reader again.
  CHECK(evaluated.output.find("eval: global_step=300 " + final->accuracies) != std::string::npos);
}

TEST_CASE("a registered format trains in 1 ps and 2 worker processes") {
  colon_data data;
  auto c = make_cluster(1, 2, data.dir / "cluster", data.options());
  auto node = [&](const std::string& role, int task) {
    auto args = c.node(role, task, {"--last-step=200"});
    args[0] = program;
    return args;
  };
  process ps(node("ps", 0), data.dir / "ps0.log"), chief(node("worker", 0), data.dir / "w0.log"),
      w1(node("worker", 1), data.dir / "w1.log");
  CHECK_MESSAGE(chief.wait(120s) == 0, chief.output());
  CHECK_MESSAGE(w1.wait(60s) == 0, w1.output());
  CHECK_MESSAGE(ps.wait(60s) == 0, ps.output());
  const auto final = final_of(chief.output());
  REQUIRE_MESSAGE(final, chief.output());
  CHECK(final->global_step == 200);
  CHECK(final->test_accuracy > 0.8);
}

TEST_CASE("a bad file of a registered format is one error line naming the file and line, exit 1") {
  colon_data data;
  {
    std::ofstream bad(data.dir / "bad.colon");
    bad << "1: 0.5 0.5 0.5 0.5\n2: 0.5 x 0.5 0.5\n";
  }
  auto args = data.options();
  args[1] = "--train-file=" + data.dir / "bad.colon";
  args.push_back("--checkpoint-dir=" + data.dir / "bad");
  const auto failed = run_program(args, data.dir / "bad.log");
  CHECK(failed.code == 1);
  CHECK(error_lines(failed.output) == 1);
  CHECK_MESSAGE(failed.output.find("data: " + data.dir.str() + "/bad.colon:2: a feature that is not a "
                                   "number") != std::string::npos,
                failed.output);
}

TEST_CASE("a format nobody registered is one line naming it and the formats there are, exit 2") {
  colon_data data;
  auto args = data.options();
  args[0] = "--data-format=semicolon";
  const auto refused = run_program(args, data.dir / "refused.log");
  CHECK(refused.code == 2);
  CHECK_MESSAGE(refused.output.find("downpour: config: --data-format=semicolon is not valid "
                                    "(expected idx|csv|libsvm|criteo|colon)") != std::string::npos,
                refused.output);
}

}  // namespace test_custom_format
