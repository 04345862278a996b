// The Prometheus text exposition format (version 0.0.4) of what a node knows:
// the chief its job's status, a ps its own shard, a worker its steps, every
// node its process. Names follow Prometheus' conventions: the downpour_
// prefix, base units, _total for counters. Each series comes from one node
// only, so sum() over the scrape targets counts nothing twice: a shard's
// series from the node holding it (its ps, or a --role=local process), the
// job's from the chief. docs/operations.md lists every metric.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "reporting/meters.hpp"
#include "reporting/status.hpp"

namespace downpour {

// "text/plain; version=0.0.4; charset=utf-8"
extern const char* const exposition_content_type;

// Families of samples in the text format, written in order.
class exposition {
 public:
  void family(const std::string& name, const char* type, const std::string& help);
  void sample(const std::string& name, const std::string& labels, double value);
  void gauge(const std::string& name, const std::string& help, double value);
  void counter(const std::string& name, const std::string& help, double value);
  // name_bucket{labels,le=...}, name_sum, name_count; the family is declared by the caller.
  void histogram_samples(const std::string& name, const std::string& labels,
                         const histogram_meter::reading& r);
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

// Whether the chief's process holds the shards (--role=local) and so exports
// their series, or each ps does.
enum class shard_series { here, at_each_ps };

// The chief's metrics: progress, loss, learning rate, state, validation
// accuracy (once evaluated), workers, the newest checkpoint, the shards when
// held here, and what meters counts (may be null).
std::string chief_exposition(const status_facts& f, shard_series shards, const node_meters* meters);

// A ps node's metrics: its own shards' counters, labelled with their index.
std::string ps_exposition(const std::vector<std::pair<std::size_t, shard_facts>>& shards,
                          const node_meters* meters);

// A worker node's metrics (a worker other than the chief): its steps.
std::string worker_exposition(const node_meters* meters);

// The meters' families (workers, shards, checkpoints) and the standard
// process_* ones (metrics_meters.cpp).
void meter_metrics(exposition& e, const node_meters& meters);
void process_metrics(exposition& e);

// A sample value as the format writes it: NaN, +Inf, -Inf or a number.
std::string exposition_number(double x);

}  // namespace downpour
