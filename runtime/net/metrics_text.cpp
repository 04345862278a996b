#include "runtime/net/metrics_text.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <regex>

#include "config/version.hpp"

namespace downpour {

const char* const exposition_content_type = "text/plain; version=0.0.4; charset=utf-8";

void exposition::family(const std::string& name, const char* type, const std::string& help) {
  text_ += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

void exposition::sample(const std::string& name, const std::string& labels, double value) {
  text_ +=
      name + (labels.empty() ? "" : "{" + labels + "}") + " " + exposition_number(value) + "\n";
}

void exposition::gauge(const std::string& name, const std::string& help, double value) {
  family(name, "gauge", help);
  sample(name, "", value);
}

void exposition::counter(const std::string& name, const std::string& help, double value) {
  family(name, "counter", help);
  sample(name, "", value);
}

namespace {

// A bucket's bound as people write it: the shortest text that reads back as
// the same double ("0.025", not "0.025000000000000001").
std::string bound_text(double x) {
  char buf[32];
  for (int digits = 6; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, x);
    if (std::strtod(buf, nullptr) == x) break;
  }
  return buf;
}

}  // namespace

void exposition::histogram_samples(const std::string& name, const std::string& labels,
                                   const histogram_meter::reading& r) {
  const std::string sep = labels.empty() ? "" : labels + ",";
  for (std::size_t i = 0; i < r.bounds.size(); ++i)
    sample(name + "_bucket", sep + "le=\"" + bound_text(r.bounds[i]) + "\"",
           static_cast<double>(r.cumulative[i]));
  sample(name + "_bucket", sep + "le=\"+Inf\"", static_cast<double>(r.count));
  sample(name + "_sum", labels, r.sum);
  sample(name + "_count", labels, static_cast<double>(r.count));
}

namespace {

std::string shard_label(std::size_t k) {
  return "shard=\"" + std::to_string(k) + "\"";
}

using shard_list = std::vector<std::pair<std::size_t, shard_facts>>;

// One family per counter, a sample per reachable shard.
void shard_family(exposition& e, const shard_list& shards, const std::string& name,
                  const char* type, const std::string& help, double (*value)(const shard_facts&)) {
  e.family(name, type, help);
  for (const auto& [k, s] : shards)
    if (s.reachable) e.sample(name, shard_label(k), value(s));
}

void shard_metrics(exposition& e, const shard_list& shards) {
  e.family("downpour_shard_up", "gauge", "1 if the shard answered, 0 if not");
  for (const auto& [k, s] : shards) e.sample("downpour_shard_up", shard_label(k), s.reachable);
  // A shard no chief has initialised yet has no step (and no sample).
  e.family("downpour_shard_step", "gauge", "updates the shard has applied (its global step)");
  for (const auto& [k, s] : shards)
    if (s.reachable && s.step >= 0)
      e.sample("downpour_shard_step", shard_label(k), static_cast<double>(s.step));
  shard_family(e, shards, "downpour_shard_parameters", "gauge", "parameters the shard holds",
               [](const shard_facts& s) {
                 double n = 0;
                 for (std::size_t i = 1; i < s.ranges.size(); i += 2) n += s.ranges[i];
                 return n;
               });
  shard_family(e, shards, "downpour_shard_pushes_dropped_total", "counter",
               "sync: stale gradients dropped",
               [](const shard_facts& s) { return static_cast<double>(s.dropped); });
  shard_family(e, shards, "downpour_shard_pushes_rejected_total", "counter",
               "pushes refused (wrong shape, future step, before init)",
               [](const shard_facts& s) { return static_cast<double>(s.rejected); });
  shard_family(e, shards, "downpour_shard_pulls_replayed_total", "counter",
               "pulls answered without parameters (the worker held them already)",
               [](const shard_facts& s) { return static_cast<double>(s.replayed); });
  shard_family(e, shards, "downpour_shard_sparse_rows", "gauge",
               "rows of the sparse variable the shard holds (created by a push)",
               [](const shard_facts& s) { return static_cast<double>(s.rows_held); });
}

void build_info(exposition& e, const char* role) {
  e.family("downpour_build_info", "gauge", "always 1: the Downpour version and this node's role");
  e.sample("downpour_build_info",
           std::string("version=\"") + build_version() + "\",role=\"" + role + "\"", 1);
}

// N of ".../model.ckpt-N", -1 if the name has no step.
double checkpoint_step(const std::string& path) {
  static const std::regex step("model\\.ckpt-(\\d+)$");
  std::smatch m;
  return std::regex_search(path, m, step) ? std::stod(m[1]) : -1.0;
}

void progress_metrics(exposition& e, const status_facts& f) {
  const auto step = static_cast<double>(f.global_step);
  e.counter("downpour_global_steps_total",
            "global steps done (rate() of it is the job's speed; it restarts from the restored "
            "step when the chief does)",
            step);
  e.gauge("downpour_global_step", "the global step the job stands at", step);
  e.gauge("downpour_last_step", "the global step the job ends at",
          static_cast<double>(f.last_step));
  e.gauge("downpour_train_loss", "the newest training loss a worker reported (NaN: not finite)",
          f.loss);
  e.gauge("downpour_learning_rate", "the learning rate at the global step", f.learning_rate);
  e.counter("downpour_bad_batches_skipped_total",
            "batches with a non-finite loss or gradient skipped (--max-bad-batches)",
            static_cast<double>(f.bad_batches_skipped));
  e.counter("downpour_updates_applied_total",
            "updates applied to the parameters from step 0, the ones later rolled back included",
            static_cast<double>(f.updates_applied));
  e.counter("downpour_updates_lost_total",
            "updates rolled back by a checkpoint restore after a lost ps",
            static_cast<double>(f.updates_lost));
  e.counter("downpour_failover_pause_seconds_total",
            "seconds training paused while recovering from a lost ps", f.failover_pause_s);
  e.family("downpour_job_state", "gauge", "1 for the state the job is in, 0 for the others");
  for (const char* state : job_states)
    e.sample("downpour_job_state", std::string("state=\"") + state + "\"", f.state == state);
  if (f.validation) {
    e.family("downpour_validation_accuracy", "gauge",
             "accuracy on the validation split at the newest evaluation (ratio 0-1)");
    e.sample("downpour_validation_accuracy", "weights=\"raw\"", f.validation->accuracy);
    e.sample("downpour_validation_accuracy", "weights=\"ema\"", f.validation->ema_accuracy);
    e.gauge("downpour_validation_global_step", "the global step of the newest evaluation",
            static_cast<double>(f.validation->global_step));
  }
}

}  // namespace

std::string exposition_number(double x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "+Inf" : "-Inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

std::string chief_exposition(const status_facts& f, shard_series shards_at,
                             const node_meters* meters) {
  exposition e;
  build_info(e, "chief");
  progress_metrics(e, f);
  e.gauge("downpour_workers_live", "workers taking part in training",
          static_cast<double>(f.live_workers.size()));
  e.gauge("downpour_workers_expected", "workers in --worker-hosts",
          static_cast<double>(f.expected_workers));
  e.gauge("downpour_workers_joined", "workers that joined with --join, beyond --worker-hosts",
          static_cast<double>(f.joined_workers.size()));
  std::size_t reachable = 0;
  for (const auto& s : f.shards) reachable += s.reachable;
  e.gauge("downpour_shards_reachable", "shards that answered the chief",
          static_cast<double>(reachable));
  if (shards_at == shard_series::here) {
    shard_list shards;
    for (std::size_t k = 0; k < f.shards.size(); ++k) shards.emplace_back(k, f.shards[k]);
    shard_metrics(e, shards);
  }
  if (!f.last_checkpoint.empty()) {
    e.gauge("downpour_last_checkpoint_step", "the global step of the newest checkpoint",
            checkpoint_step(f.last_checkpoint));
    e.gauge("downpour_last_checkpoint_age_seconds", "seconds since the newest checkpoint",
            f.checkpoint_age_s);
  }
  if (meters) meter_metrics(e, *meters);
  process_metrics(e);
  return e.text();
}

std::string ps_exposition(const shard_list& shards, const node_meters* meters) {
  exposition e;
  build_info(e, "ps");
  shard_metrics(e, shards);
  if (meters) meter_metrics(e, *meters);
  process_metrics(e);
  return e.text();
}

std::string worker_exposition(const node_meters* meters) {
  exposition e;
  build_info(e, "worker");
  if (meters) meter_metrics(e, *meters);
  process_metrics(e);
  return e.text();
}

}  // namespace downpour
