// A job's streamed input: the training and test files as every node of the
// job plans them, each worker's share (data/shard_plan.hpp), and the
// sources a worker trains on and the evaluation reads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/batch_source.hpp"
#include "data/shard_plan.hpp"
#include "data/text_format.hpp"

namespace downpour {

// What the command line asks for.
struct input_request {
  text_spec text;
  std::string train_files;  // --train-file: paths and globs, comma-separated; empty: none
  std::string test_files;   // --test-file
  std::size_t workers = 1;
  std::size_t validation_size = 0;  // the first examples of the training files, held out
  std::size_t shuffle_buffer = 1;
  std::uint64_t passes = 0;  // 0: no end
  // Data up to this size in all is counted at the start (shard_request).
  std::uint64_t counted_up_to = small_data_bytes;
};

struct streamed_input {
  text_spec text;
  std::size_t csv_fields = 0;  // csv: fields per line
  std::size_t classes = 2;     // csv: 1 + the largest label of the test files
  std::vector<shard_plan> train;  // one per worker; empty without training files
  std::vector<data_file> test;
  std::size_t shuffle_buffer = 1;
  std::uint64_t passes = 0;
  batch validation;  // the examples held out, in memory
};

// Lists and plans the files; reads the held-out examples (and, for CSV, the
// test files' labels). Throws data_error, also for a worker that would get
// no examples.
streamed_input open_input(const input_request& request);

// Worker k's batches on a background thread, from `start` (a default
// position: the beginning). Throws data_error.
std::unique_ptr<batch_source> training_batches(const streamed_input& input, std::size_t worker,
                                               std::size_t batch_size, std::uint64_t seed,
                                               const read_position& start);

// The test files once, in file order, in batches of `chunk`; `who` reads
// them, as messages name it. Throws data_error.
std::unique_ptr<batch_source> in_order_batches(const streamed_input& input, std::size_t chunk,
                                               const std::string& who);

inline std::unique_ptr<batch_source> test_batches(const streamed_input& input, std::size_t chunk) {
  return in_order_batches(input, chunk, "the evaluation");
}

// A batch of examples as a data set (the validation split).
std::shared_ptr<const dataset> batch_dataset(batch examples);

}  // namespace downpour
