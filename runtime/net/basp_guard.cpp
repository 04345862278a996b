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
// logged with the peer's address, and BASP cleans the connection up as if
// the peer had closed it (end_connection). So no connection ever holds more than one
// bounded message, before or after the handshake. Before its handshake a
// connection may read no more than a handshake needs, and all such
// connections of a node together no more than basp_unshaken_budget: idle
// and half-open connections cannot add up (runtime/net/handshake_ledger.hpp).
#include "runtime/net/basp_guard.hpp"

#include <dlfcn.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>

#include "caf/io/abstract_broker.hpp"
#include "caf/io/scribe.hpp"
#include "caf/scheduled_actor.hpp"

namespace downpour {
namespace {

constexpr std::size_t kMargin = std::size_t{1} << 20;

// Process-wide because the functions that enforce it are (see above).
struct guard_state {
  std::atomic<std::size_t> bound{0};
  std::mutex mutex;
  logger log;
  log_throttle throttle{std::chrono::seconds(10)};
  std::map<const caf::io::abstract_broker*, handshake_ledger> ledgers;
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

const char* refuse_read(const caf::io::abstract_broker* b, std::int64_t hdl, std::size_t bytes,
                        const handshake_ledger::is_open_fn& is_open) {
  auto& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.ledgers[b].admit(hdl, bytes, is_open);
}

void forget_handle(const caf::io::abstract_broker* b, std::int64_t hdl) {
  auto& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.ledgers[b].opened(hdl);
}

// Ends a connection as a peer leaving would: the stream reads the end, and
// the broker learns of the close as it does of any other. Closing the scribe
// directly would not tell BASP, which would keep the connection's state
// (awaiting the refused payload) and read the first header of the next
// connection given the same socket number as that payload. A handle's id is
// its socket (caf::io::network::conn_hdl_from_socket).
void end_connection(caf::io::connection_handle hdl) {
  ::shutdown(static_cast<int>(hdl.id()), SHUT_RDWR);
}

// libcaf_io's own definition of a function this file replaces.
template <class Fn>
Fn next_definition(const char* mangled) {
  void* sym = ::dlsym(RTLD_NEXT, mangled);
  if (sym == nullptr) {  // the library is not loaded: nothing could have called us
    std::fprintf(stderr, "downpour: error: %s not found in CAF's libraries\n", mangled);
    std::abort();
  }
  return reinterpret_cast<Fn>(sym);
}

using configure_read_fn = void (*)(caf::io::abstract_broker*, caf::io::connection_handle,
                                   caf::io::receive_policy::config);

configure_read_fn real_configure_read() {
  static const auto fn = next_definition<configure_read_fn>(
      "_ZN3caf2io15abstract_broker14configure_readENS0_17connection_handleESt4pairINS0_"
      "19receive_policy_flagEmE");
  return fn;
}

using add_scribe_fn = void (*)(caf::io::abstract_broker*, caf::io::scribe_ptr);

add_scribe_fn real_add_scribe() {
  static const auto fn = next_definition<add_scribe_fn>(
      "_ZN3caf2io15abstract_broker10add_scribeENS_13intrusive_ptrINS0_6scribeEEE");
  return fn;
}

}  // namespace

std::size_t basp_payload_bound(std::size_t model_floats, std::uint64_t row_bytes,
                               std::size_t trainers) {
  const std::size_t models = std::max<std::size_t>(2, trainers);
  return models * sizeof(float) * model_floats + trainers * row_bytes + kMargin;
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
    downpour::report(remote_addr(hdl) + ":" + std::to_string(remote_port(hdl)), cfg.second, bound);
    downpour::end_connection(hdl);
    return;
  }
  const char* why = downpour::refuse_read(this, hdl.id(), cfg.second, [this](std::int64_t id) {
    return by_id(connection_handle::from_int(id)) != caf::none;
  });
  if (why != nullptr) {
    downpour::report_unshaken(remote_addr(hdl) + ":" + std::to_string(remote_port(hdl)), cfg.second,
                              why);
    downpour::end_connection(hdl);
    return;
  }
  downpour::real_configure_read()(this, hdl, cfg);
}

// Every connection a broker gets, accepted or opened, comes through here
// (libcaf_io's multiplexer calls it through its PLT): its handle may be a
// closed connection's, whose handshake it must not inherit.
void caf::io::abstract_broker::add_scribe(scribe_ptr ptr) {
  downpour::forget_handle(this, ptr->hdl().id());
  downpour::real_add_scribe()(this, std::move(ptr));
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
  static const auto real = downpour::next_definition<categorize_fn>(
      "_ZN3caf15scheduled_actor10categorizeERNS_15mailbox_elementE");
  auto& content = x.content();
  if (content.match_elements<exit_msg>()) {
    auto& em = content.get_mutable_as<exit_msg>(0);
    if (em.reason == exit_reason::kill && !(x.sender && x.sender->node() == node()))
      em.reason = exit_reason::unknown;
  }
  return real(this, x);
}
