// A sparse variable's rows move between the chief and a shard (init,
// restore, snapshot) page by page: no message grows with the rows held or
// with N, so a node's message bound is fixed by the row width alone. A
// snapshot's rows are frozen on the shard when it is taken and read page by
// page; an init's or restore's are staged on the shard page by page and
// taken with the init itself.
#pragma once

#include <cstdint>

#include "protocol/messages.hpp"

namespace downpour {

// The bytes of a page of rows on the wire (keys, values and accumulators).
constexpr std::uint64_t kRowPageBytes = std::uint64_t{8} << 20;

// The largest row message a worker sends or gets (a batch's pull or push
// to one shard); a page is smaller.
constexpr std::uint64_t kRowMessageBytes = std::uint64_t{64} << 20;

// Key, values and AdaGrad accumulators of one row of cols floats.
std::uint64_t row_wire_bytes(std::uint64_t cols);

// Rows in a page (at least one).
std::uint64_t rows_per_page(std::uint64_t cols);

// The largest row payload of any message of a job with n rows of cols
// floats: what the node's message bound adds for rows. Independent of n
// once n rows exceed a worker's largest message.
std::uint64_t row_message_bound(std::uint64_t n, std::uint64_t cols);

// Pages of a part of this many rows (0 for none).
std::uint64_t page_count(std::uint64_t rows, std::uint64_t page_rows);

// Page `page` of part (rows [page * page_rows, ...)), copied; same range.
row_part page_of(const row_part& part, std::uint64_t page, std::uint64_t page_rows);

// Appends page's rows to part; an error if it is of another range or its
// rows do not follow part's (keys ascending, values per key alike).
caf::error append_page(row_part& part, row_part& page);

}  // namespace downpour
