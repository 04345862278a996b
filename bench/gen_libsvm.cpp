// gen_libsvm: libsvm train and test files drawn from a planted sparse
// logistic model (bench/support/sparse_planted.hpp), and planted.json with the
// planted model's log loss on the test file: the best a learner can expect.
//
//   gen_libsvm --out DIR [--train N] [--test N] [--seed S] [--vocabulary K]
//              [--informative M] [--zipf s] [--draws F] [--weight-stddev SD]
//              [--base-rate R]
//
// Writes DIR/train.libsvm, DIR/test.libsvm and DIR/planted.json, each whole
// or not at all (runtime/files/durable_write.hpp), the JSON last.
#include <unistd.h>

#include <boost/program_options.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>

#include "data/libsvm.hpp"
#include "model/sparse_metrics.hpp"
#include "bench/support/sparse_planted.hpp"
#include "runtime/files/durable_write.hpp"

namespace {

using namespace downpour;
namespace po = boost::program_options;

constexpr std::size_t kBlock = std::size_t{1} << 16;
// Also keeps a negative count (which program_options wraps around) out.
constexpr std::size_t kMaxExamples = 100000000000;
constexpr std::uint64_t kTrainStream = 0;
constexpr std::uint64_t kTestStream = 1;

struct tool_options {
  std::string out;
  std::size_t train = 4000000;
  std::size_t test = 500000;
  planted_spec spec;
};

void write_all(int fd, const std::string& bytes, const std::string& path) {
  for (std::size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::runtime_error(path + ": cannot write: " + std::strerror(errno));
    done += static_cast<std::size_t>(n);
  }
}

// Draws n examples of stream into path, block by block, each also shown to seen.
void write_stream(const planted_model& model, std::uint64_t stream, std::size_t n,
                  const std::string& path,
                  const std::function<void(const sparse_examples&)>& seen) {
  write_durably_from(path, [&](int fd) {
    planted_sampler sampler(model, stream);
    for (std::size_t done = 0; done < n; done += kBlock) {
      const sparse_examples block = sampler.next(std::min(kBlock, n - done));
      write_all(fd, libsvm_text(block), path);
      seen(block);
    }
  });
}

// What the summary needs of a file written: its nonzeros, and for the test
// file the planted logits and the labels.
struct written {
  std::size_t nonzeros = 0;
  std::vector<float> logits;
  std::vector<std::uint8_t> labels;
};

tool_options parse(int argc, char** argv) {
  tool_options o;
  po::options_description desc("gen_libsvm options");
  desc.add_options()("help", "this text")(
      "out", po::value(&o.out)->required(), "directory for train.libsvm, test.libsvm, planted.json")(
      "train", po::value(&o.train)->default_value(o.train), "training examples")(
      "test", po::value(&o.test)->default_value(o.test), "test examples")(
      "seed", po::value(&o.spec.seed)->default_value(o.spec.seed), "seed of everything drawn")(
      "vocabulary", po::value(&o.spec.vocabulary)->default_value(o.spec.vocabulary),
      "K: feature indices 0..K-1")(
      "informative", po::value(&o.spec.informative)->default_value(o.spec.informative),
      "M: the most frequent features that carry a weight")(
      "zipf", po::value(&o.spec.zipf)->default_value(o.spec.zipf), "power-law exponent s")(
      "draws", po::value(&o.spec.draws)->default_value(o.spec.draws),
      "feature draws per example (repeats dropped)")(
      "weight-stddev", po::value(&o.spec.weight_stddev)->default_value(o.spec.weight_stddev),
      "stddev of the planted weights")(
      "base-rate", po::value(&o.spec.base_rate)->default_value(o.spec.base_rate),
      "expected share of labels 1");
  po::variables_map vm;
  po::store(po::parse_command_line(argc, argv, desc), vm);
  if (vm.count("help")) {
    std::cout << desc << "\n";
    std::exit(0);
  }
  po::notify(vm);
  for (const auto& [name, n] : {std::pair{"--train", o.train}, std::pair{"--test", o.test}}) {
    if (n == 0 || n > kMaxExamples)
      throw po::error(std::string(name) + " " + std::to_string(n) +
                      " (expected 1 to 10^11 examples)");
  }
  return o;
}

nlohmann::json summary(const tool_options& o, const planted_model& model, const written& train,
                       const written& test) {
  const binary_metrics m = score_logits(test.logits, test.labels);
  const double rate = m.positive_rate;
  const double constant =
      rate <= 0 || rate >= 1 ? 0.0 : -(rate * std::log(rate) + (1 - rate) * std::log(1 - rate));
  return {{"seed", o.spec.seed}, {"vocabulary", o.spec.vocabulary},
          {"informative", o.spec.informative}, {"zipf", o.spec.zipf}, {"draws", o.spec.draws},
          {"weight_stddev", o.spec.weight_stddev}, {"base_rate", o.spec.base_rate},
          {"bias", model.bias()}, {"train_examples", o.train}, {"test_examples", o.test},
          {"train_nonzeros", train.nonzeros}, {"test_nonzeros", test.nonzeros},
          {"test_positive_rate", rate}, {"constant_test_log_loss", constant},
          {"planted_test_log_loss", m.log_loss}, {"planted_test_auc", m.auc},
          {"planted_test_accuracy", m.accuracy}};
}

}  // namespace

int main(int argc, char** argv) {
  tool_options o;
  try {
    o = parse(argc, argv);
  } catch (const po::error& e) {
    std::cerr << "gen_libsvm: " << e.what() << " (see --help)\n";
    return 2;
  }
  try {
    const auto t0 = std::chrono::steady_clock::now();
    const planted_model model(o.spec);
    const std::filesystem::path dir(o.out);
    written train;
    write_stream(model, kTrainStream, o.train, (dir / "train.libsvm").string(),
                 [&](const sparse_examples& block) { train.nonzeros += block.nonzeros(); });
    written test;
    write_stream(model, kTestStream, o.test, (dir / "test.libsvm").string(),
                 [&](const sparse_examples& block) {
                   test.nonzeros += block.nonzeros();
                   for (std::size_t i = 0; i < block.size(); ++i)
                     test.logits.push_back(static_cast<float>(model.logit(block, i)));
                   test.labels.insert(test.labels.end(), block.labels.begin(), block.labels.end());
                 });
    const nlohmann::json s = summary(o, model, train, test);
    write_durably((dir / "planted.json").string(), s.dump(2) + "\n");
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cout << "gen_libsvm: wrote " << o.train << " + " << o.test << " examples to " << o.out
              << " in " << seconds << " s; planted test log loss "
              << s["planted_test_log_loss"].get<double>() << " (constant predictor "
              << s["constant_test_log_loss"].get<double>() << ")\n";
    return 0;
  } catch (const std::invalid_argument& e) {
    std::cerr << "gen_libsvm: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "gen_libsvm: " << e.what() << "\n";
    return 1;
  }
}
