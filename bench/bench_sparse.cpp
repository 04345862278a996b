// The hashed logistic regression trained in one process (model/
// sparse_trainer.hpp) for one pass over a generated libsvm training file,
// against the planted model's test log loss (bench/gen_libsvm), for each
// number of rows N: speed, memory and how close it gets.
//
//   gen_libsvm --out DIR                      the data (4M + 500k examples)
//   bench_sparse --data DIR [--rows-log2 20,26] [--batch 100]
//                [--optimizer adagrad|sgd] [--lr 0.3] [--json FILE]
//
// Each N runs in a child process of its own (this program with --one), so
// that its peak RSS (getrusage) is its own: the training file is streamed
// in blocks, so what grows is the table, with the rows touched.
#include <sys/resource.h>

#include <cmath>
#include <ctime>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bench/bench_common.hpp"
#include "data/libsvm.hpp"
#include "bench/support/sparse_trainer.hpp"
#include "test/support/subprocess.hpp"

using namespace downpour;
using namespace downpour::bench;

namespace {

constexpr std::size_t kBlock = std::size_t{1} << 16;

struct settings {
  std::string data;
  std::vector<unsigned> rows_log2{20, 26};
  std::size_t batch = 100;
  std::string optimizer = "adagrad";
  float lr = 0.3f;
  bool one = false;
};

[[noreturn]] void usage_error(const std::string& what) {
  std::cerr << "bench_sparse: " << what << " (see the comment at the top of bench_sparse.cpp)\n";
  std::exit(2);
}

settings parse(const std::vector<std::string>& args) {
  settings s;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const auto eq = a.find('=');
    const std::string key = a.substr(0, eq);
    if (key == "--one") {
      s.one = true;
      continue;
    }
    std::string value;
    if (eq != std::string::npos) {
      value = a.substr(eq + 1);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      usage_error("option " + key + " needs a value");
    }
    try {
      if (key == "--data") {
        s.data = value;
      } else if (key == "--rows-log2") {
        s.rows_log2.clear();
        std::stringstream list(value);
        for (std::string item; std::getline(list, item, ',');) {
          const unsigned bits = static_cast<unsigned>(std::stoul(item));
          if (bits < 1 || bits > 40) usage_error("--rows-log2 " + item + " (expected 1 to 40)");
          s.rows_log2.push_back(bits);
        }
      } else if (key == "--batch") {
        s.batch = std::stoul(value);
        if (s.batch < 1 || s.batch > (1u << 20))
          usage_error("--batch " + value + " (expected 1 to 1048576)");
      } else if (key == "--optimizer") {
        s.optimizer = value;
        if (value != "adagrad" && value != "sgd")
          usage_error("--optimizer " + value + " (expected adagrad or sgd)");
      } else if (key == "--lr") {
        s.lr = std::stof(value);
        if (!(s.lr > 0) || !std::isfinite(s.lr))
          usage_error("--lr " + value + " (expected a finite number above 0)");
      } else {
        usage_error("unknown option " + key);
      }
    } catch (const std::logic_error&) {  // stoul, stof
      usage_error(key + " " + value + " is not a number");
    }
  }
  if (s.data.empty()) usage_error("--data DIR is required (make it with gen_libsvm --out DIR)");
  return s;
}

double peak_rss_mb() {
  struct rusage u {};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

nlohmann::json planted_summary(const std::string& dir) {
  std::ifstream in(dir + "/planted.json");
  if (!in) usage_error(dir + "/planted.json is missing (make the data with gen_libsvm --out " + dir + ")");
  return nlohmann::json::parse(in);
}

// CPU seconds of this thread (the training loop's, whatever a reader does).
double thread_cpu_s() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// One N in this process; prints one "result:" line of JSON.
int run_one(const settings& s) {
  const nlohmann::json planted = planted_summary(s.data);
  logreg_settings ls;
  ls.rows = std::uint64_t{1} << s.rows_log2.at(0);
  ls.batch_size = s.batch;
  ls.optimizer = s.optimizer == "sgd" ? update_rule::sgd : update_rule::adagrad;
  ls.learning_rate = s.lr;
  logreg_trainer trainer(ls);

  libsvm_reader reader(s.data + "/train.libsvm");
  double parse_s = 0, train_s = 0, train_cpu_s = 0, loss_sum = 0;
  std::size_t examples = 0, batches = 0;
  std::uint64_t rows = 0;
  for (;;) {
    sparse_examples block;
    parse_s += time_s([&] { block = reader.next(kBlock); });
    if (block.size() == 0) break;
    const double cpu0 = thread_cpu_s();
    train_s += time_s([&] {
      const logreg_trainer::pass pass = trainer.train(block);
      loss_sum += pass.mean_loss * static_cast<double>(pass.batches);
      batches += pass.batches;
      rows += pass.rows;
    });
    train_cpu_s += thread_cpu_s() - cpu0;
    examples += block.size();
  }
  sparse_examples test;
  const double load_test_s = time_s([&] { test = load_libsvm(s.data + "/test.libsvm"); });
  binary_metrics m;
  const double eval_s = time_s([&] { m = trainer.evaluate(test); });
  const double best = planted["planted_test_log_loss"].get<double>();
  const nlohmann::json result = {
      {"rows_log2", s.rows_log2.at(0)}, {"examples", examples},
      {"train_loss", batches ? loss_sum / static_cast<double>(batches) : 0.0},
      {"rows_pulled", rows},
      {"test_log_loss", m.log_loss}, {"planted_log_loss", best},
      {"gap_pct", 100.0 * (m.log_loss - best) / best}, {"test_auc", m.auc},
      {"planted_auc", planted["planted_test_auc"].get<double>()},
      {"parse_s", parse_s}, {"train_s", train_s}, {"train_cpu_s", train_cpu_s},
      {"load_test_s", load_test_s},
      {"eval_s", eval_s}, {"rows_held", trainer.weights().rows_held()},
      {"table_mb", static_cast<double>(trainer.weights().bytes_used()) / (1 << 20)},
      {"peak_rss_mb", peak_rss_mb()}};
  std::cout << "result: " << result.dump() << std::endl;
  return 0;
}

std::vector<std::string> child_args(const settings& s, unsigned bits) {
  std::error_code ec;
  return {std::filesystem::read_symlink("/proc/self/exe", ec).string(), "--one",
          "--data=" + s.data, "--rows-log2=" + std::to_string(bits),
          "--batch=" + std::to_string(s.batch), "--optimizer=" + s.optimizer,
          "--lr=" + std::to_string(s.lr)};
}

// The rows of one N's result in the report.
void add_rows(report& r, const nlohmann::json& j) {
  const std::string n = "N=2^" + std::to_string(j["rows_log2"].get<unsigned>()) + " ";
  const double examples = j["examples"].get<double>();
  r.value(n + "test log loss", {j["test_log_loss"].get<double>()}, "nats");
  r.limit(n + "gap to planted log loss", {j["gap_pct"].get<double>()}, "%", 2.0, true);
  r.value(n + "test AUC", {j["test_auc"].get<double>()}, "");
  r.value(n + "train examples/s", {examples / j["train_s"].get<double>()}, "examples/s");
  r.value(n + "rows pulled (and pushed)/s", {j["rows_pulled"].get<double>() / j["train_s"].get<double>()},
          "rows/s");
  r.value(n + "parse examples/s", {examples / j["parse_s"].get<double>()}, "examples/s");
  r.value(n + "rows held", {j["rows_held"].get<double>()}, "rows");
  r.value(n + "table bytes", {j["table_mb"].get<double>()}, "MiB");
  r.value(n + "peak RSS", {j["peak_rss_mb"].get<double>()}, "MiB");
}

}  // namespace

int main(int argc, char** argv) {
  cli args(argc, argv, "bench/sparse.json");
  const settings s = parse(args.rest);
  try {
    if (s.one) return run_one(s);
    const nlohmann::json planted = planted_summary(s.data);
    report r("bench_sparse");
    r.note("data", std::to_string(planted["train_examples"].get<std::size_t>()) + " train + " +
                       std::to_string(planted["test_examples"].get<std::size_t>()) +
                       " test examples, vocabulary " +
                       std::to_string(planted["vocabulary"].get<std::uint64_t>()) + ", zipf " +
                       fixed(planted["zipf"].get<double>(), 2));
    r.note("training", "one pass, " + s.optimizer + " lr " + fixed(s.lr, 3) + ", batch " +
                           std::to_string(s.batch) + ", single thread");
    r.note("planted test log loss", fixed(planted["planted_test_log_loss"].get<double>(), 5));
    r.note("load", loadavg() + ", " + cores_note());
    for (unsigned bits : s.rows_log2) {
      testing::temp_dir dir("bench-sparse");
      testing::process child(child_args(s, bits), dir / "child.log");
      const int code = child.wait(std::chrono::seconds(3600));
      const std::string out = child.output();
      const auto at = out.find("result: ");
      if (code != 0 || at == std::string::npos)
        throw std::runtime_error("the run with N = 2^" + std::to_string(bits) + " failed (exit " +
                                 std::to_string(code) + "): " + out);
      add_rows(r, nlohmann::json::parse(out.substr(at + 8, out.find('\n', at) - at - 8)));
    }
    r.print(std::cout);
    r.write_json(args.json);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "bench_sparse: " << e.what() << "\n";
    return 1;
  }
}
