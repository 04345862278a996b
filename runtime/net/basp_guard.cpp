// CAF 0.17.6's BASP broker reads a 32-byte header, checks it with
// caf::io::basp::valid and then asks the connection for exactly
// payload_len bytes (abstract_broker::configure_read): the receive buffer is
// resized to that before a single payload byte arrives, and nothing bounds
// it. A header claiming 0xFFFFFFFF bytes made an idle ps allocate 4 GiB before
// any handshake (measured: 11 MB to 4.17 GB RSS in 4.5 s).
//
// libcaf_io calls configure_read through its PLT, so the executable's
// definition below is called instead (an executable's symbols come first; the
// library's own stays reachable with dlsym(RTLD_NEXT)). A request for more
// than this job's largest legitimate message closes that connection instead,
// logged with the peer's address; the broker then cleans the connection up
// as if the peer had closed it. So no connection ever holds more than one
// bounded message, before or after the handshake. Before its handshake a
// connection may read no more than a handshake needs, and all such
// connections of a node together no more than basp_unshaken_budget: idle
// and half-open connections cannot add up.
#include "runtime/net/basp_guard.hpp"

#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iterator>
#include <map>
#include <mutex>

#include "caf/io/abstract_broker.hpp"
#include "caf/io/basp/header.hpp"
#include "caf/io/scribe.hpp"
#include "caf/scheduled_actor.hpp"

namespace downpour {
namespace {

constexpr std::size_t kMargin = std::size_t{1} << 20;

// What a connection of a broker was last told to read. A connection whose
// payload read was followed by another read had that payload accepted by
// BASP: its first one is the peer's handshake, so it is past it.
// Handles are socket numbers, which the system reuses: the scribe (one per
// connection) tells a new connection from an old one on the same handle.
struct read_entry {
  const void* scribe = nullptr;
  std::size_t bytes = 0;
  bool past_handshake = false;
};
using scribe_of_fn = std::function<const void*(std::int64_t)>;  // nullptr: no such connection
using broker_ledger = std::map<std::int64_t, read_entry>;

// Process-wide because the functions that enforce it are (see above).
struct guard_state {
  std::atomic<std::size_t> bound{0};
  std::mutex mutex;
  logger log;
  log_throttle throttle{std::chrono::seconds(10)};
  std::map<const caf::io::abstract_broker*, broker_ledger> ledgers;
};

guard_state& state() {
  static guard_state s;
  return s;
}

std::string megabytes(std::size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(bytes) / 1e6);
  return buf;
}

void report(const std::string& peer, std::size_t bytes, std::size_t bound) {
  auto& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto more = s.throttle.pass("oversized");
  if (!more) return;
  s.log.warn("refused a message of " + std::to_string(bytes) + " bytes from " + peer +
             " (more than the " + megabytes(bound) +
             " this job's largest message needs); closed the connection" + *more);
}

void report_unshaken(const std::string& peer, std::size_t bytes, const char* why) {
  auto& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto more = s.throttle.pass(why);
  if (!more) return;
  s.log.warn("refused a message of " + std::to_string(bytes) + " bytes from " + peer +
             " before its handshake (" + why + "); closed the connection" + *more);
}

// Drops the entries of connections the broker no longer has.
void prune(broker_ledger& ledger, const scribe_of_fn& scribe_of) {
  for (auto i = ledger.begin(); i != ledger.end();)
    i = scribe_of(i->first) == i->second.scribe ? std::next(i) : ledger.erase(i);
}

// Why connection hdl of broker b may not read `bytes` next, or nullptr. Only connections before
// their handshake are limited: every later read (each message of the job)
// is one lookup.
const char* refuse_read(const caf::io::abstract_broker* b, std::int64_t hdl, std::size_t bytes,
                        const scribe_of_fn& scribe_of) {
  auto& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto& ledger = s.ledgers[b];
  auto& entry = ledger[hdl];
  if (const void* now = scribe_of(hdl); entry.scribe != now) entry = read_entry{now};
  if (entry.bytes > caf::io::basp::header_size) entry.past_handshake = true;
  entry.bytes = bytes;
  if (entry.past_handshake) return nullptr;
  if (bytes > basp_handshake_bound) {
    ledger.erase(hdl);
    return "larger than any handshake";
  }
  prune(ledger, scribe_of);  // keeps hdl: it is open
  std::size_t held = 0;
  for (const auto& [id, e] : ledger)
    if (!e.past_handshake) held += e.bytes;
  if (held <= basp_unshaken_budget) return nullptr;
  ledger.erase(hdl);
  return "connections not past their handshake hold too much";
}

using configure_read_fn = void (*)(caf::io::abstract_broker*, caf::io::connection_handle,
                                   caf::io::receive_policy::config);

configure_read_fn real_configure_read() {
  static const auto fn = [] {
    void* sym = ::dlsym(
        RTLD_NEXT,
        "_ZN3caf2io15abstract_broker14configure_readENS0_17connection_handleESt4pairINS0_"
        "19receive_policy_flagEmE");
    if (sym == nullptr) {  // libcaf_io not loaded: nothing could have called us
      std::fprintf(stderr, "downpour: error: configure_read not found in libcaf_io\n");
      std::abort();
    }
    return reinterpret_cast<configure_read_fn>(sym);
  }();
  return fn;
}

}  // namespace

std::size_t basp_payload_bound(std::size_t model_floats, std::uint64_t row_bytes) {
  return 2 * sizeof(float) * model_floats + row_bytes + kMargin;
}

void guard_basp(std::size_t bound, const logger& log) {
  auto& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.log = log;
  s.bound = bound;
}

}  // namespace downpour

void caf::io::abstract_broker::configure_read(connection_handle hdl, receive_policy::config cfg) {
  const std::size_t bound = downpour::state().bound;
  if (bound != 0 && cfg.second > bound) {
    downpour::report(remote_addr(hdl) + ":" + std::to_string(remote_port(hdl)), cfg.second,
                     bound);
    close(hdl);
    return;
  }
  const char* why = downpour::refuse_read(
      this, hdl.id(), cfg.second, [this](std::int64_t id) -> const void* {
        auto x = by_id(connection_handle::from_int(id));
        return x ? &*x : nullptr;
      });
  if (why != nullptr) {
    downpour::report_unshaken(remote_addr(hdl) + ":" + std::to_string(remote_port(hdl)),
                              cfg.second, why);
    close(hdl);
    return;
  }
  downpour::real_configure_read()(this, hdl, cfg);
}

// An exit message with reason `kill` ends any CAF actor before its exit
// handler is asked (scheduled_actor::categorize), and BASP delivers one from
// any peer that completed the handshake: one such message ended a published
// ps. libcaf_core calls categorize through its PLT, so this definition runs
// first: a kill from another node (or an anonymous one, which may have come
// from anywhere) becomes an ordinary exit with reason `unknown`, which the
// actor's exit handler judges (protocol/peer_guard.hpp); kills sent on this node
// by a known sender stay kills.
caf::scheduled_actor::message_category caf::scheduled_actor::categorize(mailbox_element& x) {
  using categorize_fn = message_category (*)(scheduled_actor*, mailbox_element&);
  static const auto real = [] {
    void* sym = ::dlsym(RTLD_NEXT, "_ZN3caf15scheduled_actor10categorizeERNS_15mailbox_elementE");
    if (sym == nullptr) {
      std::fprintf(stderr, "downpour: error: categorize not found in libcaf_core\n");
      std::abort();
    }
    return reinterpret_cast<categorize_fn>(sym);
  }();
  auto& content = x.content();
  if (content.match_elements<exit_msg>()) {
    auto& em = content.get_mutable_as<exit_msg>(0);
    if (em.reason == exit_reason::kill && !(x.sender && x.sender->node() == node()))
      em.reason = exit_reason::unknown;
  }
  return real(this, x);
}
