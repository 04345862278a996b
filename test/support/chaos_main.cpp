// downpour_chaos: the chaos run of test/support/chaos.hpp from the command line
// (scripts/chaos runs it). Exit 0 when it passed, 1 when it failed, 2 for a
// bad command line.
//   downpour_chaos [--last-step N] [--kills K] [--seed S] [--min-accuracy A]
//                  [--ps-replicas R] [--logdir DIR] [--binary PATH]
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>

#include "chaos.hpp"

using downpour::testing::chaos_options;
using downpour::testing::chaos_run;

namespace {

const char* const usage =
    "usage: downpour_chaos [--last-step N] [--kills K] [--seed S] [--min-accuracy A] "
    "[--ps-replicas R] [--logdir DIR] [--binary PATH]";

// The whole of text as a number, or nullopt.
std::optional<double> number(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0') return std::nullopt;
  return v;
}

// text as a whole number from least up, or nullopt.
std::optional<long long> whole(const std::string& text, long long least) {
  const auto v = number(text);
  if (!v || *v < static_cast<double>(least) || *v > 4e9 || *v != std::floor(*v)) return std::nullopt;
  return static_cast<long long>(*v);
}

std::string bad(const std::string& name, const std::string& value, const std::string& expected) {
  return "chaos: " + name + "=" + value + " is not valid (expected " + expected + ")";
}

// Applies --name value to o; an error line for a bad one.
std::optional<std::string> apply(chaos_options& o, const std::string& name,
                                 const std::string& value) {
  if (name == "--logdir") {
    o.logdir = value;
  } else if (name == "--binary") {
    o.binary = value;
  } else if (name == "--min-accuracy") {
    const auto v = number(value);
    if (!v || *v < 0 || *v > 1) return bad(name, value, "a number from 0 to 1");
    o.min_accuracy = *v;
  } else if (name == "--last-step") {
    const auto v = whole(value, 1);
    if (!v) return bad(name, value, "a positive integer");
    o.last_step = *v;
  } else if (name == "--ps-replicas") {
    const auto v = whole(value, 1);
    if (!v || *v > 2) return bad(name, value, "1 or 2");
    o.ps_replicas = static_cast<std::size_t>(*v);
  } else if (name == "--kills" || name == "--seed") {
    const auto v = whole(value, 0);
    if (!v) return bad(name, value, "a non-negative integer");
    if (name == "--kills") o.kills = static_cast<int>(*v);
    else o.seed = static_cast<unsigned>(*v);
  } else {
    return "chaos: unknown argument '" + name + "' (" + usage + ")";
  }
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  chaos_options o;
  o.seed = static_cast<unsigned>(::getpid());
  for (int i = 1; i < argc; i += 2) {
    if (i + 1 >= argc) {
      std::cerr << "chaos: " << argv[i] << " needs a value (" << usage << ")\n";
      return 2;
    }
    if (auto error = apply(o, argv[i], argv[i + 1])) {
      std::cerr << *error << "\n";
      return 2;
    }
  }
  if (!std::filesystem::exists(o.binary)) {
    std::cerr << "chaos: " << o.binary << " not built\n";
    return 2;
  }
  if (o.logdir.empty()) {
    std::string pattern = "/tmp/downpour-chaos.XXXXXX";
    if (!::mkdtemp(pattern.data())) {
      std::cerr << "chaos: cannot make a log directory under /tmp\n";
      return 2;
    }
    o.logdir = pattern;
  }
  std::filesystem::create_directories(o.logdir);
  const auto outcome = chaos_run(o, std::cout).run();
  for (const auto& f : outcome.failures) std::cerr << "chaos: " << f << "\n";
  if (!outcome.failures.empty()) {
    std::cerr << "chaos: FAILED (logs in " << o.logdir << ")\n";
    return 1;
  }
  std::cout << "chaos: passed\n";
  return 0;
}
