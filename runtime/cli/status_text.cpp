#include "runtime/cli/status_text.hpp"

#include <cstdio>
#include <sstream>

namespace downpour {
namespace {

std::string join(const std::vector<std::uint32_t>& xs) {
  if (xs.empty()) return "none";
  std::string out;
  for (auto x : xs) out += (out.empty() ? "" : ",") + std::to_string(x);
  return out;
}

std::string shard_line(std::size_t k, const shard_facts& s) {
  std::ostringstream out;
  out << "shard " << k << ": ";
  if (!s.reachable) return out.str() + "UNREACHABLE";
  std::uint64_t size = 0;
  for (std::size_t i = 0; i + 1 < s.ranges.size(); i += 2) {
    out << (i ? " " : "") << "[" << s.ranges[i] << "," << s.ranges[i] + s.ranges[i + 1] << ")";
    size += s.ranges[i + 1];
  }
  out << " floats=" << size << " step=" << s.step << " dropped=" << s.dropped
      << " rejected=" << s.rejected << " replayed=" << s.replayed;
  if (s.rows_held > 0)
    out << " rows_held=" << s.rows_held << " keys_pulled_per_s=" << s.keys_pulled_per_s
        << " keys_pushed_per_s=" << s.keys_pushed_per_s;
  return out.str();
}

std::string validation_text(const std::optional<validation_facts>& v) {
  if (!v) return "none";
  char buf[96];
  std::snprintf(buf, sizeof buf, "accuracy=%.4f ema_accuracy=%.4f at global_step=%lld",
                v->accuracy, v->ema_accuracy, static_cast<long long>(v->global_step));
  return buf;
}

}  // namespace

std::string format_status(const status_facts& f) {
  std::ostringstream out;
  char rate[64];
  std::snprintf(rate, sizeof rate, "%.1f", f.steps_per_s);
  double eta =
      f.steps_per_s > 0 ? static_cast<double>(f.last_step - f.global_step) / f.steps_per_s : -1.0;
  std::int64_t dropped = 0;
  for (const auto& s : f.shards) dropped += s.dropped;
  out << "mode: " << f.mode << "\n"
      << "global_step: " << f.global_step << "/" << f.last_step << "\n"
      << "steps_per_s: " << rate << "\n"
      << "eta_s: " << (eta < 0 ? std::string("unknown") : std::to_string(static_cast<long>(eta)))
      << "\n"
      << "loss: " << f.loss << "\n"
      << "learning_rate: " << f.learning_rate << "\n"
      << "validation: " << validation_text(f.validation) << "\n"
      << "workers: " << f.live_workers.size() << " live of " << f.expected_workers
      << (f.joined_workers.empty()
              ? std::string{}
              : " listed + " + std::to_string(f.joined_workers.size()) + " joined")
      << " (live: " << join(f.live_workers) << "; dead: " << join(f.dead_workers)
      << (f.joined_workers.empty() ? std::string{} : "; joined: " + join(f.joined_workers))
      << ")\n";
  for (std::size_t k = 0; k < f.shards.size(); ++k) out << shard_line(k, f.shards[k]) << "\n";
  out << "dropped_stale_gradients: " << dropped << "\n";
  for (const auto& p : f.positions)
    out << "input: worker " << p.worker << " in pass " << p.at.pass + 1 << " after "
        << p.at.examples << " examples of it (" << p.at.batches << " batches in all)\n";
  out << "config_sources:";
  const char* separator = " ";
  for (const auto& [name, where] : f.config_sources) {
    out << separator << name << " from " << where;
    separator = ", ";
  }
  out << (f.config_sources.empty() ? " defaults only\n" : "\n");
  if (f.last_checkpoint.empty())
    out << "last_checkpoint: none\n";
  else
    out << "last_checkpoint: " << f.last_checkpoint << " (age "
        << static_cast<long>(f.checkpoint_age_s) << " s)\n";
  return out.str();
}

}  // namespace downpour
