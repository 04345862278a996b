// What connections before their BASP handshake may read: one handshake's
// worth each and a budget for all, and a handle the system hands to a new
// connection starts afresh.
#include <doctest/doctest.h>

#include <cstring>
#include <set>

#include "runtime/net/handshake_ledger.hpp"

namespace downpour::test_handshake_ledger {
namespace {

constexpr std::size_t header = basp_header_bytes;

// The handles the test has open, as the broker would answer.
struct connections {
  std::set<std::int64_t> open;
  handshake_ledger::is_open_fn is_open() const {
    return [this](std::int64_t hdl) { return open.count(hdl) > 0; };
  }
};

// A new connection on hdl, as the broker reports it.
void connect(handshake_ledger& ledger, connections& c, std::int64_t hdl) {
  c.open.insert(hdl);
  ledger.opened(hdl);
}

// A connection on hdl reads its header, a handshake of `payload` bytes and
// the next header: past its handshake.
void shake_hands(handshake_ledger& ledger, connections& c, std::int64_t hdl, std::size_t payload) {
  connect(ledger, c, hdl);
  REQUIRE(ledger.admit(hdl, header, c.is_open()) == nullptr);
  REQUIRE(ledger.admit(hdl, payload, c.is_open()) == nullptr);
  REQUIRE(ledger.admit(hdl, header, c.is_open()) == nullptr);
}

bool refused_for(const char* why, const char* expected) {
  return why != nullptr && std::strcmp(why, expected) == 0;
}

// Whether connection hdl, after its first header, is refused a payload one
// byte larger than any handshake.
bool refused_more_than_a_handshake(handshake_ledger& ledger, const connections& c,
                                   std::int64_t hdl) {
  REQUIRE(ledger.admit(hdl, header, c.is_open()) == nullptr);
  return refused_for(ledger.admit(hdl, basp_handshake_bound + 1, c.is_open()),
                     "larger than any handshake");
}

TEST_CASE("a connection past its handshake reads messages of any size the bound allows") {
  handshake_ledger ledger;
  connections c;
  shake_hands(ledger, c, 7, 690);
  CHECK(ledger.admit(7, 4 << 20, c.is_open()) == nullptr);
  CHECK(ledger.admit(7, header, c.is_open()) == nullptr);
}

TEST_CASE("a connection announcing more than any handshake before its own is refused") {
  handshake_ledger ledger;
  connections c;
  connect(ledger, c, 9);
  CHECK(refused_more_than_a_handshake(ledger, c, 9));
}

TEST_CASE("a new connection on a closed one's handle does not inherit its handshake") {
  handshake_ledger ledger;
  connections c;
  shake_hands(ledger, c, 12, 690);
  // The peer left; the system gives socket 12 to a stranger.
  connect(ledger, c, 12);
  CHECK(refused_more_than_a_handshake(ledger, c, 12));
}

TEST_CASE("connections before their handshake share one budget; closed ones give theirs back") {
  handshake_ledger ledger;
  connections c;
  const std::size_t each = basp_handshake_bound - 1024;
  const std::size_t fit = basp_unshaken_budget / each;
  for (std::int64_t hdl = 100; hdl < 100 + static_cast<std::int64_t>(fit); ++hdl) {
    connect(ledger, c, hdl);
    REQUIRE(ledger.admit(hdl, each, c.is_open()) == nullptr);
  }
  connect(ledger, c, 1);
  CHECK(refused_for(ledger.admit(1, each, c.is_open()),
                    "connections not past their handshake hold too much"));
  c.open.erase(100);
  ledger.opened(1);
  CHECK(ledger.admit(1, each, c.is_open()) == nullptr);
}

TEST_CASE("connections past their handshake take nothing from the budget of those before it") {
  handshake_ledger ledger;
  connections c;
  for (std::int64_t hdl = 1; hdl <= 200; ++hdl) shake_hands(ledger, c, hdl, 60'000);
  for (std::int64_t hdl = 1; hdl <= 200; ++hdl)
    REQUIRE(ledger.admit(hdl, 60'000, c.is_open()) == nullptr);
  connect(ledger, c, 500);
  CHECK(ledger.admit(500, basp_handshake_bound, c.is_open()) == nullptr);
}

}  // namespace
}  // namespace downpour::test_handshake_ledger
