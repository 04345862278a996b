// examples/evaluate_npz.py reads `downpour export`'s .npz with NumPy and
// reproduces `downpour eval`'s test accuracies, raw and EMA.
#include <doctest/doctest.h>

#include <regex>

#include "subprocess.hpp"

namespace test_python_results {

using downpour::testing::process;
using downpour::testing::temp_dir;
using namespace std::chrono_literals;

namespace {

// A of the last "test_accuracy=A" (or "ema_test_accuracy=A" with prefix "ema_").
std::string accuracy_in(const std::string& text, const std::string& prefix) {
  const std::regex accuracy("(^|[ :])" + prefix + "test_accuracy=([0-9.]+)");
  std::string found;
  for (std::sregex_iterator it(text.begin(), text.end(), accuracy), end; it != end; ++it)
    found = (*it)[2];
  return found;
}

std::string run(const std::vector<std::string>& args, const std::string& log) {
  process p(args, log);
  CAPTURE(p.output());
  REQUIRE(p.wait(300s) == 0);
  return p.output();
}

}  // namespace

TEST_CASE("the NumPy example reproduces downpour eval's accuracies from the exported .npz") {
  temp_dir dir("npz-python");
  const std::string ckpt = "--checkpoint-dir=" + dir.str();
  run({DOWNPOUR_BINARY, "--last-step=200", "--quiet", ckpt}, dir / "train.log");
  const std::string eval = run({DOWNPOUR_BINARY, "eval", ckpt}, dir / "eval.log");
  run({DOWNPOUR_BINARY, "export", ckpt, "--out=" + dir / "raw.npz"}, dir / "export.log");
  run({DOWNPOUR_BINARY, "export", ckpt, "--ema", "--out=" + dir / "ema.npz"}, dir / "export-ema.log");
  const std::string script = std::string(DOWNPOUR_SOURCE_DIR) + "/examples/evaluate_npz.py";
  // Debian's python3 with python3-numpy (scripts/install-deps).
  const std::string raw = run({"/usr/bin/python3", script, dir / "raw.npz"}, dir / "raw.log");
  const std::string ema = run({"/usr/bin/python3", script, dir / "ema.npz"}, dir / "ema.log");
  CAPTURE(eval);
  REQUIRE_FALSE(accuracy_in(eval, "").empty());
  CHECK(accuracy_in(raw, "") == accuracy_in(eval, ""));
  CHECK(accuracy_in(ema, "") == accuracy_in(eval, "ema_"));
}

}  // namespace test_python_results
