#include "data/unit_cursor.hpp"

#include <utility>

#include "data/read_position.hpp"

namespace downpour {

unit_cursor::unit_cursor(const shard_plan& plan, std::size_t max_line_bytes)
    : plan_(plan), max_line_(max_line_bytes) {}

unit_cursor::~unit_cursor() = default;

void unit_cursor::start(std::vector<std::size_t> order, std::size_t at, std::uint64_t offset) {
  order_ = std::move(order);
  at_ = at;
  pending_.reset();
  if (at_ < order_.size()) open_unit(offset);
}

// The file stays open from unit to unit of it: a seek, not an open.
void unit_cursor::open_unit(std::uint64_t offset) {
  const read_unit& u = plan_.units[order_[at_]];
  if (file_ != u.file) {
    lines_.reset();
    const data_file& f = plan_.files[u.file];
    bytes_ = std::make_unique<byte_reader>(f.path, f.size);
    lines_ = std::make_unique<line_reader>(*bytes_, max_line_);
    file_ = u.file;
  }
  pending_.reset();
  if (offset == read_position::unit_start)
    lines_->restart(u.begin, u.begin == 0 ? line_start::yes : line_start::unknown);
  else
    lines_->restart(offset, line_start::yes);
}

std::optional<unit_cursor::item> unit_cursor::next() {
  while (at_ < order_.size()) {
    const read_unit& u = plan_.units[order_[at_]];
    auto line = pending_ ? std::exchange(pending_, std::nullopt) : lines_->next();
    if (line && line->offset < u.end) {
      if (u.holds(line->offset)) return item{*line, u.file, at_};
      continue;
    }
    // The unit is done. The next one, if later in the same file, may go on
    // from here: a gzip file always (it is read front to back), a plain
    // file when nothing lies between (else a seek is quicker).
    if (++at_ == order_.size()) return std::nullopt;
    const read_unit& n = plan_.units[order_[at_]];
    const bool onward = n.file == u.file && n.begin >= u.end &&
                        (plan_.files[n.file].gzip || (line && n.begin <= line->offset));
    if (onward)
      pending_ = line;
    else
      open_unit(read_position::unit_start);
  }
  return std::nullopt;
}

data_error unit_cursor::fault(const item& it, const line_fault& f) const {
  return lines_->fault(it.line, f);
}

}  // namespace downpour
