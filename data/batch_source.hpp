// Where a worker (or an evaluation) takes its batches from: the whole set
// in memory with TensorFlow's next_batch (data/batcher.hpp), or files
// streamed by a background reader (data/background_batches.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "data/batcher.hpp"
#include "data/read_position.hpp"

namespace downpour {

class batch_source {
 public:
  virtual ~batch_source() = default;
  // The next batch, valid until the next call; nullptr once there are no
  // more (a stream's passes are done). Throws data_error for bad data.
  virtual const batch* next() = 0;
  // Where the source stands after the batch next() returned last (a
  // default position for a set in memory: it has none to save).
  virtual read_position position() const = 0;
};

// A set in memory, epoch after epoch without end, exactly as batcher.
class memory_batches final : public batch_source {
 public:
  memory_batches(std::shared_ptr<const dataset> set, std::size_t batch_size, std::uint64_t seed)
      : batches_(std::move(set), batch_size, seed) {}
  const batch* next() override { return &batches_.next_batch(); }
  read_position position() const override { return {}; }

 private:
  batcher batches_;
};

// A trainer seat's set in memory, shared by the trainers a worker node
// starts one after another (a lost ps ends them, --ps-replicas 2): the
// batch a trainer drew and never pushed is drawn again by the next one, so
// the seat trains its batches in the order one trainer would have.
class seat_batches final : public batch_source {
 public:
  seat_batches(std::shared_ptr<const dataset> set, std::size_t batch_size, std::uint64_t seed)
      : batches_(std::move(set), batch_size, seed) {}
  const batch* next() override {
    if (!again_) last_ = &batches_.next_batch();
    again_ = false;
    return last_;
  }
  read_position position() const override { return {}; }
  // The batch next() returned last is returned again by the next call.
  void draw_again() { again_ = last_ != nullptr; }

 private:
  batcher batches_;
  const batch* last_ = nullptr;
  bool again_ = false;
};

}  // namespace downpour
