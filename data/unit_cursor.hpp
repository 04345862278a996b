// The lines of a pass's units, unit after unit in the pass's order: the
// files opened (and a gzip file read on rather than again) as the units
// need them, each line handed out once, by the unit its first byte is in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "data/byte_reader.hpp"
#include "data/line_reader.hpp"
#include "data/shard_plan.hpp"

namespace downpour {

class unit_cursor {
 public:
  unit_cursor(const shard_plan& plan, std::size_t max_line_bytes);
  ~unit_cursor();

  // Reads the units plan.units[order[i]] from i = at on, starting in that
  // unit at byte offset (read_position::unit_start: its beginning; else
  // the start of a line).
  void start(std::vector<std::size_t> order, std::size_t at, std::uint64_t offset);

  struct item {
    line_reader::line line;  // valid until the next call
    std::uint32_t file;
    std::size_t at;  // the unit's index in the order
  };
  // The next line of the units; nullopt once the last unit is read.
  std::optional<item> next();

  // The error of a fault in the item's line ("data: FILE:LINE:COLUMN: ...").
  data_error fault(const item& it, const line_fault& f) const;

 private:
  void open_unit(std::uint64_t offset);

  const shard_plan& plan_;
  std::size_t max_line_;
  std::vector<std::size_t> order_;
  std::size_t at_ = 0;
  std::optional<std::uint32_t> file_;  // the file open
  std::unique_ptr<byte_reader> bytes_;
  std::unique_ptr<line_reader> lines_;
  std::optional<line_reader::line> pending_;  // read, and the next unit's
};

}  // namespace downpour
