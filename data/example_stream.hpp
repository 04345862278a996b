// One worker's batches streamed from its share of the files (a shard plan),
// pass after pass, with bounded memory: two shuffle windows of
// --shuffle-buffer examples, one handed out while the next is read.
//
// The shuffle: a pass reads its units (blocks of files) in an order drawn
// from the seed and the pass; a window of N examples is filled from them in
// that order and handed out in a permutation drawn from the seed, the pass
// and where the window began. Unlike tf.data's sliding buffer, whose state
// is its contents, a window's state is where it began and how many of its
// examples are used: a checkpoint saves that (read_position), and a resume
// reads the window again and goes on exactly where it stood.
//
// A pass ends with a smaller batch if its examples do not fill the last
// one, so that every pass is whole: each example of the worker's share is
// handed out exactly once per pass.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/batcher.hpp"
#include "data/read_position.hpp"
#include "data/shard_plan.hpp"
#include "data/text_format.hpp"
#include "data/unit_cursor.hpp"

namespace downpour {

struct stream_config {
  text_spec text;
  std::size_t csv_fields = 0;      // csv: fields per line (csv_fields_of)
  std::size_t csv_classes = 0;     // csv: labels from it on are refused; 0: none
  std::size_t batch_size = 100;
  std::size_t shuffle_buffer = 1;  // examples shuffled at once; 1: none
  std::uint64_t passes = 0;        // 0: pass after pass without end
  std::uint64_t seed = 0;          // this reader's own (each worker has one)
  unit_order order = unit_order::shuffled;
  std::string who = "worker 0";  // the reader, in messages
};

class example_stream {
 public:
  // Starts at `start` if it belongs to this plan (start.plan), else at the
  // beginning of pass start.pass (0 for a default position). Throws
  // data_error.
  example_stream(shard_plan plan, stream_config cfg, const read_position& start);
  ~example_stream();
  example_stream(const example_stream&) = delete;
  example_stream& operator=(const example_stream&) = delete;

  // Fills out with the next batch (the last of a pass may be smaller);
  // false once the passes are done. Throws data_error for bad data, with
  // the file, line and column.
  bool next(batch& out);

  // Where the stream stands after the last batch.
  read_position position() const;

  // Reads up to `lines` lines into the window after the one being handed
  // out; false once that one is complete (or there is none). What a
  // background reader does while its batches wait to be taken.
  bool read_ahead(std::size_t lines);

  // Whether the start position was of this plan (else the pass began anew).
  bool resumed() const { return resumed_; }
  const shard_plan& plan() const { return plan_; }

 private:
  struct window;
  void start_pass(std::uint64_t pass, std::uint64_t unit, std::uint64_t offset);
  bool fill(window& w, std::size_t lines);
  void next_window();
  bool next_pass();
  void copy_example(window& w, batch& out) const;

  shard_plan plan_;
  stream_config cfg_;
  example_parser parser_;
  std::unique_ptr<unit_cursor> cursor_;
  std::unique_ptr<window> current_;
  std::unique_ptr<window> ahead_;  // being filled; valid while current_ is not a pass's last
  std::uint64_t pass_ = 0;
  std::uint64_t batches_ = 0;
  std::uint64_t pass_examples_ = 0;
  bool done_ = false;
  bool resumed_ = false;
};

}  // namespace downpour
