// dlrm and wide_deep (model/ctr_models.hpp) trained by one worker in this
// process (bench/support/ctr_trainer.hpp) on planted Criteo data, against
// the same models in PyTorch (bench/ctr_torch.py) on the same files in the
// same order and batches, on one core: training examples/s and test AUC of
// each, side by side.
//
//   bench_ctr [--data DIR] [--models dlrm,wide_deep] [--batch 128] [--lr 0.1]
//             [--epochs 1] [--seed 1] [--sparse-rows 65536] [--embedding-dim 16]
//             [--bottom-units 512,256,64] [--top-units 512,256]
//             [--hidden-units 500] [--train N] [--test N] [--python PATH]
//             [--repeats N] [--json FILE]
//
// Without --data it draws the data first (gen_criteo next to this program:
// --train N, --test N lines, vocabulary scale 0.01, seed 1). Targets (issue
// 30): the test AUC within 0.005 of PyTorch's, and dlrm's examples/s at least
// 2x PyTorch's. Without Python and torch (--python, default the build's
// DOWNPOUR_PYTHON) it says so in one line and prints its own figures only.
#include <time.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bench/bench_common.hpp"
#include "bench/support/ctr_trainer.hpp"
#include "data/shard_plan.hpp"
#include "model/ctr_models.hpp"
#include "test/support/subprocess.hpp"

using namespace downpour;
using namespace downpour::bench;

namespace {

struct settings {
  std::string data;
  std::vector<std::string> models{"dlrm", "wide_deep"};
  std::size_t batch = 128, epochs = 1, train = 300000, test = 30000;
  std::uint64_t seed = 1;  // of both implementations' initial values
  float lr = 0.1f;
  std::uint64_t sparse_rows = std::uint64_t{1} << 16;
  std::size_t embedding_dim = 16;
  std::vector<std::size_t> bottom{512, 256, 64}, top{512, 256}, hidden{500};
  std::string python = DOWNPOUR_PYTHON;
};

[[noreturn]] void usage_error(const std::string& what) {
  std::cerr << "bench_ctr: " << what << " (see the comment at the top of bench_ctr.cpp)\n";
  std::exit(2);
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream list(text);
  for (std::string item; std::getline(list, item, ',');) items.push_back(item);
  return items;
}

std::size_t count(const std::string& key, const std::string& value, std::size_t max) {
  const unsigned long long n = std::stoull(value);
  if (n < 1 || n > max)
    usage_error(key + " " + value + " (expected 1 to " + std::to_string(max) + ")");
  return static_cast<std::size_t>(n);
}

std::vector<std::size_t> units(const std::string& key, const std::string& value) {
  std::vector<std::size_t> u;
  for (const std::string& item : split(value)) u.push_back(count(key, item, 1 << 16));
  if (u.empty()) usage_error(key + " is empty (expected units like 512,256)");
  return u;
}

void take(settings& s, const std::string& key, const std::string& value) {
  if (key == "--data") s.data = value;
  else if (key == "--python") s.python = value;
  else if (key == "--batch") s.batch = count(key, value, 1 << 16);
  else if (key == "--epochs") s.epochs = count(key, value, 1000);
  else if (key == "--seed") s.seed = std::stoull(value);
  else if (key == "--train") s.train = count(key, value, std::size_t{1} << 32);
  else if (key == "--test") s.test = count(key, value, std::size_t{1} << 32);
  else if (key == "--sparse-rows") s.sparse_rows = count(key, value, std::size_t{1} << 40);
  else if (key == "--embedding-dim") s.embedding_dim = count(key, value, 1024);
  else if (key == "--bottom-units") s.bottom = units(key, value);
  else if (key == "--top-units") s.top = units(key, value);
  else if (key == "--hidden-units") s.hidden = units(key, value);
  else if (key == "--lr") {
    s.lr = std::stof(value);
    if (!(s.lr > 0) || !std::isfinite(s.lr)) usage_error("--lr " + value + " (expected above 0)");
  } else if (key == "--models") {
    s.models = split(value);
    for (const std::string& m : s.models)
      if (m != "dlrm" && m != "wide_deep")
        usage_error("--models " + value + " (expected dlrm, wide_deep or both)");
  } else {
    usage_error("unknown option " + key);
  }
}

settings parse(const std::vector<std::string>& args) {
  settings s;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto eq = args[i].find('=');
    const std::string key = args[i].substr(0, eq);
    std::string value;
    if (eq != std::string::npos) value = args[i].substr(eq + 1);
    else if (i + 1 < args.size()) value = args[++i];
    else usage_error("option " + key + " needs a value");
    try {
      take(s, key, value);
    } catch (const std::logic_error&) {  // stoull, stof
      usage_error(key + " " + value + " is not a number");
    }
  }
  return s;
}

std::string next_to_self(const std::string& name) {
  std::error_code ec;
  return (std::filesystem::read_symlink("/proc/self/exe", ec).parent_path() / name).string();
}

// Runs args to completion; its output, or throws naming what with its exit code.
std::string run(const std::vector<std::string>& args, const std::string& log,
                const std::string& what) {
  testing::process p(args, log);
  const int code = p.wait(std::chrono::hours(6));
  if (code != 0)
    throw std::runtime_error(what + " failed (exit " + std::to_string(code) + "): " + p.output());
  return p.output();
}

nlohmann::json result_line(const std::string& out, const std::string& what) {
  const auto at = out.find("result: ");
  if (at == std::string::npos) throw std::runtime_error(what + " printed no result: " + out);
  return nlohmann::json::parse(out.substr(at + 8, out.find('\n', at) - at - 8));
}

bool has_torch(const settings& s, const std::string& dir) {
  testing::process p({s.python, "-c", "import torch, numpy"}, dir + "/torch-check.log");
  return p.wait(std::chrono::minutes(2)) == 0;
}

std::shared_ptr<const model> model_of(const settings& s, const std::string& name) {
  if (name == "dlrm") {
    dlrm_shape shape;
    shape.table_rows = s.sparse_rows;
    shape.embedding_dim = s.embedding_dim;
    shape.bottom_units = s.bottom;
    shape.top_units = s.top;
    return ctr_model_of(dlrm_design(shape));
  }
  wide_deep_shape shape;
  shape.table_rows = s.sparse_rows;
  shape.embedding_dim = s.embedding_dim;
  shape.hidden_units = s.hidden;
  return ctr_model_of(wide_deep_design(shape));
}

struct figures {
  double examples_per_s = 0, examples_per_cpu_s = 0, auc = 0, log_loss = 0;
};

// This thread's CPU seconds: what the loop costs whatever else runs on a
// shared machine.
double thread_cpu_s() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

figures downpour_run(const settings& s, const std::string& name, const std::vector<batch>& train,
                     const std::vector<batch>& test) {
  ctr_trainer trainer(model_of(s, name), {s.batch, s.lr, s.seed});
  std::size_t examples = 0;
  const double cpu0 = thread_cpu_s();
  const double seconds = time_s([&] {
    for (const batch& b : train) {
      trainer.step(b);
      examples += b.size;
    }
  });
  const double cpu = thread_cpu_s() - cpu0;
  const binary_metrics m = trainer.evaluate(test);
  const auto n = static_cast<double>(examples);
  return {n / seconds, n / cpu, m.auc, m.log_loss};
}

figures torch_run(const settings& s, const std::string& name, const std::vector<data_file>& train,
                  const std::string& test, const std::string& dir) {
  std::vector<std::string> args{s.python, std::string(DOWNPOUR_SOURCE_DIR) + "/bench/ctr_torch.py",
                                "--model", name, "--test", test, "--train"};
  for (const data_file& f : train) args.push_back(f.path);
  for (const auto& [flag, value] :
       {std::pair<std::string, std::string>{"--batch-size", std::to_string(s.batch)},
        {"--learning-rate", std::to_string(s.lr)}, {"--epochs", std::to_string(s.epochs)},
        {"--seed", std::to_string(s.seed)},
        {"--sparse-rows", std::to_string(s.sparse_rows)},
        {"--embedding-dim", std::to_string(s.embedding_dim)},
        {"--bottom-units", units_text(s.bottom)}, {"--top-units", units_text(s.top)},
        {"--hidden-units", units_text(s.hidden)}}) {
    args.push_back(flag);
    args.push_back(value);
  }
  const nlohmann::json j = result_line(run(args, dir + "/torch-" + name + ".log", "ctr_torch.py " + name),
                                       "ctr_torch.py");
  return {j["examples_per_s"].get<double>(), j["examples_per_cpu_s"].get<double>(),
          j["test_auc"].get<double>(), j["test_log_loss"].get<double>()};
}

std::string draw_data(const settings& s, const std::string& dir) {
  run({next_to_self("gen_criteo"), "--out", dir, "--train", std::to_string(s.train), "--test",
       std::to_string(s.test), "--vocabulary-scale", "0.01", "--seed", "1"},
      dir + "/gen.log", "gen_criteo");
  return dir;
}

std::string train_spec(const std::string& dir) {
  return std::filesystem::exists(dir + "/train.tsv") ? dir + "/train.tsv" : dir + "/train-*.tsv";
}

// The data and what runs on it, the same for each model.
struct bench_input {
  std::string data;
  std::vector<data_file> train_files;
  const std::vector<batch>& train;
  const std::vector<batch>& test;
  bool torch;
  std::string work;
  int repeats;
};

// Model `name` trained by both, repeats times, each repeat from other
// initial values (so the AUCs' spread is the seeds'); its rows of the report.
void compare(report& r, const settings& s, const std::string& name, const bench_input& in) {
  std::vector<double> ours_speed, ours_cpu, ours_auc, theirs_speed, theirs_cpu, theirs_auc, gaps;
  for (int k = 0; k < in.repeats; ++k) {
    settings seeded = s;
    seeded.seed = s.seed + static_cast<std::uint64_t>(k);
    const figures ours = downpour_run(seeded, name, in.train, in.test);
    ours_speed.push_back(ours.examples_per_s);
    ours_cpu.push_back(ours.examples_per_cpu_s);
    ours_auc.push_back(ours.auc);
    std::cout << "  " << name << " Downpour: " << fixed(ours.examples_per_s, 0)
              << " examples/s, test AUC " << fixed(ours.auc, 4) << std::endl;
    if (!in.torch) continue;
    const figures theirs = torch_run(seeded, name, in.train_files, in.data + "/test.tsv", in.work);
    theirs_speed.push_back(theirs.examples_per_s);
    theirs_cpu.push_back(theirs.examples_per_cpu_s);
    theirs_auc.push_back(theirs.auc);
    gaps.push_back(std::abs(ours.auc - theirs.auc));
    std::cout << "  " << name << " PyTorch:  " << fixed(theirs.examples_per_s, 0)
              << " examples/s, test AUC " << fixed(theirs.auc, 4) << std::endl;
  }
  r.value(name + " Downpour train examples/s", ours_speed, "examples/s");
  r.value(name + " Downpour train examples/CPU s", ours_cpu, "examples/s");
  r.value(name + " Downpour test AUC", ours_auc, "");
  if (!in.torch) return;
  r.value(name + " PyTorch train examples/s", theirs_speed, "examples/s");
  r.value(name + " PyTorch train examples/CPU s", theirs_cpu, "examples/s");
  r.value(name + " PyTorch test AUC", theirs_auc, "");
  r.limit(name + " |AUC Downpour - PyTorch|", gaps, "AUC", 0.005, true);
  if (name == "dlrm")
    r.ratio("dlrm examples/s Downpour / PyTorch", ratios(ours_speed, theirs_speed), 2.0, false);
  else
    r.value(name + " examples/s Downpour / PyTorch", ratios(ours_speed, theirs_speed), "ratio");
  r.value(name + " examples/CPU s Downpour / PyTorch", ratios(ours_cpu, theirs_cpu), "ratio");
}

}  // namespace

int main(int argc, char** argv) {
  cli args(argc, argv, "bench/ctr.json");
  const settings s = parse(args.rest);
  const int repeats = args.repeats > 0 ? args.repeats : 1;
  try {
    testing::temp_dir work("bench-ctr");
    const std::string data = s.data.empty() ? draw_data(s, work.str()) : s.data;
    std::ifstream planted_in(data + "/planted.json");
    if (!planted_in) usage_error(data + "/planted.json is missing (make the data with gen_criteo)");
    const nlohmann::json planted = nlohmann::json::parse(planted_in);
    const std::vector<data_file> train_files = list_data_files(train_spec(data));
    const std::vector<batch> train = criteo_batches(train_spec(data), s.batch, s.epochs);
    const std::vector<batch> test = criteo_batches(data + "/test.tsv", s.batch, 1);
    const bool torch = has_torch(s, work.str());
    if (!torch)
      std::cout << "bench_ctr: no PyTorch for " << s.python
                << " (python3-torch, or --python PATH): Downpour's figures only\n";

    report r("bench_ctr");
    r.note("data", std::to_string(planted["train_examples"].get<std::size_t>()) + " train + " +
                       std::to_string(planted["test_examples"].get<std::size_t>()) +
                       " test lines, vocabulary scale " +
                       fixed(planted["vocabulary_scale"].get<double>(), 4) + ", planted test AUC " +
                       fixed(planted["planted_test_auc"].get<double>(), 4));
    r.note("training", std::to_string(s.epochs) + " pass(es) in file order, batch " +
                           std::to_string(s.batch) + ", dlrm SGD lr " + fixed(s.lr, 3) +
                           ", tables of " + std::to_string(s.sparse_rows) + " rows x " +
                           std::to_string(s.embedding_dim) + ", one thread each");
    r.note("shapes", "dlrm bottom " + units_text(s.bottom) + " top " + units_text(s.top) +
                         "; wide_deep hidden " + units_text(s.hidden));
    r.note("load", loadavg() + ", " + cores_note());
    for (const std::string& name : s.models)
      compare(r, s, name, {data, train_files, train, test, torch, work.str(), repeats});
    r.print(std::cout);
    r.write_json(args.json);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "bench_ctr: " << e.what() << "\n";
    return 1;
  }
}
