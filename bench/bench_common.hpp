// Shared by the bench programs: timing, medians with min/max, a printed
// table, a JSON file and the same table in markdown next to it. Header only (every bench/*.cpp is its own program).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

namespace downpour::bench {

inline double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Seconds taken by fn().
inline double time_s(const std::function<void()>& fn) {
  double t0 = now_s();
  fn();
  return now_s() - t0;
}

struct stats {
  double median = 0, min = 0, max = 0;
};

inline stats summarize(std::vector<double> xs) {
  stats s;
  if (xs.empty()) return s;
  std::sort(xs.begin(), xs.end());
  std::size_t n = xs.size();
  s.median = n % 2 ? xs[n / 2] : 0.5 * (xs[n / 2 - 1] + xs[n / 2]);
  s.min = xs.front();
  s.max = xs.back();
  return s;
}

// Per-repeat ratios a[i] / b[i]: both were measured in the same repeat, side
// by side, so the pairing cancels part of the machine's drift.
inline std::vector<double> ratios(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> r;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) r.push_back(b[i] > 0 ? a[i] / b[i] : 0);
  return r;
}

// Rows of measurements and of ratios with a target, printed and saved as JSON.
class report {
 public:
  explicit report(std::string program) : program_(std::move(program)) {}

  void note(const std::string& key, const std::string& value) { notes_.push_back({key, value}); }

  void value(const std::string& name, const std::vector<double>& xs, const std::string& unit) {
    values_.push_back({name, summarize(xs), unit, "", 0, false});
  }

  // target_is_max: the median should be <= target; otherwise it should be >= target.
  void ratio(const std::string& name, const std::vector<double>& xs, double target,
             bool target_is_max) {
    limit(name, xs, "ratio", target, target_is_max);
  }

  // A measurement with a target in its own unit (e.g. peak RSS in MB <= 200).
  void limit(const std::string& name, const std::vector<double>& xs, const std::string& unit,
             double target, bool target_is_max) {
    values_.push_back({name, summarize(xs), unit, target_is_max ? "<=" : ">=", target, true});
  }

  void print(std::ostream& out) const {
    out << "== " << program_ << " ==\n";
    for (auto& n : notes_) out << "  " << n.first << ": " << n.second << "\n";
    char line[256];
    std::snprintf(line, sizeof line, "  %-44s %11s %11s %11s  %s\n", "measurement", "median",
                  "min", "max", "unit / target");
    out << line;
    for (auto& r : values_) {
      std::snprintf(line, sizeof line, "  %-44s %11.4g %11.4g %11.4g  %s\n", r.name.c_str(),
                    r.s.median, r.s.min, r.s.max, tail(r).c_str());
      out << line;
    }
    out.flush();
  }

  void write_json(const std::string& path) const {
    namespace fs = std::filesystem;
    if (fs::path(path).has_parent_path()) fs::create_directories(fs::path(path).parent_path());
    std::ofstream out(path);
    out << "{\n  \"program\": \"" << program_ << "\",\n  \"notes\": {";
    for (std::size_t i = 0; i < notes_.size(); ++i)
      out << (i ? ", " : "") << "\"" << notes_[i].first << "\": \"" << notes_[i].second << "\"";
    out << "},\n  \"results\": [\n";
    for (std::size_t i = 0; i < values_.size(); ++i) {
      auto& r = values_[i];
      out << "    {\"name\": \"" << r.name << "\", \"unit\": \"" << r.unit
          << "\", \"median\": " << r.s.median << ", \"min\": " << r.s.min
          << ", \"max\": " << r.s.max;
      if (r.has_target)
        out << ", \"target\": \"" << r.op << " " << r.target
            << "\", \"met\": " << (met(r) ? "true" : "false");
      out << "}" << (i + 1 < values_.size() ? "," : "") << "\n";
    }
    out << "  ]\n}\n";
    std::cout << "  json: " << path << std::endl;
    write_markdown(std::filesystem::path(path).replace_extension(".md").string());
  }

  // The same table in markdown (next to the JSON; scripts/bench-table gathers them).
  void write_markdown(const std::string& path) const {
    std::ofstream out(path);
    out << "**" << program_ << "**";
    for (auto& n : notes_) out << (&n == &notes_.front() ? ": " : "; ") << n.first << " " << n.second;
    out << "\n\n| measurement | median | min | max | unit / target |\n|---|---:|---:|---:|---|\n";
    char line[512];
    for (auto& r : values_) {
      std::snprintf(line, sizeof line, "| %s | %.4g | %.4g | %.4g | %s |\n", r.name.c_str(),
                    r.s.median, r.s.min, r.s.max, tail(r).c_str());
      out << line;
    }
    out << "\n";
  }

 private:
  struct row {
    std::string name;
    stats s;
    std::string unit, op;
    double target;
    bool has_target;
  };
  // "unit", or for a row with a target "[unit ](target <= x) OK|MISSED".
  static std::string tail(const row& r) {
    if (!r.has_target) return r.unit;
    return (r.unit == "ratio" ? std::string() : r.unit + " ") + "(target " + r.op + " " +
           fmt(r.target) + ") " + (met(r) ? "OK" : "MISSED");
  }
  static bool met(const row& r) {
    return r.op == "<=" ? r.s.median <= r.target : r.s.median >= r.target;
  }
  static std::string fmt(double x) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", x);
    return b;
  }
  std::string program_;
  std::vector<std::pair<std::string, std::string>> notes_;
  std::vector<row> values_;
};

// --json FILE, --repeats N, --steps N (each optional) and the rest untouched.
struct cli {
  std::string json;
  int repeats = 0;
  long steps = 0;
  std::vector<std::string> rest;
  cli(int argc, char** argv, const std::string& default_json) : json(default_json) {
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      auto take = [&](const char* flag) -> const char* {
        std::string f = flag;
        if (a == f && i + 1 < argc) return argv[++i];
        if (a.rfind(f + "=", 0) == 0) return argv[i] + f.size() + 1;
        return nullptr;
      };
      if (auto v = take("--json")) json = v;
      else if (auto v = take("--repeats")) repeats = std::atoi(v);
      else if (auto v = take("--steps")) steps = std::atol(v);
      else rest.push_back(a);
    }
  }
};

// The 1-minute load average from /proc/loadavg: how busy the machine was.
inline std::string loadavg() {
  std::ifstream in("/proc/loadavg");
  std::string one;
  in >> one;
  return one.empty() ? std::string("?") : one;
}

inline std::string fixed(double x, int digits) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", digits, x);
  return b;
}

inline std::string cores_note() {
  return std::to_string(std::thread::hardware_concurrency()) + " hardware threads";
}

}  // namespace downpour::bench
