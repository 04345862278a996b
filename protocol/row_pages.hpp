// A model's rows move between the chief and a shard (init, restore,
// snapshot) page by page: no message grows with the rows held or with the
// key space, so a node's message bound is fixed by the widest row alone. A
// snapshot's rows are frozen on the shard when it is taken and read page by
// page; an init's or restore's are staged on the shard page by page and
// taken with the init itself. A part's keys may span several row
// variables, each key carrying its variable's width of values and slots.
#pragma once

#include <cstdint>

#include "protocol/messages.hpp"
#include "model/row_tables.hpp"

namespace downpour {

// The bytes of a page of rows on the wire (keys, values and slots).
constexpr std::uint64_t kRowPageBytes = std::uint64_t{8} << 20;

// The largest row message a worker sends or gets (a batch's pull or push
// to one shard); a page is smaller.
constexpr std::uint64_t kRowMessageBytes = std::uint64_t{64} << 20;

// Key, values and AdaGrad accumulators of one row of cols floats.
std::uint64_t row_wire_bytes(std::uint64_t cols);
// The most bytes of one row of the tables: its key, values and slots (no
// fewer slots than values, as row_wire_bytes counts).
std::uint64_t row_wire_bytes(const row_tables_spec& spec);

// Rows in a page (at least one), of rows of cols floats or of the tables'.
std::uint64_t rows_per_page(std::uint64_t cols);
std::uint64_t rows_per_page(const row_tables_spec& spec);

// The largest row payload of any message of a job with n rows of cols
// floats (or the tables'): what the node's message bound adds for rows.
// Independent of n once n rows exceed a worker's largest message.
std::uint64_t row_message_bound(std::uint64_t n, std::uint64_t cols);
std::uint64_t row_message_bound(const row_tables_spec& spec);

// Pages of a part of this many rows (0 for none).
std::uint64_t page_count(std::uint64_t rows, std::uint64_t page_rows);

// Page `page` of part (rows [page * page_rows, ...)), copied; same range.
// Each key's values and slots are as wide as spec says (part's keys are
// ascending and in spec's key space; no slots at all are kept as none).
row_part page_of(const row_part& part, std::uint64_t page, std::uint64_t page_rows,
                 const row_tables_spec& spec);

// Whether page's values and slots are as wide as spec says for its keys
// (slots: all or none), and its keys inside spec's key space.
caf::error check_page(const row_part& page, const row_tables_spec& spec);

// Appends page's rows to part; an error if it is of another range or its
// keys do not follow part's. Widths are the sender's (check_page).
caf::error append_page(row_part& part, row_part& page);

}  // namespace downpour
