// The Prometheus text exposition format (version 0.0.4) of what a node knows:
// the chief its job's status, a ps its own shard. Names follow Prometheus'
// conventions: the downpour_ prefix, base units, _total for counters.
// docs/operations.md lists every metric.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "reporting/status.hpp"

namespace downpour {

// "text/plain; version=0.0.4; charset=utf-8"
extern const char* const exposition_content_type;

// The chief's metrics: progress, loss, learning rate, validation accuracy (once
// evaluated), workers, every shard's counters and the newest checkpoint.
std::string chief_exposition(const status_facts& f);

// A ps node's metrics: its own shards' counters, labelled with their index.
std::string ps_exposition(const std::vector<std::pair<std::size_t, shard_facts>>& shards);

// A sample value as the format writes it: NaN, +Inf, -Inf or a number.
std::string exposition_number(double x);

}  // namespace downpour
