// Downpour against an independent implementation of the original job's math:
// test/golden/golden.py (NumPy, float32 like TensorFlow, nothing of
// Downpour's) replays the batches a run recorded (DOWNPOUR_RECORD_BATCHES)
// from the run's step-0 checkpoint (`downpour export`) and must end at the
// parameters and shadows of the run's checkpoint after K steps.
//
// Tolerance: |downpour - golden| <= 1e-5 * (|golden| + rms of the golden
// variable) for every entry of the parameters and of the shadows: 1e-5
// relative, with a floor of 1e-5 of the variable's typical size for entries
// near zero (biases start at 0). Both compute in float32 (unit roundoff 6e-8)
// and differ only in the order of sums (Eigen's blocking of the 784- and
// 100-term dot products against the golden's index order, the softmax sums,
// whichever BLAS NumPy loads: a case below checks that); each
// update moves a parameter by about 1e-4 of its size, so those roundoffs
// reach the parameters scaled down: after 50 to 200 steps the worst entry is at
// 0.02 to 0.05 of the tolerance (each case prints it). A wrong rule moves every entry
// it touches by far more: half the L2 factor by K * lr * 0.5e-4 = 1e-4 of
// every weight after K = 200 steps (the first case checks that the golden
// with --l2=5e-5 is refused); docs/fidelity.md lists what else was tried.
//
// One thing float32 cannot promise: a ReLU input within rounding of zero
// (golden.py prints the closest) may be on in one implementation and off in
// the other, which moves that unit by one example's share of a step, up to
// 1e-4 of its bias, and its neighbours after it. Measured here, sync with two
// workers first flips at step 65 (unit 355); the cases stay below that.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "data/batch_record.hpp"
#include "npz_reader.hpp"
#include "runtime/files/checkpoint.hpp"
#include "runtime/node/node.hpp"
#include "subprocess.hpp"
#include "test_jobs.hpp"

namespace test_golden {

using namespace downpour;
using downpour::testing::local_job;
using downpour::testing::process;
using downpour::testing::read_npz_array;
using downpour::testing::read_text;
using downpour::testing::run_local_job;
using downpour::testing::temp_dir;
using namespace std::chrono_literals;

namespace {

constexpr double relative_tolerance = 1e-5;

// Runs a job in this process with its workers recording their batches into
// record_dir.
void run_recorded(const options& opts, const std::string& record_dir) {
  ::setenv(record_batches_env, record_dir.c_str(), 1);
  auto result = run_local_job(opts);
  ::unsetenv(record_batches_env);
  REQUIRE(result);
  REQUIRE(result->summary.global_step == opts.last_step);
}

// `downpour export` of a checkpoint's parameters.
std::string export_params(const std::string& checkpoint, const std::string& out) {
  process p({DOWNPOUR_BINARY, "export", "--checkpoint=" + checkpoint, "--out=" + out}, out + ".log");
  INFO(p.output());
  REQUIRE(p.wait(60s) == 0);
  return out;
}

// The command that runs Python with NumPy on the BLAS in blas_dir ("": the
// system's choice, Debian's libblas.so.3 alternative).
std::vector<std::string> python_on(const std::string& blas_dir) {
  if (blas_dir.empty()) return {DOWNPOUR_PYTHON};
  return {"/usr/bin/env", "LD_LIBRARY_PATH=" + blas_dir, DOWNPOUR_PYTHON};
}

// The directories of the BLAS implementations NumPy may load: the reference
// BLAS and OpenBLAS (scripts/install-deps installs both).
std::vector<std::string> blas_dirs() {
  std::vector<std::string> dirs;
  for (const auto& arch : std::filesystem::directory_iterator("/usr/lib")) {
    for (const char* name : {"blas", "openblas-serial", "openblas-pthread"}) {
      if (std::filesystem::exists(arch.path() / name / "libblas.so.3"))
        dirs.push_back((arch.path() / name).string());
    }
  }
  return dirs;
}

// golden.py with args on the BLAS in blas_dir; its exit code and output.
std::pair<int, std::string> run_golden(const temp_dir& dir, std::vector<std::string> args,
                                       const std::string& blas_dir = "") {
  auto command = python_on(blas_dir);
  command.insert(command.end(), {DOWNPOUR_SOURCE_DIR "/test/golden/golden.py",
                                 "--data-dir=" DOWNPOUR_DEFAULT_DATA_DIR});
  command.insert(command.end(), args.begin(), args.end());
  static int runs = 0;
  process p(command, dir / ("golden" + std::to_string(++runs) + ".log"));
  int code = p.wait(600s);
  return {code, p.output()};
}

// A digest of NumPy's float32 product of two fixed random matrices of the
// first layer's shape, on the BLAS in blas_dir.
std::string numpy_product_digest(const temp_dir& dir, const std::string& blas_dir) {
  auto command = python_on(blas_dir);
  command.insert(command.end(), {"-c", R"(import hashlib, numpy as np
r = np.random.default_rng(0)
a = r.standard_normal((100, 784), dtype=np.float32)
b = r.standard_normal((784, 500), dtype=np.float32)
print(hashlib.sha256((a @ b).tobytes()).hexdigest()))"});
  process p(command, dir / "numpy-product.log");
  INFO(p.output());
  REQUIRE(p.wait(60s) == 0);
  return p.output();
}

struct deviation {
  double worst_excess = 0.0;  // max |d - g| / (rtol * (|g| + rms)): > 1 fails
  std::string where;          // the entry of worst_excess
};

double rms(const std::vector<float>& v) {
  double sum = 0.0;
  for (float x : v) sum += double(x) * x;
  return std::sqrt(sum / static_cast<double>(v.size()));
}

void compare(const std::vector<float>& downpour, const std::string& npz, const std::string& suffix,
             const model_layout& layout, deviation& d) {
  for (const auto& v : layout.variables()) {
    auto golden = read_npz_array(npz, v.name + suffix);
    REQUIRE(golden.values.size() == v.size());
    const double floor = rms(golden.values);
    for (std::size_t i = 0; i < v.size(); ++i) {
      const double g = golden.values[i], x = downpour[v.offset + i];
      const double excess = std::abs(x - g) / (relative_tolerance * (std::abs(g) + floor));
      if (excess > d.worst_excess) {
        d.worst_excess = excess;
        d.where = v.name + suffix + "[" + std::to_string(i) + "]";
      }
    }
  }
}

// How far the checkpoint is from the golden's parameters and shadows.
deviation deviation_from(const checkpoint& c, const std::string& npz) {
  deviation d;
  compare(c.params, npz, "", c.layout, d);
  compare(c.ema, npz, "/ExponentialMovingAverage", c.layout, d);
  return d;
}

// What golden.py replays: the step-0 parameters, the records of each run
// segment and the global steps they make.
struct replay {
  std::string init;
  std::vector<std::string> segments;
  std::int64_t steps = 0;
};

// Replays with golden.py on the BLAS in blas_dir into a new .npz; extra are
// golden.py's options for the job. Its path and golden.py's output.
std::pair<std::string, std::string> golden_npz(const temp_dir& dir, const replay& r,
                                               std::vector<std::string> extra,
                                               const std::string& blas_dir = "") {
  static int outputs = 0;
  const std::string out = dir / ("golden" + std::to_string(++outputs) + ".npz");
  extra.push_back("--init=" + r.init);
  extra.push_back("--steps=" + std::to_string(r.steps));
  extra.push_back("--out=" + out);
  for (const auto& s : r.segments) extra.push_back("--segment=" + s);
  auto [code, output] = run_golden(dir, extra, blas_dir);
  INFO(output);
  REQUIRE(code == 0);
  return {out, output};
}

// Replays the records with golden.py and compares it with the checkpoint
// after the last step; extra are golden.py's options for the job.
deviation golden_deviation(const temp_dir& dir, const std::string& init,
                           const std::vector<std::string>& segments, const std::string& final_ckpt,
                           std::vector<std::string> extra) {
  auto c = read_checkpoint(final_ckpt);
  auto [out, output] = golden_npz(dir, {init, segments, c.global_step}, std::move(extra));
  auto d = deviation_from(c, out);
  MESSAGE(output << "worst entry " << d.where << " at " << d.worst_excess << " of the tolerance");
  return d;
}

std::string ckpt(const std::string& dir, std::int64_t step) {
  return dir + "/" + checkpoint_name(step);
}

// A job run from scratch with its batches recorded: what the golden needs.
struct recorded_run {
  std::string init;        // its step-0 parameters, exported
  std::string records;     // the directory of its batch records
  std::string final_ckpt;  // its checkpoint at the last step
};

recorded_run run_from_scratch(const options& opts, const temp_dir& dir) {
  run_recorded(opts, dir / "batches");
  return {export_params(ckpt(opts.checkpoint_dir, 0), dir / "init.npz"), dir / "batches",
          ckpt(opts.checkpoint_dir, opts.last_step)};
}

}  // namespace

TEST_CASE("one async worker without pipelining ends where the NumPy golden ends") {
  temp_dir dir("golden-async");
  auto opts = local_job(2, 1, 200, dir / "run");
  opts.pipeline = false;
  auto run = run_from_scratch(opts, dir);
  CHECK(golden_deviation(dir, run.init, {run.records}, run.final_ckpt, {}).worst_excess <= 1.0);
  // The tolerance tells a wrong L2 factor apart.
  CHECK(golden_deviation(dir, run.init, {run.records}, run.final_ckpt, {"--l2=5e-5"})
            .worst_excess > 1.0);
}

TEST_CASE("one pipelined async worker ends where the golden with one step of staleness ends") {
  temp_dir dir("golden-pipeline");
  auto opts = local_job(2, 1, 100, dir / "run");
  opts.pipeline = true;
  auto run = run_from_scratch(opts, dir);
  CHECK(golden_deviation(dir, run.init, {run.records}, run.final_ckpt, {"--pipeline=on"})
            .worst_excess <= 1.0);
}

TEST_CASE("sync with two workers aggregated ends where the NumPy golden ends") {
  temp_dir dir("golden-sync");
  auto opts = local_job(2, 2, 50, dir / "run");
  opts.mode = train_mode::sync;
  auto run = run_from_scratch(opts, dir);
  CHECK(golden_deviation(dir, run.init, {run.records}, run.final_ckpt,
                         {"--mode=sync", "--replicas=2"})
            .worst_excess <= 1.0);
}

// The golden sums its products in index order itself: OpenBLAS, which
// libtorch-dev makes the system's BLAS, sums them in another order, and the
// golden on it once put a ReLU unit on the other side of the kink (462 times
// the tolerance after 200 steps).
TEST_CASE("the golden ends at the same bits whichever BLAS NumPy loads") {
  temp_dir dir("golden-blas");
  const auto dirs = blas_dirs();
  INFO("BLAS directories found: " << dirs.size());
  REQUIRE_MESSAGE(dirs.size() >= 2, "needs the reference BLAS and OpenBLAS: scripts/install-deps");
  // Else this case would show nothing: the two BLAS round a product differently.
  REQUIRE(numpy_product_digest(dir, dirs[0]) != numpy_product_digest(dir, dirs[1]));
  auto opts = local_job(2, 1, 50, dir / "run");
  opts.pipeline = false;
  auto run = run_from_scratch(opts, dir);
  const replay r{run.init, {run.records}, opts.last_step};
  const auto first = read_text(golden_npz(dir, r, {}, dirs[0]).first);
  REQUIRE(!first.empty());
  for (std::size_t i = 1; i < dirs.size(); ++i) {
    INFO(dirs[0] << " against " << dirs[i]);
    const bool same_bytes = read_text(golden_npz(dir, r, {}, dirs[i]).first) == first;
    CHECK(same_bytes);
  }
}

TEST_CASE("a run resumed from a checkpoint ends where the golden replaying both runs ends") {
  temp_dir dir("golden-resume");
  auto first = run_from_scratch(local_job(2, 1, 50, dir / "run"), dir);
  // The same checkpoint dir: the second run restores step 50 and goes on.
  auto second = local_job(2, 1, 100, dir / "run");
  run_recorded(second, dir / "batches-second");
  CHECK(golden_deviation(dir, first.init, {first.records, dir / "batches-second"},
                         ckpt(second.checkpoint_dir, 100), {})
            .worst_excess <= 1.0);
}

}  // namespace test_golden
