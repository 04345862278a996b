#include "reporting/meters.hpp"

#include <algorithm>

namespace downpour {

void atomic_real::add(double x) {
  double old = value_.load(std::memory_order_relaxed);
  while (!value_.compare_exchange_weak(old, old + x, std::memory_order_relaxed)) {
  }
}

histogram_meter::histogram_meter(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(bounds_.size() + 1) {}

void histogram_meter::observe(double x) {
  const auto at = std::lower_bound(bounds_.begin(), bounds_.end(), x) - bounds_.begin();
  counts_[static_cast<std::size_t>(at)].fetch_add(1, std::memory_order_relaxed);
  sum_.add(x);
}

histogram_meter::reading histogram_meter::read() const {
  reading r;
  r.bounds = bounds_;
  std::uint64_t total = 0;
  for (const auto& c : counts_) {
    total += c.load(std::memory_order_relaxed);
    r.cumulative.push_back(total);
  }
  r.count = total;
  r.sum = sum_.get();
  return r;
}

worker_meter& node_meters::worker(std::size_t index) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& m = workers_[index];
  if (!m) m = std::make_unique<worker_meter>();
  return *m;
}

shard_meter& node_meters::shard(std::size_t index) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& m = shards_[index];
  if (!m) m = std::make_unique<shard_meter>();
  return *m;
}

bool node_meters::holds_shards() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return !shards_.empty();
}

std::vector<std::pair<std::size_t, const worker_meter*>> node_meters::workers() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::pair<std::size_t, const worker_meter*>> all;
  for (const auto& [k, m] : workers_) all.emplace_back(k, m.get());
  return all;
}

std::vector<std::pair<std::size_t, const shard_meter*>> node_meters::shards() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::pair<std::size_t, const shard_meter*>> all;
  for (const auto& [k, m] : shards_) all.emplace_back(k, m.get());
  return all;
}

}  // namespace downpour
