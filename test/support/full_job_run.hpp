// The original job run as a user runs it, to its last line: the helpers of
// test/full_job/ and test/long/ (one 20000-step job each).
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "log_lines.hpp"
#include "subprocess.hpp"

namespace downpour::testing {

struct final_numbers {
  long long global_step = -1;
  double ema_test_accuracy = 0.0;
};

inline final_numbers parse_final(const std::string& output) {
  final_numbers f;
  if (auto got = final_of(output)) {
    f.global_step = got->global_step;
    f.ema_test_accuracy = got->ema_test_accuracy;
  }
  return f;
}

// The binary with ARGS in DIR, its exit required to be 0.
inline final_numbers run_binary(const std::vector<std::string>& extra, const temp_dir& dir) {
  using namespace std::chrono_literals;
  std::vector<std::string> args = {DOWNPOUR_BINARY, "--quiet", "--log-every=5000",
                                   "--checkpoint-dir=" + dir.str()};
  args.insert(args.end(), extra.begin(), extra.end());
  process p(args, dir / "run.log");
  int rc = p.wait(900s);
  CAPTURE(p.output());
  REQUIRE(rc == 0);
  return parse_final(p.output());
}

}  // namespace downpour::testing
