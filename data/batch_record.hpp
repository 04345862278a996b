// Which examples each pushed gradient was computed on, for replaying a run in
// an independent implementation (test/golden/golden.py). Off unless the
// environment names a directory: the training path then costs one branch.
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>

#include "data/batcher.hpp"

namespace downpour {

// The environment variable naming the directory; every worker writes
// DIR/batches-W.txt there (appending, so a resumed run can be recorded apart
// only by choosing another directory).
inline constexpr const char* record_batches_env = "DOWNPOUR_RECORD_BATCHES";

class batch_record {
 public:
  // Opens DIR/batches-W.txt for appending, creating DIR; throws data_error.
  batch_record(const std::string& dir, std::uint32_t worker);

  // One line "W STAMP i0 ... iB-1": the worker, the global step the
  // gradient's parameters were read at, the examples' indices in the set
  // (streamed: "FILE:OFFSET", the file's index in the list and the byte
  // its line starts at).
  // Flushed at once, so a killed process leaves whole lines. False if the
  // line could not be written.
  bool write(std::int64_t stamp, const batch& b);
  const std::string& path() const { return path_; }

 private:
  std::uint32_t worker_;
  std::string path_;
  std::ofstream out_;
};

// A record for worker W when record_batches_env is set, else nullptr;
// throws data_error.
std::unique_ptr<batch_record> batch_record_from_environment(std::uint32_t worker);

// Before a node starts: when record_batches_env is set, creates the directory
// and throws data_error naming it unless it is a writable directory, so that
// no worker meets that in mid-job.
void check_batch_record_environment();

}  // namespace downpour
