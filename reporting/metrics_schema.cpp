#include "reporting/metrics_schema.hpp"

#include <cstdio>

namespace downpour {

std::string metrics_header() {
  std::string header;
  for (const char* name : metrics_columns) header += (header.empty() ? "" : ",") + std::string(name);
  return header;
}

std::string metrics_line(const metrics_row& r) {
  char buf[192];
  auto accuracy = [](const std::optional<double>& a) {
    char text[32] = "";
    if (a) std::snprintf(text, sizeof text, "%.4f", *a);
    return std::string(text);
  };
  std::snprintf(buf, sizeof buf, "%.3f,%.0f,%.6g,%.6g,%.2f,", r.wall_s, r.global_step, r.loss,
                r.learning_rate, r.steps_per_s);
  return buf + accuracy(r.val_accuracy) + "," + accuracy(r.ema_val_accuracy);
}

}  // namespace downpour
