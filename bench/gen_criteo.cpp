// gen_criteo: Criteo-format training and test files (tab-separated label,
// I1..I13, C1..C26) drawn from a planted model (bench/support/
// criteo_planted.hpp), and planted.json with the planted model's log loss
// and AUC on the test file: what a learner approaches with enough training
// lines per planted weight (docs/models.md).
//
//   gen_criteo --out DIR [--train N] [--test N] [--seed S] [--files K]
//              [--gzip] [--vocabulary-scale F] [--base-rate R]
//
// Writes DIR/train.tsv (--files K > 1: train-0.tsv .. train-(K-1).tsv, as
// equal as can be; --gzip: .tsv.gz), DIR/test.tsv(.gz) and DIR/planted.json,
// each whole or not at all (runtime/files/durable_write.hpp), the JSON last.
#include <unistd.h>
#include <zlib.h>

#include <boost/program_options.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>

#include "bench/support/criteo_planted.hpp"
#include "model/sparse_metrics.hpp"
#include "runtime/files/durable_write.hpp"

namespace {

using namespace downpour;
namespace po = boost::program_options;

constexpr std::size_t kMaxExamples = 100000000000;
constexpr std::size_t kMaxFiles = 10000;
constexpr std::uint64_t kTrainStream = 0;
constexpr std::uint64_t kTestStream = 1;
constexpr std::size_t kChunk = std::size_t{1} << 20;

struct tool_options {
  std::string out;
  std::size_t train = 1000000;
  std::size_t test = 100000;
  std::size_t files = 1;
  bool gzip = false;
  criteo_spec spec;
};

tool_options parse(int argc, char** argv) {
  tool_options o;
  po::options_description desc("gen_criteo options");
  desc.add_options()("help", "this text")("out", po::value(&o.out)->required(),
                                         "directory for the files and planted.json")(
      "train", po::value(&o.train)->default_value(o.train), "training examples")(
      "test", po::value(&o.test)->default_value(o.test), "test examples")(
      "files", po::value(&o.files)->default_value(o.files), "training files")(
      "gzip", po::bool_switch(&o.gzip), "write gzip files (.tsv.gz)")(
      "seed", po::value(&o.spec.seed)->default_value(o.spec.seed), "seed of everything drawn")(
      "vocabulary-scale", po::value(&o.spec.vocabulary_scale)->default_value(o.spec.vocabulary_scale),
      "every categorical field's vocabulary times this")(
      "base-rate", po::value(&o.spec.base_rate)->default_value(o.spec.base_rate),
      "expected share of labels 1");
  po::variables_map vm;
  po::store(po::parse_command_line(argc, argv, desc), vm);
  if (vm.count("help")) {
    std::cout << desc << "\n";
    std::exit(0);
  }
  po::notify(vm);
  for (const auto& [name, n] : {std::pair{"--train", o.train}, std::pair{"--test", o.test}})
    if (n == 0 || n > kMaxExamples)
      throw po::error(std::string(name) + " " + std::to_string(n) + " (expected 1 to 10^11 examples)");
  if (o.files == 0 || o.files > kMaxFiles || o.files > o.train)
    throw po::error("--files " + std::to_string(o.files) +
                    " (expected 1 to 10000, and at most --train)");
  if (!(o.spec.vocabulary_scale > 0) || !(o.spec.base_rate > 0 && o.spec.base_rate < 1))
    throw po::error("--vocabulary-scale must be > 0 and --base-rate between 0 and 1");
  return o;
}

// Writes the text chunk by chunk into fd, gzip-compressed or not.
class sink {
 public:
  sink(int fd, bool gzip, const std::string& path) : fd_(fd), path_(path) {
    if (gzip) gz_ = gzdopen(::dup(fd), "wb6");
    if (gzip && !gz_) throw std::runtime_error(path + ": cannot start gzip");
  }
  ~sink() {
    if (gz_) gzclose(gz_);
  }
  void write(const std::string& bytes) {
    if (gz_) {
      if (gzwrite(gz_, bytes.data(), static_cast<unsigned>(bytes.size())) != static_cast<int>(bytes.size()))
        throw std::runtime_error(path_ + ": cannot write");
      return;
    }
    for (std::size_t done = 0; done < bytes.size();) {
      const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw std::runtime_error(path_ + ": cannot write");
      done += static_cast<std::size_t>(n);
    }
  }
  void close() {
    if (gz_ && gzclose(gz_) != Z_OK) throw std::runtime_error(path_ + ": cannot finish gzip");
    gz_ = nullptr;
  }

 private:
  int fd_;
  std::string path_;
  gzFile gz_ = nullptr;
};

// Lines first .. first + n - 1 of stream into path, each also shown to seen.
void write_lines(const criteo_model& model, std::uint64_t stream, std::size_t first, std::size_t n,
                 bool gzip, const std::string& path,
                 const std::function<void(const criteo_model::line&)>& seen) {
  write_durably_from(path, [&](int fd) {
    sink out(fd, gzip, path);
    std::string chunk;
    for (std::size_t i = first; i < first + n; ++i) {
      const auto line = model.draw(stream, i);
      chunk += line.text;
      chunk += '\n';
      seen(line);
      if (chunk.size() >= kChunk) out.write(std::exchange(chunk, {}));
    }
    out.write(chunk);
    out.close();
  });
}

nlohmann::json summary(const tool_options& o, const criteo_model& model,
                       const std::vector<float>& logits, const std::vector<std::uint8_t>& labels) {
  const binary_metrics m = score_logits(logits, labels);
  const double rate = m.positive_rate;
  const double constant =
      rate <= 0 || rate >= 1 ? 0.0 : -(rate * std::log(rate) + (1 - rate) * std::log(1 - rate));
  nlohmann::json vocab = nlohmann::json::array();
  for (const auto& f : planted_categoricals(o.spec)) vocab.push_back(f.vocabulary);
  return {{"format", "criteo"}, {"seed", o.spec.seed}, {"base_rate", o.spec.base_rate},
          {"vocabulary_scale", o.spec.vocabulary_scale}, {"vocabularies", vocab},
          {"bias", model.bias()}, {"train_examples", o.train}, {"train_files", o.files},
          {"test_examples", o.test}, {"test_positive_rate", rate},
          {"constant_test_log_loss", constant}, {"planted_test_log_loss", m.log_loss},
          {"planted_test_auc", m.auc}, {"planted_test_accuracy", m.accuracy}};
}

}  // namespace

int main(int argc, char** argv) {
  tool_options o;
  try {
    o = parse(argc, argv);
  } catch (const po::error& e) {
    std::cerr << "gen_criteo: " << e.what() << " (see --help)\n";
    return 2;
  }
  try {
    const auto t0 = std::chrono::steady_clock::now();
    const criteo_model model(o.spec);
    const std::filesystem::path dir(o.out);
    const std::string ext = o.gzip ? ".tsv.gz" : ".tsv";
    for (std::size_t k = 0, first = 0; k < o.files; ++k) {
      const std::size_t n = o.train / o.files + (k < o.train % o.files ? 1 : 0);
      const std::string name = o.files == 1 ? "train" + ext : "train-" + std::to_string(k) + ext;
      write_lines(model, kTrainStream, first, n, o.gzip, (dir / name).string(),
                  [](const criteo_model::line&) {});
      first += n;
    }
    std::vector<float> logits;
    std::vector<std::uint8_t> labels;
    write_lines(model, kTestStream, 0, o.test, o.gzip, (dir / ("test" + ext)).string(),
                [&](const criteo_model::line& line) {
                  logits.push_back(static_cast<float>(line.logit));
                  labels.push_back(line.label);
                });
    const nlohmann::json s = summary(o, model, logits, labels);
    write_durably((dir / "planted.json").string(), s.dump(2) + "\n");
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cout << "gen_criteo: wrote " << o.train << " + " << o.test << " lines to " << o.out
              << " in " << seconds << " s; planted test log loss "
              << s["planted_test_log_loss"].get<double>() << ", AUC "
              << s["planted_test_auc"].get<double>() << " (constant predictor "
              << s["constant_test_log_loss"].get<double>() << ")\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "gen_criteo: " << e.what() << "\n";
    return 1;
  }
}
