// What the connections of one broker are reading before their BASP
// handshake, so that idle and half-open connections cannot add up
// (runtime/net/basp_guard.cpp enforces it inside libcaf_io).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>

namespace downpour {

// Before a connection's handshake: the largest payload it may announce (a
// handshake carries the node's id, the application id and the published
// actor's interface, a few KiB), and what all such connections of a node may
// be reading at once (a few hundred simultaneous handshakes).
constexpr std::size_t basp_handshake_bound = std::size_t{64} << 10;
constexpr std::size_t basp_unshaken_budget = std::size_t{8} << 20;

// CAF 0.17's BASP header (caf::io::basp::header_size, checked where CAF is included).
constexpr std::size_t basp_header_bytes = 32;

// Connections are known by their handles, socket numbers, which the system
// reuses as soon as a connection is closed: opened() starts a handle afresh,
// so a new connection never inherits a closed one's handshake.
class handshake_ledger {
 public:
  using is_open_fn = std::function<bool(std::int64_t)>;

  // A new connection has handle hdl.
  void opened(std::int64_t hdl);

  // Why connection hdl may not read `bytes` next, or nullptr (then it reads
  // them). A connection whose payload read was followed by another read had
  // that payload accepted by BASP: its first one is the peer's handshake, so
  // it is past it, and every later read is one lookup. is_open tells which
  // other handles are still connections.
  const char* admit(std::int64_t hdl, std::size_t bytes, const is_open_fn& is_open);

 private:
  struct entry {
    std::size_t bytes = 0;
    bool past_handshake = false;
  };
  std::map<std::int64_t, entry> entries_;
};

}  // namespace downpour
