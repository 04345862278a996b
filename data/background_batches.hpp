// An example_stream read on a thread of its own, which the reader object
// owns: up to `depth` batches are ready before they are asked for, and the
// shuffle window after the one being handed out is read while they wait,
// so a training step does not wait for parsing.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "data/batch_source.hpp"
#include "data/example_stream.hpp"

namespace downpour {

class background_batches final : public batch_source {
 public:
  background_batches(std::unique_ptr<example_stream> stream, std::size_t depth);
  // Stops the thread (it finishes the line it is on) and joins it.
  ~background_batches() override;
  background_batches(const background_batches&) = delete;
  background_batches& operator=(const background_batches&) = delete;

  // Waits while the reader is behind. The reader's data_error is thrown
  // here once the batches read before it are taken, and again after.
  const batch* next() override;
  read_position position() const override { return position_; }

 private:
  struct entry {
    batch examples;
    read_position after;
  };
  void run();
  std::unique_ptr<entry> take_free();

  std::unique_ptr<example_stream> stream_;  // the thread's alone
  read_position position_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::unique_ptr<entry>> free_;
  std::deque<std::unique_ptr<entry>> ready_;
  std::unique_ptr<entry> held_;  // the batch the caller has
  bool finished_ = false;
  bool stopping_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace downpour
