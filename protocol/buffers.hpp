// Float buffers of one size, shared and reused: a fresh buffer of the
// model's size costs page faults before it is overwritten anyway, so a
// worker writes each gradient (or its replayed parameters) into a buffer it
// made before and that no one else holds any longer (a shard keeps the
// parts it wrote its parameters into for as long as they are current).
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "protocol/floats.hpp"

namespace downpour {

class shared_buffer_pool {
 public:
  // Tracks at most `keep` buffers; one made beyond them is freed by its last
  // holder.
  explicit shared_buffer_pool(std::size_t keep = 4) : keep_(keep) {}

  // A buffer of n floats that no one else holds, contents unspecified (the
  // caller overwrites all of them). Allocates only when every tracked
  // buffer is still held elsewhere.
  std::shared_ptr<floats> take(std::size_t n) {
    for (auto& buf : held_) {
      if (buf.use_count() != 1 || buf->size() != n) continue;
      // The last reader let go with a release decrement: its reads happen
      // before the writes the caller is about to make.
      std::atomic_thread_fence(std::memory_order_acquire);
      return buf;
    }
    auto buf = std::make_shared<floats>(n);
    if (held_.size() < keep_) return held_.emplace_back(std::move(buf));
    for (auto& idle : held_)  // an idle buffer here is of another size
      if (idle.use_count() == 1) return idle = std::move(buf);
    return buf;
  }

  // Buffers currently tracked (for tests).
  std::size_t tracked() const { return held_.size(); }

 private:
  std::size_t keep_;
  std::vector<std::shared_ptr<floats>> held_;
};

}  // namespace downpour
