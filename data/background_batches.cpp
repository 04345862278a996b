#include "data/background_batches.hpp"

#include <algorithm>
#include <utility>

namespace downpour {
namespace {

// Lines read ahead between two looks at whether a batch was taken: a few
// tenths of a millisecond of parsing.
constexpr std::size_t kReadAheadLines = 256;

}  // namespace

background_batches::background_batches(std::unique_ptr<example_stream> stream, std::size_t depth)
    : stream_(std::move(stream)), position_(stream_->position()) {
  for (std::size_t i = 0; i < std::max<std::size_t>(depth, 1); ++i)
    free_.push_back(std::make_unique<entry>());
  thread_ = std::thread([this] { run(); });
}

background_batches::~background_batches() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

// A free entry to read into; while there is none, the next window is read
// ahead, and once that is complete the thread waits.
std::unique_ptr<background_batches::entry> background_batches::take_free() {
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) return nullptr;
      if (!free_.empty()) {
        auto e = std::move(free_.back());
        free_.pop_back();
        return e;
      }
    }
    if (!stream_->read_ahead(kReadAheadLines)) {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return stopping_ || !free_.empty(); });
    }
  }
}

void background_batches::run() {
  try {
    while (auto e = take_free()) {
      const bool more = stream_->next(e->examples);
      e->after = stream_->position();
      std::lock_guard<std::mutex> lock(mutex_);
      if (!more) {
        finished_ = true;
        break;
      }
      ready_.push_back(std::move(e));
      changed_.notify_all();
    }
  } catch (...) {
    std::lock_guard<std::mutex> lock(mutex_);
    error_ = std::current_exception();
    finished_ = true;
  }
  changed_.notify_all();
}

const batch* background_batches::next() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (held_) free_.push_back(std::move(held_));
  changed_.notify_all();
  changed_.wait(lock, [&] { return !ready_.empty() || finished_; });
  if (ready_.empty()) {
    if (error_) std::rethrow_exception(error_);
    return nullptr;
  }
  held_ = std::move(ready_.front());
  ready_.pop_front();
  position_ = held_->after;
  return &held_->examples;
}

}  // namespace downpour
