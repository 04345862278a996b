#include "runtime/job.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unistd.h>
#include <fcntl.h>

namespace downpour {

model_shape shape_for(const options& opts, const mnist_data& data) {
  return model_shape{data.input_size(), opts.hidden_units, data.num_classes};
}

lr_schedule schedule_for(const options& opts) {
  return lr_schedule{opts.learning_rate, opts.lr_decay_rate, opts.lr_decay_steps,
                     opts.lr_staircase};
}

std::size_t replicas_for(const options& opts) {
  return opts.replicas_to_aggregate == 0 ? opts.worker_hosts.size() : opts.replicas_to_aggregate;
}

std::uint64_t worker_batch_seed(std::uint64_t seed, std::size_t worker) {
  // splitmix64 step: distinct, well-mixed streams per worker.
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * (worker + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::string step_log_line(std::int64_t global_step, std::int64_t step, float loss) {
  std::ostringstream out;
  out << "global_step:" << global_step << ",step:" << step << ",loss:" << loss;
  return out.str();
}

std::string final_line(const run_summary& s) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "final: global_step=%lld loss=%.6g test_accuracy=%.4f ema_test_accuracy=%.4f "
                "wall_s=%.3f steps_per_s=%.2f",
                static_cast<long long>(s.global_step), s.loss, s.test_accuracy,
                s.ema_test_accuracy, s.wall_s, s.steps_per_s);
  return buf;
}

std::string to_string(job_status s) {
  switch (s) {
    case job_status::completed:
      return "completed";
    case job_status::stopped:
      return "stopped";
    case job_status::diverged:
      return "diverged";
    case job_status::failed:
      return "failed";
  }
  return "failed";
}

namespace {

// A JSON string literal: quotes, backslashes and control characters escaped.
std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", c);
      out += esc;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

std::string summary_json(const run_summary& s) {
  if (s.status == job_status::diverged || s.status == job_status::failed)
    return "{\"status\": " + json_string(to_string(s.status)) +
           ", \"error\": " + json_string(s.error) + "}\n";
  char buf[320];
  std::snprintf(buf, sizeof buf, "\"global_step\": %lld, \"loss\": %.9g, ",
                static_cast<long long>(s.global_step), s.loss);
  std::string out = "{\"status\": " + json_string(to_string(s.status)) + ", " + buf;
  if (s.status == job_status::completed) {
    std::snprintf(buf, sizeof buf, "\"test_accuracy\": %.6f, \"ema_test_accuracy\": %.6f, ",
                  s.test_accuracy, s.ema_test_accuracy);
    out += buf;
  } else {
    out += "\"checkpoint\": " + json_string(s.checkpoint) + ", ";
  }
  std::snprintf(buf, sizeof buf, "\"wall_s\": %.3f, \"steps_per_s\": %.3f}\n", s.wall_s,
                s.steps_per_s);
  return out + buf;
}

void write_file_atomically(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  fs::path target(path);
  if (target.has_parent_path()) fs::create_directories(target.parent_path());
  fs::path tmp = target;
  tmp += ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) throw std::runtime_error("cannot write " + tmp.string());
  }
  int fd = ::open(tmp.c_str(), O_RDONLY);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
  fs::rename(tmp, target);
}

}  // namespace downpour
