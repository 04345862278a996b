// The eval, inspect and export commands, run as the built binary.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "model/init.hpp"
#include "model/mlp_spec.hpp"
#include "runtime/files/checkpoint.hpp"
#include "runtime/node/job.hpp"
#include "runtime/node/reference_trainer.hpp"
#include "subprocess.hpp"
#include "test_jobs.hpp"

namespace test_commands {

using namespace downpour;
using downpour::testing::process;
using downpour::testing::temp_dir;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

struct run_result {
  int code = -1;
  std::string output;  // stdout and stderr, interleaved
  std::string errors;  // stderr alone
};

// Runs the binary with stderr also kept apart, to count the error lines.
run_result run(const temp_dir& dir, const std::vector<std::string>& args) {
  auto tag = std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
  std::string err_path = dir / ("err-" + tag + ".log");
  std::vector<std::string> argv = {"/bin/sh", "-c", "exec \"$@\" 2>\"$0\"", err_path,
                                   DOWNPOUR_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  process p(argv, dir / ("out-" + tag + ".log"));
  run_result r;
  r.code = p.wait(300s);
  std::ifstream err(err_path);
  r.errors.assign(std::istreambuf_iterator<char>(err), {});
  r.output = p.output() + r.errors;
  return r;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::size_t lines(const std::string& text) {
  return std::count(text.begin(), text.end(), '\n');
}

checkpoint make_checkpoint(std::int64_t step, std::uint64_t seed,
                           const model_layout& layout = mlp_spec{}.layout("mlp")) {
  checkpoint c;
  c.layout = layout;
  c.global_step = step;
  c.mode = "ssp";
  c.wall_time = 1718000000.5;
  c.params = initial_parameters(layout, seed);
  c.ema = initial_parameters(layout, seed + 1);
  return c;
}

std::string fixed4(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", v);
  return buf;
}

// The default job's model and its data, as `downpour eval` builds them.
const job_model& default_job() {
  static const job_model job = downpour::testing::job_for(options{});
  return job;
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Checks the archive with zipfile and a hand-parsed .npy header, then with
// numpy.load itself, against the flat float buffer in raw_path; the arrays'
// names and shapes in order as JSON (default: the seed's MLP).
constexpr const char* npz_check = R"(
import json, struct, sys, zipfile
import numpy as np
npz, raw = sys.argv[1], sys.argv[2]
flat = np.fromfile(raw, dtype='<f4')
shapes = {'layer1/weights': (784, 500), 'layer1/biases': (500,),
          'layer2/weights': (500, 10), 'layer2/biases': (10,)}
if len(sys.argv) > 3:
    shapes = {name: tuple(shape) for name, shape in json.loads(sys.argv[3])}
with zipfile.ZipFile(npz) as z:
    assert z.testzip() is None
    assert z.namelist() == [n + '.npy' for n in shapes], z.namelist()
    for info in z.infolist():
        data = z.read(info)
        assert data[:8] == b'\x93NUMPY\x01\x00', data[:8]
        hlen = struct.unpack('<H', data[8:10])[0]
        assert (10 + hlen) % 64 == 0 and data[9 + hlen:10 + hlen] == b'\n', hlen
        assert b"'descr': '<f4'" in data[10:10 + hlen] and b"'fortran_order': False" in data[10:10 + hlen]
with np.load(npz) as f:
    assert sorted(f.files) == sorted(shapes), f.files
    offset = 0
    for name, shape in shapes.items():
        a = f[name]
        assert a.dtype == np.dtype('<f4') and a.shape == shape and a.flags.c_contiguous, (name, a.dtype, a.shape)
        assert a.tobytes() == flat[offset:offset + a.size].tobytes(), name
        offset += a.size
    assert offset == flat.size, (offset, flat.size)
print('npz ok')
)";

// npz_check's verdict on the archive against the flat values (the options
// after those two: the arrays' names and shapes).
std::string numpy_check(const temp_dir& dir, const std::string& npz,
                        const std::vector<float>& values, const std::vector<std::string>& extra) {
  write_bytes(dir / "flat.bin", std::string(reinterpret_cast<const char*>(values.data()),
                                            values.size() * sizeof(float)));
  std::ofstream(dir / "check.py") << npz_check;
  std::vector<std::string> args = {"/usr/bin/python3", dir / "check.py", npz, dir / "flat.bin"};
  args.insert(args.end(), extra.begin(), extra.end());
  process python(args, dir / "python.log");
  CHECK(python.wait(120s) == 0);
  return python.output();
}

}  // namespace

TEST_CASE("inspect prints the step, mode, shape, every variable and checksum ok") {
  temp_dir dir("cmd-inspect");
  std::string path = save_checkpoint(dir / "logs", make_checkpoint(1234, 1), 5);
  auto r = run(dir, {"inspect", "--checkpoint", path});
  CAPTURE(r.output);
  CHECK(r.code == 0);
  CHECK(r.errors.empty());
  for (const char* line : {"format_version: 2\n", "global_step: 1234\n", "mode: ssp\n",
                           "wall_time: 1718000000.500 (2024-06-10T06:13:20Z)\n",
                           "model: mlp 784-500-10 (397510 parameters)\n",
                           "variable: layer1/weights offset=0 shape=[784, 500]\n",
                           "variable: layer1/biases offset=392000 shape=[500]\n",
                           "variable: layer2/weights offset=392500 shape=[500, 10]\n",
                           "variable: layer2/biases offset=397500 shape=[10]\n"})
    CHECK(contains(r.output, line));
  CHECK(contains(r.output, " checksum ok\n"));
  SUBCASE("and without --checkpoint it takes the newest in --checkpoint-dir") {
    save_checkpoint(dir / "logs", make_checkpoint(1300, 1), 5);
    auto newest = run(dir, {"inspect", "--checkpoint-dir", dir / "logs"});
    CHECK(newest.code == 0);
    CHECK(contains(newest.output, "global_step: 1300\n"));
  }
}

TEST_CASE("inspect on a damaged checkpoint exits 1 with one error line") {
  temp_dir dir("cmd-inspect-bad");
  std::string path = save_checkpoint(dir.str(), make_checkpoint(77, 1), 5);
  std::string bytes = read_bytes(path);
  SUBCASE("a flipped byte in the weights: the metadata, CHECKSUM MISMATCH and one error line") {
    bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 1);
    write_bytes(path, bytes);
    auto r = run(dir, {"inspect", "--checkpoint", path});
    CAPTURE(r.output);
    CHECK(r.code == 1);
    CHECK(contains(r.output, "global_step: 77\n"));
    CHECK(contains(r.output, " CHECKSUM MISMATCH\n"));
    CHECK(lines(r.errors) == 1);
    CHECK(contains(r.errors, path + ": checksum mismatch"));
  }
  SUBCASE("a truncated file: only the error line") {
    write_bytes(path, bytes.substr(0, 5000));
    auto r = run(dir, {"inspect", "--checkpoint", path});
    CAPTURE(r.output);
    CHECK(r.code == 1);
    CHECK(lines(r.output) == 1);
    CHECK(r.errors == "downpour: checkpoint: " + path + ": truncated: 4970 of " +
                          std::to_string(bytes.size() - 30) + " payload bytes\n");
  }
  SUBCASE("not a checkpoint at all") {
    write_bytes(path, "model_checkpoint_path: \"model.ckpt-77\"\n");
    auto r = run(dir, {"inspect", "--checkpoint", path});
    CHECK(r.code == 1);
    CHECK(r.output == "downpour: checkpoint: " + path +
                          ": not a Downpour checkpoint (no DOWNPOUR-CKPT magic)\n");
  }
}

TEST_CASE(
    "export writes an npz that NumPy loads with the checkpoint's arrays, raw or moving averages") {
  temp_dir dir("cmd-export");
  checkpoint c = make_checkpoint(500, 3);
  c.params[1] = std::nanf("7");  // must arrive bit for bit
  c.ema[392001] = -0.0f;
  std::string path = save_checkpoint(dir.str(), c, 5);
  for (bool ema : {false, true}) {
    CAPTURE(ema);
    std::vector<std::string> args = {"export", "--checkpoint", path, "--out",
                                     dir / "out/model.npz"};
    if (ema) args.push_back("--ema");
    auto r = run(dir, args);
    CAPTURE(r.output);
    REQUIRE(r.code == 0);
    CHECK(contains(r.output, "export: wrote " + dir / "out/model.npz"));
    CHECK(numpy_check(dir, dir / "out/model.npz", ema ? c.ema : c.params, {}) == "npz ok\n");
    for (const auto& e : fs::directory_iterator(dir / "out"))
      CHECK(e.path().filename() == "model.npz");  // no temporary left beside it
  }
}

TEST_CASE("export writes every variable of any model under its name and TensorFlow shape") {
  temp_dir dir("cmd-export-models");
  const model_layout custom("logreg", "7-3",
                            {{"dense/kernel", 7, 3, {init_kind::truncated_normal, 1.0f}, true},
                             {"dense/bias", 1, 3, {}, false},
                             {"scale", 2, 2, {init_kind::truncated_normal, 1.0f}, false}});
  for (const model_layout& layout : {mlp_spec{784, {500, 300}, 10}.layout("mlp"),
                                     mlp_spec{784, {}, 10}.layout("softmax"), custom}) {
    CAPTURE(layout.to_string());
    const checkpoint c = make_checkpoint(7, 2, layout);
    std::string path = save_checkpoint(dir / layout.kind(), c, 5);
    std::string shapes = "[";
    for (const auto& v : layout.variables()) {
      std::string dims;
      for (std::size_t d : tf_shape(v)) dims += (dims.empty() ? "" : ",") + std::to_string(d);
      shapes += (shapes.size() > 1 ? ",[\"" : "[\"") + v.name + "\",[" + dims + "]]";
    }
    auto r = run(dir, {"export", "--checkpoint", path, "--out", dir / "model.npz"});
    CAPTURE(r.output);
    REQUIRE(r.code == 0);
    CHECK(numpy_check(dir, dir / "model.npz", c.params, {shapes + "]"}) == "npz ok\n");
    auto inspect = run(dir, {"inspect", "--checkpoint", path});
    CHECK(contains(inspect.output, "model: " + layout.to_string() + " (" +
                                       std::to_string(layout.size()) + " parameters)\n"));
    CHECK(contains(inspect.output, "variable: " + layout.variables().back().name + " offset=" +
                                       std::to_string(layout.variables().back().offset)));
  }
}

TEST_CASE("export without --out is a usage error of one line") {
  temp_dir dir("cmd-export-usage");
  std::string path = save_checkpoint(dir.str(), make_checkpoint(5, 1), 5);
  auto r = run(dir, {"export", "--checkpoint", path});
  CHECK(r.code == 2);
  CHECK(r.output == "downpour: export: --out FILE is required\n");
}

TEST_CASE("eval prints the test accuracies that evaluate() gives the saved parameters") {
  temp_dir dir("cmd-eval");
  checkpoint c = make_checkpoint(250, 11);
  std::string path = save_checkpoint(dir.str(), c, 5);
  const job_model& job = default_job();
  accuracy_report raw = evaluate(*job.net, c.params.data(), *job.data.test);
  accuracy_report ema = evaluate(*job.net, c.ema.data(), *job.data.test);
  auto r = run(dir, {"eval", "--checkpoint", path});
  CAPTURE(r.output);
  REQUIRE(r.code == 0);
  CHECK(contains(r.output,
                 "eval: checkpoint=" + path +
                                     " mode=ssp model=mlp spec=784-500-10 test_examples=10000\n"));
  REQUIRE(raw.per_class.size() == 10);
  for (std::size_t k = 0; k < 10; ++k)
    CHECK(contains(r.output, "eval: class=" + std::to_string(k) +
                                 " test_accuracy=" + fixed4(raw.per_class[k]) +
                                 " ema_test_accuracy=" + fixed4(ema.per_class[k]) + "\n"));
  CHECK(contains(r.output, "eval: global_step=250 test_accuracy=" + fixed4(raw.overall) +
                               " ema_test_accuracy=" + fixed4(ema.overall) + "\n"));
  // Random weights do not sit at chance exactly: the figures are the model's.
  CHECK(raw.overall != ema.overall);
}

TEST_CASE("eval of the reference trainer's final state repeats the accuracies of its final line") {
  temp_dir dir("cmd-eval-final");
  options opts;
  opts.last_step = 40;
  opts.quiet = true;
  std::ostringstream log;
  reference_result result = run_reference(opts, default_job(), log);
  checkpoint c{default_job().layout,
               result.summary.global_step,
               "async",
               1718000000.0,
               result.params,
               result.ema,
               {},
               {}};
  std::string path = save_checkpoint(dir.str(), c, 5);
  std::string accuracies = "test_accuracy=" + fixed4(result.summary.test_accuracy) +
                           " ema_test_accuracy=" + fixed4(result.summary.ema_test_accuracy);
  REQUIRE(contains(final_line(result.summary), " " + accuracies + " "));
  auto r = run(dir, {"eval", "--checkpoint-dir", dir.str()});
  CAPTURE(r.output);
  CHECK(r.code == 0);
  CHECK(contains(r.output, "eval: global_step=40 " + accuracies + "\n"));
}

TEST_CASE("eval skips a damaged newest checkpoint with a warning naming it") {
  temp_dir dir("cmd-eval-fallback");
  save_checkpoint(dir.str(), make_checkpoint(100, 5), 5);
  std::string newest = save_checkpoint(dir.str(), make_checkpoint(200, 6), 5);
  std::string bytes = read_bytes(newest);
  write_bytes(newest, bytes.substr(0, bytes.size() - 4));
  auto r = run(dir, {"eval", "--checkpoint-dir", dir.str()});
  CAPTURE(r.output);
  CHECK(r.code == 0);
  CHECK(r.errors == "checkpoint: " + newest + ": truncated: " + std::to_string(bytes.size() - 34) +
                        " of " + std::to_string(bytes.size() - 30) +
                        " payload bytes; using model.ckpt-100\n");
  CHECK(contains(r.output, "eval: global_step=100 test_accuracy="));
}

TEST_CASE("eval refuses what it cannot evaluate with one line") {
  temp_dir dir("cmd-eval-bad");
  SUBCASE("a checkpoint dir without checkpoints") {
    auto r = run(dir, {"eval", "--checkpoint-dir", dir / "empty"});
    CHECK(r.code == 1);
    CHECK(r.output == "downpour: checkpoint: no valid checkpoint in " + dir / "empty" + "\n");
  }
  SUBCASE("a checkpoint of another model than the options and the data make") {
    std::string path = save_checkpoint(
        dir.str(), make_checkpoint(9, 1, mlp_spec{100, {50}, 10}.layout("mlp")), 5);
    auto r = run(dir, {"eval", "--checkpoint", path});
    CHECK(r.code == 1);
    CHECK(r.output == "downpour: checkpoint " + path +
                          " holds mlp 100-50-10, this job trains mlp 784-500-10\n");
    auto softmax = run(dir, {"eval", "--checkpoint", path, "--model=softmax"});
    CHECK(softmax.output == "downpour: checkpoint " + path +
                                " holds mlp 100-50-10, this job trains softmax 784-10\n");
  }
}

}  // namespace test_commands
