#include "runtime/net/handshake_ledger.hpp"

#include "caf/io/basp/header.hpp"

namespace downpour {

static_assert(basp_header_bytes == caf::io::basp::header_size);

void handshake_ledger::opened(std::int64_t hdl) {
  entries_.erase(hdl);
}

const char* handshake_ledger::admit(std::int64_t hdl, std::size_t bytes,
                                    const is_open_fn& is_open) {
  auto& e = entries_[hdl];
  if (e.bytes > basp_header_bytes) e.past_handshake = true;
  e.bytes = bytes;
  if (e.past_handshake) return nullptr;
  if (bytes > basp_handshake_bound) {
    entries_.erase(hdl);
    return "larger than any handshake";
  }
  std::size_t held = 0;
  for (auto i = entries_.begin(); i != entries_.end();) {
    if (i->first != hdl && !is_open(i->first)) {
      i = entries_.erase(i);
      continue;
    }
    if (!i->second.past_handshake) held += i->second.bytes;
    ++i;
  }
  if (held <= basp_unshaken_budget) return nullptr;
  entries_.erase(hdl);
  return "connections not past their handshake hold too much";
}

}  // namespace downpour
