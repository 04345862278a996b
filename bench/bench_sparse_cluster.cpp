// bench_sparse_cluster: the hashed logistic regression trained by downpour
// as 2 ps + 2 worker processes on loopback, next to bench_sparse's
// single-process loop of the same model and data, for each N side by side:
// examples/s of both and their ratio, rows pulled and pushed per second
// (and keys/s of one shard serving one worker, 1 ps + 1 worker process),
// the test log loss against the planted model's, and each process's peak
// resident set (a worker's must not grow with N; a ps's grows with the
// rows it holds). With NumPy at hand, also bench/numpy_adagrad.py (the same
// model vectorised in NumPy) and the single loop's examples/s over its.
//
//   bench_sparse_cluster --data DIR [--rows-log2 20,26] [--lr 0.3] [--batch 100,1000]
//                        [--trainers K] [--ticket-lease L] [--ps-replicas R]
//                        [--binary=PATH] [--json FILE]
//
// DIR holds gen_libsvm's files. One pass over the training file: the job's
// last step is examples / batch. Each batch size of the list is a sweep of
// its own; --trainers K > 1 adds 2 ps + 2 worker processes of K trainers
// each (docs/sparse.md, "Trainers") next to those of one. --ticket-lease L
// > 1 runs every cluster job with --ticket-lease=L, named in its rows.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <nlohmann/json.hpp>

#include "bench/bench_process.hpp"
#include "runtime/files/checkpoint.hpp"

namespace {

using namespace downpour;
using namespace downpour::bench;

struct settings {
  std::string data, binary;
  std::vector<unsigned> rows_log2{20, 26};
  double lr = 0.3;
  std::vector<std::size_t> batches{100, 1000};
  std::size_t batch = 100;  // the one being measured
  std::size_t trainers = 1;
  std::size_t ticket_lease = 1;  // passed to every cluster job when > 1
  std::size_t replicas = 1;  // --ps-replicas R > 1: the 2 + 2 job again with R copies of each shard
};

// "N=2^20 batch 100 " (and "lease 8 " with --ticket-lease 8): what every
// line of one sweep starts with.
std::string prefix(const settings& s, unsigned bits) {
  const std::string lease =
      s.ticket_lease > 1 ? "lease " + std::to_string(s.ticket_lease) + " " : "";
  return "N=2^" + std::to_string(bits) + " batch " + std::to_string(s.batch) + " " + lease;
}

// The targets: 2 ps + 2 workers at most 1.5x the single loop's CPU
// per example at batch 1000; 3x at batch 100 with two trainers per process.
// One trainer per process at batch 100 has no target: it is the baseline.
std::optional<double> cpu_ratio_limit(const settings& s, std::size_t trainers) {
  if (s.batch >= 1000) return 1.5;
  if (trainers > 1) return 3.0;
  return std::nullopt;
}

[[noreturn]] void usage_error(const std::string& what) {
  throw std::invalid_argument(what +
                              " (usage: bench_sparse_cluster --data DIR [--rows-log2 20,26] "
                              "[--lr 0.3] [--batch 100,1000] [--trainers K] [--ticket-lease L] "
                              "[--ps-replicas R] "
                              "[--binary=PATH])");
}

settings parse(const std::vector<std::string>& rest) {
  settings s;
  s.binary = find_binary(rest);
  for (std::size_t i = 0; i < rest.size(); ++i) {
    auto value = [&] {
      if (i + 1 >= rest.size()) usage_error(rest[i] + " needs a value");
      return rest[++i];
    };
    if (rest[i] == "--data") {
      s.data = value();
    } else if (rest[i] == "--rows-log2") {
      s.rows_log2.clear();
      std::stringstream list(value());
      for (std::string x; std::getline(list, x, ',');) s.rows_log2.push_back(std::stoul(x));
    } else if (rest[i] == "--lr") {
      s.lr = std::stod(value());
    } else if (rest[i] == "--batch") {
      s.batches.clear();
      std::stringstream list(value());
      for (std::string x; std::getline(list, x, ',');) s.batches.push_back(std::stoul(x));
    } else if (rest[i] == "--trainers") {
      s.trainers = std::stoul(value());
    } else if (rest[i] == "--ticket-lease") {
      s.ticket_lease = std::stoul(value());
    } else if (rest[i] == "--ps-replicas") {
      s.replicas = std::stoul(value());
    } else if (rest[i].rfind("--binary=", 0) != 0) {
      usage_error("unknown argument " + rest[i]);
    }
  }
  if (s.data.empty()) usage_error("--data DIR is required");
  if (s.binary.empty()) usage_error("no downpour binary found");
  if (s.batches.empty()) usage_error("--batch needs at least one size");
  if (s.trainers == 0) usage_error("--trainers must be at least 1");
  if (s.ticket_lease == 0) usage_error("--ticket-lease must be at least 1");
  if (s.replicas < 1 || s.replicas > 2) usage_error("--ps-replicas must be 1 or 2");
  return s;
}

// bench_sparse --one, next to this program: the single-process loop's result line.
nlohmann::json single_process(const settings& s, unsigned bits) {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  testing::temp_dir dir("bench-sparse-one");
  testing::process p({(self.parent_path() / "bench_sparse").string(), "--one", "--data=" + s.data,
                      "--rows-log2=" + std::to_string(bits), "--batch=" + std::to_string(s.batch),
                      "--optimizer=adagrad", "--lr=" + std::to_string(s.lr)},
                     dir / "one.log");
  wait_ok(p, "bench_sparse --one");
  const auto out = p.output();
  const auto at = out.find("result: ");
  if (at == std::string::npos) throw std::runtime_error("bench_sparse printed no result: " + out);
  auto result = nlohmann::json::parse(out.substr(at + 8, out.find('\n', at) - at - 8));
  result["cpu_s"] = p.cpu_s();  // the whole process: parsing, training, evaluation
  return result;
}

// Whether the Python the build names (DOWNPOUR_PYTHON) imports NumPy.
bool have_numpy() {
  testing::temp_dir dir("bench-sparse-numpy");
  testing::process p({DOWNPOUR_PYTHON, "-c", "import numpy"}, dir / "check.log");
  return p.wait(std::chrono::seconds(60)) == 0;
}

// bench/numpy_adagrad.py's result line for one N.
nlohmann::json numpy_reference(const settings& s, unsigned bits) {
  testing::temp_dir dir("bench-sparse-numpy");
  testing::process p({DOWNPOUR_PYTHON, std::string(DOWNPOUR_SOURCE_DIR) + "/bench/numpy_adagrad.py",
                      "--data", s.data, "--rows-log2", std::to_string(bits), "--batch",
                      std::to_string(s.batch), "--lr", std::to_string(s.lr)},
                     dir / "numpy.log");
  wait_ok(p, "numpy_adagrad.py");
  const auto out = p.output();
  const auto at = out.find("result: ");
  if (at == std::string::npos) throw std::runtime_error("numpy_adagrad.py printed no result: " + out);
  return nlohmann::json::parse(out.substr(at + 8, out.find('\n', at) - at - 8));
}

// The target: the single loop at least 3x NumPy's examples/s. Both
// train on one thread, so examples per CPU-second of training are their
// examples/s on an idle core, whatever else the machine runs; wall-time
// examples/s are shown too.
void add_numpy_rows(report& r, const settings& s, unsigned bits, const nlohmann::json& one,
                    const nlohmann::json& numpy) {
  const std::string n = prefix(s, bits);
  const double examples = one["examples"].get<double>();
  const double single_eps = examples / one["train_s"].get<double>();
  const double numpy_eps = numpy["examples_per_s"].get<double>();
  r.value(n + "NumPy AdaGrad examples/s", {numpy_eps}, "examples/s");
  r.value(n + "single loop / NumPy examples/s (wall)", {single_eps / numpy_eps}, "ratio");
  const double single_cpu_eps = examples / one["train_cpu_s"].get<double>();
  const double numpy_cpu_eps = numpy["examples"].get<double>() / numpy["train_cpu_s"].get<double>();
  r.value(n + "single loop examples per CPU-s", {single_cpu_eps}, "examples/s");
  r.value(n + "NumPy AdaGrad examples per CPU-s", {numpy_cpu_eps}, "examples/s");
  // The target is at batch 100; at larger batches NumPy's per-batch overhead shrinks.
  const std::string what = n + "single loop / NumPy examples per CPU-s";
  if (s.batch <= 100)
    r.limit(what, {single_cpu_eps / numpy_cpu_eps}, "ratio", 3.0, false);
  else
    r.value(what, {single_cpu_eps / numpy_cpu_eps}, "ratio");
  r.value(n + "NumPy test log loss", {numpy["test_log_loss"].get<double>()}, "nats");
}

std::vector<std::string> job_args(const settings& s, unsigned bits, std::size_t steps) {
  std::vector<std::string> args{"--model=logreg",
                                "--data-format=libsvm",
                                "--train-file=" + s.data + "/train.libsvm",
                                "--test-file=" + s.data + "/test.libsvm",
                                "--sparse-rows=" + std::to_string(std::uint64_t{1} << bits),
                                "--sparse-optimizer=adagrad",
                                "--learning-rate=" + std::to_string(s.lr),
                                "--lr-decay-rate=1",
                                "--batch-size=" + std::to_string(s.batch),
                                // One pass: each worker reads its share once (docs/input.md).
                                "--passes=1",
                                "--last-step=" + std::to_string(2 * steps),
                                "--validation-size=0",
                                "--save-checkpoint-secs=0",
                                "--log-level=warn"};
  if (s.ticket_lease > 1) args.push_back("--ticket-lease=" + std::to_string(s.ticket_lease));
  return args;
}

// A job as processes in dir, and the chief's summary.json.
struct job_run {
  cluster_run processes;
  nlohmann::json summary;
};

job_run run_job(const settings& s, std::size_t n_ps, std::size_t n_workers,
                const std::vector<std::string>& args, const testing::temp_dir& dir) {
  job_run out{run_cluster(s.binary, n_ps, n_workers, args, dir), {}};
  std::ifstream sj(dir / "summary.json");
  out.summary = nlohmann::json::parse(sj);
  return out;
}

// The unique rows a batch pulls per example, from the single loop's batches:
// what turns a job's examples/s into rows (keys) per second.
double rows_per_example(const nlohmann::json& one) {
  return one["rows_pulled"].get<double>() / one["examples"].get<double>();
}

void add_rows(report& r, const settings& s, unsigned bits, const nlohmann::json& one,
              const cluster_run& c, const nlohmann::json& summary, std::uint64_t rows_held,
              double planted, std::size_t trainers) {
  const std::string n =
      prefix(s, bits) + (trainers > 1 ? std::to_string(trainers) + " trainers each " : "");
  const double examples = one["examples"].get<double>();
  const double single_eps = examples / one["train_s"].get<double>();
  const double cluster_eps = examples / summary["wall_s"].get<double>();
  const double rows = rows_per_example(one);
  r.value(n + "single process examples/s", {single_eps}, "examples/s");
  r.value(n + "2 ps + 2 workers examples/s", {cluster_eps}, "examples/s");
  r.value(n + "cluster / single examples/s", {cluster_eps / single_eps}, "ratio");
  r.value(n + "cluster rows pulled (and pushed)/s", {cluster_eps * rows}, "rows/s");
  // Keys/s is wall time, so it only shows on an otherwise idle machine; the
  // CPU seconds target (every process's user + system) shows the cost of the
  // messages whatever else runs.
  r.value(n + "2 ps + 2 workers keys pulled/s per shard", {cluster_eps * rows / 2}, "keys/s");
  const double single_cpu = one["cpu_s"].get<double>() / examples * 1e6;
  const double cluster_cpu = c.cpu_s / examples * 1e6;
  r.value(n + "single process CPU-s per million examples", {single_cpu}, "s");
  r.value(n + "2 ps + 2 workers CPU-s per million examples", {cluster_cpu}, "s");
  const std::string ratio = n + "cluster / single CPU-s per example";
  if (const auto limit = cpu_ratio_limit(s, trainers))
    r.limit(ratio, {cluster_cpu / single_cpu}, "ratio", *limit, true);
  else
    r.value(ratio, {cluster_cpu / single_cpu}, "ratio");
  const double loss = summary["test_log_loss"].get<double>();
  r.value(n + "cluster test log loss", {loss}, "nats");
  r.limit(n + "cluster - single test log loss", {loss - one["test_log_loss"].get<double>()}, "nats",
          0.002, true);
  r.value(n + "cluster steps of the pass", {summary["global_step"].get<double>()}, "steps");
  r.limit(n + "cluster gap to planted log loss", {100.0 * (loss - planted) / planted}, "%", 2.0,
          true);
  r.value(n + "single gap to planted log loss", {one["gap_pct"].get<double>()}, "%");
  r.value(n + "rows held (both shards)", {static_cast<double>(rows_held)}, "rows");
  r.value(n + "worker 1 peak RSS", {c.worker_rss_mb[1]}, "MiB");
  r.value(n + "chief (worker 0) peak RSS", {c.worker_rss_mb[0]}, "MiB");
  r.value(n + "ps 0 peak RSS", {c.ps_rss_mb[0]}, "MiB");
  r.value(n + "ps 1 peak RSS", {c.ps_rss_mb[1]}, "MiB");
}

// The keys/s target is for one shard served to one worker: the same
// pass as 1 ps + 1 worker process, each with a core of its own.
void add_pair_rows(report& r, const settings& s, unsigned bits, std::size_t steps,
                   const nlohmann::json& one) {
  testing::temp_dir dir("bench-sparse-pair");
  const auto job = run_job(s, 1, 1, job_args(s, bits, steps), dir);
  const std::string n = prefix(s, bits) + "1 ps + 1 worker ";
  const double examples = one["examples"].get<double>();
  const double eps = examples / job.summary["wall_s"].get<double>();
  r.value(n + "examples/s", {eps}, "examples/s");
  // The targets: 4 M keys/s at batch 1000, 2.5 M at batch 100.
  r.limit(n + "keys pulled/s per shard", {eps * rows_per_example(one)}, "keys/s",
          s.batch >= 1000 ? 4e6 : 2.5e6, false);
  r.value(n + "CPU-s per million examples", {job.processes.cpu_s / examples * 1e6}, "s");
}

// The same pass in sync mode (2 workers aggregated per step) at the largest N.
void add_sync_row(report& r, const settings& s, std::size_t steps, double planted) {
  const unsigned bits = s.rows_log2.back();
  testing::temp_dir dir("bench-sparse-sync");
  auto args = job_args(s, bits, steps);
  args.push_back("--mode=sync");
  const auto summary = run_job(s, 2, 2, args, dir).summary;
  const double loss = summary["test_log_loss"].get<double>();
  const std::string n = prefix(s, bits) + "sync ";
  r.value(n + "cluster examples/s",
          {static_cast<double>(steps * s.batch) / summary["wall_s"].get<double>()}, "examples/s");
  r.limit(n + "cluster gap to planted log loss", {100.0 * (loss - planted) / planted}, "%", 2.0,
          true);
}

// The 2 ps + 2 worker job of K trainers per worker process, next to the
// single loop; its CPU-s (every process's).
double add_cluster(report& r, const settings& s, unsigned bits, std::size_t steps,
                   const nlohmann::json& one, double planted, std::size_t trainers) {
  testing::temp_dir dir("bench-sparse-cluster");
  auto args = job_args(s, bits, steps);
  args.push_back("--trainers=" + std::to_string(trainers));
  const auto job = run_job(s, 2, 2, args, dir);
  const auto& summary = job.summary;
  const auto ckpt =
      read_checkpoint(dir / checkpoint_name(summary["global_step"].get<std::int64_t>()));
  add_rows(r, s, bits, one, job.processes, summary, ckpt.rows.keys.size(), planted, trainers);
  return job.processes.cpu_s;
}

// The same 2 + 2 job with R copies of each shard: issue 40's bound on what
// replication costs, CPU-s per example at most 1.6x R = 1's.
void add_replicated(report& r, const settings& s, unsigned bits, std::size_t steps,
                    const nlohmann::json& one, double unreplicated_cpu_s) {
  testing::temp_dir dir("bench-sparse-replicated");
  auto args = job_args(s, bits, steps);
  args.push_back("--ps-replicas=" + std::to_string(s.replicas));
  const auto job = run_job(s, 2, 2, args, dir);
  const std::string n = prefix(s, bits) + "--ps-replicas " + std::to_string(s.replicas) + " ";
  const double examples = one["examples"].get<double>();
  r.value(n + "2 ps + 2 workers CPU-s per million examples", {job.processes.cpu_s / examples * 1e6},
          "s");
  r.limit(n + "/ --ps-replicas 1 CPU-s per example", {job.processes.cpu_s / unreplicated_cpu_s},
          "ratio", 1.6, true);
  r.value(n + "cluster test log loss", {job.summary["test_log_loss"].get<double>()}, "nats");
}

// One batch size: every N, then sync at the largest.
void sweep(report& r, const settings& s, const nlohmann::json& planted, bool numpy) {
  const std::size_t steps = planted["train_examples"].get<std::size_t>() / s.batch;
  const double planted_loss = planted["planted_test_log_loss"].get<double>();
  for (unsigned bits : s.rows_log2) {
    const auto one = single_process(s, bits);
    if (numpy) add_numpy_rows(r, s, bits, one, numpy_reference(s, bits));
    const double cpu_s = add_cluster(r, s, bits, steps, one, planted_loss, 1);
    if (s.replicas > 1) add_replicated(r, s, bits, steps, one, cpu_s);
    if (s.trainers > 1) add_cluster(r, s, bits, steps, one, planted_loss, s.trainers);
    add_pair_rows(r, s, bits, steps, one);
  }
  add_sync_row(r, s, steps, planted_loss);
}

}  // namespace

int main(int argc, char** argv) {
  cli args(argc, argv, "bench/sparse_cluster.json");
  try {
    const settings s = parse(args.rest);
    std::ifstream in(s.data + "/planted.json");
    if (!in) usage_error(s.data + "/planted.json is missing (make the data with gen_libsvm)");
    const auto planted = nlohmann::json::parse(in);
    const std::size_t examples = planted["train_examples"].get<std::size_t>();
    report r("bench_sparse_cluster");
    r.note("data", std::to_string(examples) + " train + " +
                       std::to_string(planted["test_examples"].get<std::size_t>()) +
                       " test examples");
    r.note("training", "one pass, AdaGrad lr " + fixed(s.lr, 3) +
                           "; cluster rows/s = its examples/s x the unique rows per example "
                           "of the single loop's batches");
    r.note("load", loadavg() + ", " + cores_note());
    const bool numpy = have_numpy();
    if (!numpy)
      r.note("NumPy reference", std::string("skipped: ") + DOWNPOUR_PYTHON +
                                    " has no numpy (install python3-numpy)");
    for (const std::size_t batch : s.batches) {
      settings b = s;
      b.batch = batch;
      sweep(r, b, planted, numpy);
    }
    r.print(std::cout);
    r.write_json(args.json);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "bench_sparse_cluster: " << e.what() << "\n";
    return 1;
  }
}
