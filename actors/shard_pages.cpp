// A shard's side of moving rows page by page (protocol/row_pages.hpp): a
// snapshot's rows are frozen when it is taken, so every page comes from the
// same step however long the chief takes to read them; an init's pages are
// staged and applied with the init, so a shard is never half-initialised.
#include <utility>

#include "actors/shard_state.hpp"
#include "protocol/row_pages.hpp"

namespace downpour {
namespace {

// Frozen snapshots whose pages the chief has not read to the end (a chief
// gone mid-way): the oldest is dropped beyond this many.
constexpr std::size_t kMaxFrozen = 4;

std::uint64_t page_rows_of(const parameter_shard_state& st) {
  return rows_per_page(st.cfg.rows);
}

}  // namespace

void add_snapshot_rows(parameter_shard_state& st, shard_snapshot& snap) {
  if (!st.rows) return;
  row_part all = st.rows->snapshot();
  const std::uint64_t page_rows = page_rows_of(st);
  snap.row_pages = page_count(all.keys.size(), page_rows);
  if (snap.row_pages <= 1) {
    snap.rows = std::move(all);
    return;
  }
  snap.rows = page_of(all, 0, page_rows, st.cfg.rows);
  snap.frozen = st.next_frozen++;
  st.frozen.emplace(snap.frozen, std::move(all));
  while (st.frozen.size() > kMaxFrozen) st.frozen.erase(st.frozen.begin());
}

caf::result<row_part> on_row_page(shard_pointer self, const row_page_ask& ask) {
  auto& st = self->state;
  auto it = st.frozen.find(ask.frozen);
  if (it == st.frozen.end())
    return caf::make_error(errc::step_passed, "no frozen snapshot " + std::to_string(ask.frozen) +
                                                  " on this shard (read to the end or dropped)");
  const std::uint64_t page_rows = page_rows_of(st);
  const std::uint64_t pages = page_count(it->second.keys.size(), page_rows);
  if (ask.page >= pages)
    return caf::make_error(errc::shape_mismatch, "page " + std::to_string(ask.page) + " of " +
                                                     std::to_string(pages));
  row_part page = page_of(it->second, ask.page, page_rows, st.cfg.rows);
  if (ask.page + 1 == pages) st.frozen.erase(it);
  return page;
}

caf::result<std::uint64_t> on_stage_rows(shard_pointer self, row_part& page) {
  auto& st = self->state;
  if (st.cfg.rows.empty())
    return caf::make_error(errc::shape_mismatch, "rows sent to a shard of a dense model");
  if (auto err = check_page(page, st.cfg.rows)) return err;
  if (page.keys.size() > page_rows_of(st))
    return caf::make_error(errc::shape_mismatch, "a page of " + std::to_string(page.keys.size()) +
                                                     " rows (at most " +
                                                     std::to_string(page_rows_of(st)) + ")");
  if (!st.staged) {
    st.staged = std::move(page);
    return st.staged->keys.size();
  }
  if (auto err = append_page(*st.staged, page)) {
    st.staged.reset();
    return err;
  }
  return st.staged->keys.size();
}

caf::expected<row_part> staged_with(parameter_shard_state& st, row_part& last) {
  if (!st.staged) return std::move(last);
  row_part all = std::move(*st.staged);
  st.staged.reset();
  if (auto err = append_page(all, last)) return err;
  return all;
}

}  // namespace downpour
