// Float buffers of one size, kept for reuse: a fresh buffer of the model's
// size costs page faults before it is overwritten anyway, so the hot paths
// recycle the buffers that messages bring in instead of allocating new ones.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "runtime/floats.hpp"

namespace downpour {

class buffer_pool {
 public:
  // Keeps at most `keep` idle buffers; more are freed.
  explicit buffer_pool(std::size_t keep = 2) : keep_(keep) {}

  // A buffer of n floats whose contents are unspecified (the caller
  // overwrites all of them). Allocates only when no idle buffer fits.
  floats take(std::size_t n) {
    while (!idle_.empty()) {
      auto buf = std::move(idle_.back());
      idle_.pop_back();
      if (buf.size() == n) return buf;
    }
    return floats(n);
  }

  // Returns a buffer for reuse; empty ones are dropped.
  void give(floats&& buf) {
    if (!buf.empty() && idle_.size() < keep_) idle_.push_back(std::move(buf));
  }

 private:
  std::size_t keep_;
  std::vector<floats> idle_;
};

}  // namespace downpour
