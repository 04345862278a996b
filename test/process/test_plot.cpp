// downpour plot, run as the built binary: a plot of a real short run is a
// sensible PNG; bad input gives one exact error line and no file.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "config/options.hpp"
#include "runtime/files/plot.hpp"
#include "subprocess.hpp"

namespace test_plot {

using downpour::testing::process;
using downpour::testing::read_text;
using downpour::testing::temp_dir;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

struct run_result {
  int code = -1;
  std::string out;     // stdout alone
  std::string errors;  // stderr alone
};

// Runs the binary (optionally under env assignments such as PATH=...) with
// stdout and stderr kept apart.
run_result run(const temp_dir& dir, const std::vector<std::string>& args,
               const std::vector<std::string>& env = {}) {
  auto tag = std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
  std::string err_path = dir / ("err-" + tag + ".log");
  std::vector<std::string> argv = {"/bin/sh", "-c", "exec \"$@\" 2>\"$0\"", err_path,
                                   "/usr/bin/env"};
  argv.insert(argv.end(), env.begin(), env.end());
  argv.push_back(DOWNPOUR_BINARY);
  argv.insert(argv.end(), args.begin(), args.end());
  process p(argv, dir / ("out-" + tag + ".log"));
  run_result r;
  r.code = p.wait(300s);
  std::ifstream err(err_path);
  r.errors.assign(std::istreambuf_iterator<char>(err), {});
  r.out = p.output();
  fs::remove(err_path);
  fs::remove(dir / ("out-" + tag + ".log"));
  return r;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::uint32_t big_endian(const std::string& b, std::size_t at) {
  auto u = [&](std::size_t i) {
    return static_cast<std::uint32_t>(static_cast<unsigned char>(b[i]));
  };
  return (u(at) << 24) | (u(at + 1) << 16) | (u(at + 2) << 8) | u(at + 3);
}

struct png_info {
  std::uint32_t width = 0, height = 0;
};

// Checks the signature, the IHDR chunk first and the IEND chunk last.
png_info check_png(const std::string& path) {
  const std::string b = read_text(path);
  REQUIRE(b.size() > 5 * 1024);
  REQUIRE(b.compare(0, 8, std::string("\x89PNG\r\n\x1a\n", 8)) == 0);
  CHECK(big_endian(b, 8) == 13);  // IHDR data length
  REQUIRE(b.compare(12, 4, "IHDR") == 0);
  CHECK(b.compare(b.size() - 8, 4, "IEND") == 0);
  return {big_endian(b, 16), big_endian(b, 20)};
}

// No temporary left next to the output.
bool has_temporaries(const std::string& dir) {
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().find(".tmp.") != std::string::npos) return true;
  return false;
}

const std::string expected_header =
    "wall_s,global_step,loss,learning_rate,steps_per_s[,val_accuracy,ema_val_accuracy]";

}  // namespace

TEST_CASE("plot draws a short real run as a PNG") {
  temp_dir dir("plot-run");
  const std::string ckpt = dir / "run";
  auto trained = run(
      dir, {"--last-step=300", "--quiet", "--checkpoint-dir=" + ckpt, "--save-checkpoint-secs=0"});
  REQUIRE_MESSAGE(trained.code == 0, trained.errors);
  REQUIRE(fs::exists(ckpt + "/metrics.csv"));

  const std::string png = ckpt + "/c.png";
  auto r = run(dir, {"plot", "--checkpoint-dir", ckpt, "--out", png});
  REQUIRE_MESSAGE(r.code == 0, r.errors);
  CHECK(r.errors.empty());
  CHECK(r.out.rfind("plot: wrote " + png + " (1000x", 0) == 0);
  CHECK(r.out.find(" rows of " + ckpt + "/metrics.csv, global_step ") != std::string::npos);
  CHECK(r.out.find(" to 300") != std::string::npos);
  png_info info = check_png(png);
  CHECK(info.width >= 400);
  CHECK(info.height >= 300);
  CHECK(info.width <= 4000);
  CHECK(info.height <= 4000);
  CHECK_FALSE(has_temporaries(ckpt));

  // --metrics names the file directly; drawing again replaces the old plot.
  auto again = run(dir, {"plot", "--metrics", ckpt + "/metrics.csv", "--out", png});
  REQUIRE_MESSAGE(again.code == 0, again.errors);
  check_png(png);
  CHECK_FALSE(has_temporaries(ckpt));
}

TEST_CASE("plot draws the accuracy panel when the file has accuracies") {
  temp_dir dir("plot-accuracy");
  std::ostringstream csv;
  csv << "wall_s,global_step,loss,learning_rate,steps_per_s,val_accuracy,ema_val_accuracy\n";
  for (int i = 1; i <= 100; ++i) {
    csv << i * 0.13 << "," << i * 100 << "," << 0.4 + 2.0 / i << ",0.01," << 770 + i % 7 << ",";
    if (i % 10 == 0)
      csv << 0.8 + i * 0.0006 << "," << 0.81 + i * 0.0005;
    else
      csv << ",";
    csv << "\n";
  }
  write_file(dir / "m.csv", csv.str());
  auto r = run(dir, {"plot", "--metrics", dir / "m.csv", "--out", dir / "sub/acc.png"});
  REQUIRE_MESSAGE(r.code == 0, r.errors);
  CHECK(r.out == "plot: wrote " + (dir / "sub/acc.png") + " (1000x990 PNG, 100 rows of " +
                     (dir / "m.csv") + ", global_step 100 to 10000, with validation accuracy)\n");
  png_info info = check_png(dir / "sub/acc.png");
  CHECK(info.width == 1000);
  CHECK(info.height == 990);

  // The old five columns only: two panels.
  write_file(dir / "old.csv",
             "wall_s,global_step,loss,learning_rate,steps_per_s\n"
             "0.5,100,1.2,0.00998,200\n1.0,200,0.9,0.00996,210\n1.5,300,0.8,0.00994,205\n");
  auto old = run(dir, {"plot", "--metrics", dir / "old.csv", "--out", dir / "old.png"});
  REQUIRE_MESSAGE(old.code == 0, old.errors);
  CHECK(old.out == "plot: wrote " + (dir / "old.png") + " (1000x660 PNG, 3 rows of " +
                       (dir / "old.csv") + ", global_step 100 to 300)\n");
}

TEST_CASE("plot refuses bad input with one exact line and writes nothing") {
  temp_dir dir("plot-bad");
  const std::string out = dir / "x.png";
  auto expect_error = [&](const std::vector<std::string>& args, int code, const std::string& line) {
    auto r = run(dir, args);
    CHECK(r.code == code);
    CHECK(r.errors == line + "\n");
    CHECK(r.out.empty());
    CHECK_FALSE(fs::exists(out));
    CHECK_FALSE(has_temporaries(dir.str()));
  };
  const std::string header = "wall_s,global_step,loss,learning_rate,steps_per_s\n";

  SUBCASE("no --out") {
    write_file(dir / "m.csv", header + "1,100,0.5,0.01,10\n");
    expect_error({"plot", "--metrics", dir / "m.csv"}, 2,
                 "downpour: plot: --out FILE is required (the PNG to write)");
  }
  SUBCASE("missing file") {
    expect_error(
        {"plot", "--metrics", dir / "none.csv", "--out", out}, 1,
        "downpour: plot: " + (dir / "none.csv") + ": cannot read (No such file or directory)");
  }
  SUBCASE("missing default file in --checkpoint-dir") {
    expect_error({"plot", "--checkpoint-dir", dir / "nothing", "--out", out}, 1,
                 "downpour: plot: " + (dir / "nothing") +
                     "/metrics.csv: cannot read (No such file or directory)");
  }
  SUBCASE("metrics path is a directory") {
    expect_error({"plot", "--metrics", dir.str(), "--out", out}, 1,
                 "downpour: plot: " + dir.str() + ": is a directory (expected a metrics.csv file)");
  }
  SUBCASE("empty file") {
    write_file(dir / "m.csv", "");
    expect_error({"plot", "--metrics", dir / "m.csv", "--out", out}, 1,
                 "downpour: plot: " + (dir / "m.csv") + ": empty file (expected the header " +
                     expected_header + ")");
  }
  SUBCASE("header only") {
    write_file(dir / "m.csv", header);
    expect_error({"plot", "--metrics", dir / "m.csv", "--out", out}, 1,
                 "downpour: plot: " + (dir / "m.csv") + ": no data rows after the header");
  }
  SUBCASE("bad header") {
    write_file(dir / "m.csv", "wall_s,step,loss,learning_rate,steps_per_s\n1,100,0.5,0.01,10\n");
    expect_error({"plot", "--metrics", dir / "m.csv", "--out", out}, 1,
                 "downpour: plot: " + (dir / "m.csv") +
                     ":1: header 'wall_s,step,loss,learning_rate,steps_per_s' lacks column "
                     "'global_step' (expected " +
                     expected_header + ")");
  }
  SUBCASE("a column twice") {
    write_file(dir / "m.csv", "wall_s,global_step,loss,loss,learning_rate,steps_per_s\n");
    expect_error({"plot", "--metrics", dir / "m.csv", "--out", out}, 1,
                 "downpour: plot: " + (dir / "m.csv") +
                     ":1: header names column 'loss' twice (expected " + expected_header + ")");
  }
  SUBCASE("a number that does not parse") {
    write_file(dir / "m.csv", header + "1,100,0.5,0.01,10\n2,200,abc,0.01,10\n");
    expect_error({"plot", "--metrics", dir / "m.csv", "--out", out}, 1,
                 "downpour: plot: " + (dir / "m.csv") + ":3: loss 'abc' is not a number");
  }
  SUBCASE("an empty required field") {
    write_file(dir / "m.csv", header + "1,,0.5,0.01,10\n");
    expect_error(
        {"plot", "--metrics", dir / "m.csv", "--out", out}, 1,
        "downpour: plot: " + (dir / "m.csv") + ":2: global_step is empty (expected a number)");
  }
  SUBCASE("a short row") {
    write_file(dir / "m.csv", header + "1,100,0.5,0.01\n3,300,0.4,0.01,10\n");
    expect_error({"plot", "--metrics", dir / "m.csv", "--out", out}, 1,
                 "downpour: plot: " + (dir / "m.csv") + ":2: 4 fields but the header has 5");
  }
  SUBCASE("a bad accuracy") {
    write_file(dir / "m.csv",
               "wall_s,global_step,loss,learning_rate,steps_per_s,val_accuracy,ema_val_accuracy\n"
               "1,100,0.5,0.01,10,,\n2,200,0.4,0.01,10,0.8,high\n");
    expect_error({"plot", "--metrics", dir / "m.csv", "--out", out}, 1,
                 "downpour: plot: " + (dir / "m.csv") +
                     ":3: ema_val_accuracy 'high' is not a number (expected a number or nothing)");
  }
  SUBCASE("--out is a directory") {
    write_file(dir / "m.csv", header + "1,100,0.5,0.01,10\n");
    fs::create_directories(dir / "d.png");
    expect_error({"plot", "--metrics", dir / "m.csv", "--out", dir / "d.png"}, 1,
                 "downpour: plot: " + (dir / "d.png") + ": is a directory (expected a .png file)");
  }
}

TEST_CASE("plot skips a half-written last line with a warning") {
  temp_dir dir("plot-partial");
  write_file(dir / "m.csv",
             "wall_s,global_step,loss,learning_rate,steps_per_s\n1,100,0.5,0.01,10\n"
             "2,200,0.45,0.01,10\n3,300,0.4,0.0");
  auto r = run(dir, {"plot", "--metrics", dir / "m.csv", "--out", dir / "p.png"});
  REQUIRE_MESSAGE(r.code == 0, r.errors);
  CHECK(r.errors == "downpour: plot: " + (dir / "m.csv") +
                        ":4: ignoring the unfinished last line (4 fields but the header has 5; "
                        "is the run still writing it?)\n");
  CHECK(r.out.find("2 rows of") != std::string::npos);
  CHECK(fs::file_size(dir / "p.png") > 0);
}

TEST_CASE("plot without gnuplot says so and leaves the old file alone") {
  temp_dir dir("plot-nognuplot");
  write_file(dir / "m.csv",
             "wall_s,global_step,loss,learning_rate,steps_per_s\n1,100,0.5,0.01,10\n");
  write_file(dir / "old.png", "old");
  fs::create_directories(dir / "empty-bin");
  auto r = run(dir, {"plot", "--metrics", dir / "m.csv", "--out", dir / "old.png"},
               {"PATH=" + (dir / "empty-bin")});
  CHECK(r.code == 1);
  CHECK(r.errors ==
        "downpour: plot: gnuplot not found on PATH (install it: apt-get install gnuplot-nox, or "
        "scripts/install-deps)\n");
  CHECK(read_text(dir / "old.png") == "old");
  CHECK_FALSE(has_temporaries(dir.str()));
}

TEST_CASE("plot reports a failing gnuplot with its message") {
  temp_dir dir("plot-badgnuplot");
  write_file(dir / "m.csv",
             "wall_s,global_step,loss,learning_rate,steps_per_s\n1,100,0.5,0.01,10\n");
  fs::create_directories(dir / "bin");
  write_file(dir / "bin/gnuplot", "#!/bin/sh\necho 'line 1: something broke' >&2\nexit 3\n");
  fs::permissions(dir / "bin/gnuplot", fs::perms::owner_all);
  auto r = run(dir, {"plot", "--metrics", dir / "m.csv", "--out", dir / "p.png"},
               {"PATH=" + (dir / "bin")});
  CHECK(r.code == 1);
  CHECK(r.errors == "downpour: plot: gnuplot failed (exit code 3): line 1: something broke\n");
  CHECK_FALSE(fs::exists(dir / "p.png"));
  CHECK_FALSE(has_temporaries(dir.str()));

  // A gnuplot that exits 0 without drawing a PNG is no success either.
  write_file(dir / "bin/gnuplot", "#!/bin/sh\necho not a png\n");
  auto fake = run(dir, {"plot", "--metrics", dir / "m.csv", "--out", dir / "p.png"},
                  {"PATH=" + (dir / "bin")});
  CHECK(fake.code == 1);
  CHECK(fake.errors ==
        "downpour: plot: gnuplot did not write a PNG image (is its png terminal missing?)\n");
  CHECK_FALSE(fs::exists(dir / "p.png"));
  CHECK_FALSE(has_temporaries(dir.str()));
}

TEST_CASE("plot script keeps paths out of gnuplot's language") {
  downpour::metrics_table t;
  t.rows.push_back({1.0, 100, 0.5, 0.01, 10, std::nullopt, std::nullopt});
  std::string script = downpour::plot_script(t, "a'b\nsystem(\"rm -rf x\")/metrics.csv");
  CHECK(script.find("system(") == std::string::npos);
  CHECK(script.find("a?b?system??rm") != std::string::npos);
  CHECK(script.find("set output") == std::string::npos);  // the PNG goes to stdout
}

}  // namespace test_plot
