// What a stranger can make a node allocate before (or without) any
// handshake: at most one message of this job's largest size.
#include <doctest/doctest.h>

#include <memory>

#include "cluster_procs.hpp"
#include "raw_peer.hpp"
#include "runtime/net/basp_guard.hpp"

namespace test_basp_guard {

using namespace downpour;
using namespace downpour::testing;
using namespace std::chrono_literals;

namespace {

// 32 bytes asking for 4 GiB (the header of issue 15), and one byte more than the bound.
std::string huge_header() {
  return basp_header(basp_client_handshake, 0xFFFFFFFFu);
}

std::string above_bound_header(std::size_t bound) {
  return basp_header(basp_client_handshake, static_cast<std::uint32_t>(bound + 1));
}

// Whether at least n of peers are closed by the other side within timeout;
// waits on the sockets, not on a clock.
bool closed_within(std::vector<std::unique_ptr<raw_peer>>& peers, std::size_t n,
                   std::chrono::milliseconds timeout) {
  const deadline until{timeout};
  for (;;) {
    std::vector<pollfd> open;
    for (auto& p : peers)
      if (!p->closed_now()) open.push_back(pollfd{p->fd(), POLLIN, 0});
    if (peers.size() - open.size() >= n) return true;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until.left());
    if (left.count() <= 0) return false;
    ::poll(open.data(), open.size(), static_cast<int>(left.count()));
  }
}

// Sends the hostile variants to a node, first the one given (refusals are
// logged rate-limited: the first line is that one); returns the peers held
// open (a truncated header, a header then silence) so they stay open during
// the job.
std::vector<std::unique_ptr<raw_peer>> attack(std::uint16_t port, std::size_t bound,
                                              const std::string& first) {
  for (const auto& header : {first, huge_header(), above_bound_header(bound)}) {
    raw_peer peer(port);
    peer.send(header);
    CHECK(peer.closed_within(scaled(10000ms)));
  }
  std::vector<std::unique_ptr<raw_peer>> many;
  for (int i = 0; i < 50; ++i) {
    many.push_back(std::make_unique<raw_peer>(port));
    many.back()->send(huge_header());
  }
  for (auto& p : many) CHECK(p->closed_within(scaled(10000ms)));
  std::vector<std::unique_ptr<raw_peer>> held;
  // Before a handshake: one announcing more than a handshake needs, then many
  // each under that, which together would hold 19 MB: those past the budget
  // are closed, the others held.
  raw_peer big(port);
  big.send(basp_header(basp_client_handshake, basp_handshake_bound + 1));
  CHECK(big.closed_within(scaled(10000ms)));
  const auto each = static_cast<std::uint32_t>(basp_handshake_bound - 1024);
  for (std::size_t i = 0; i < 300; ++i) {
    held.push_back(std::make_unique<raw_peer>(port));
    held.back()->send(basp_header(basp_client_handshake, each));
  }
  CHECK(closed_within(held, 300 - basp_unshaken_budget / each, scaled(20000ms)));
  held.push_back(std::make_unique<raw_peer>(port));
  held.back()->send(huge_header().substr(0, 16));
  held.push_back(std::make_unique<raw_peer>(port));
  held.back()->send(basp_header(basp_client_handshake, static_cast<std::uint32_t>(bound / 2)));
  return held;
}

}  // namespace

TEST_CASE("the BASP bound covers a shard's parameters and shadows of the whole model") {
  const std::size_t model_bytes = 397'510 * sizeof(float);
  CHECK(basp_payload_bound(397'510) > 2 * model_bytes);
  CHECK(basp_payload_bound(397'510) < 4 * model_bytes);
  CHECK(basp_payload_bound(795'020) > basp_payload_bound(397'510));
}

TEST_CASE("with K trainers per worker process the BASP bound holds a push batch of K gradients "
          "and their rows, and one or two trainers keep a single worker's bound") {
  const std::size_t model_bytes = 397'510 * sizeof(float);
  CHECK(basp_payload_bound(397'510, 0, 1) == basp_payload_bound(397'510));
  CHECK(basp_payload_bound(397'510, 0, 2) == basp_payload_bound(397'510));
  CHECK(basp_payload_bound(397'510, 0, 3) > 3 * model_bytes);
  CHECK(basp_payload_bound(397'510, 0, 3) < 4 * model_bytes);
  CHECK(basp_payload_bound(397'510, 1000, 3) == basp_payload_bound(397'510, 0, 3) + 3000);
}

TEST_CASE(
    "a stranger refused mid-message leaves nothing behind for the next connection on its "
    "socket") {
  temp_dir dir("basp-guard-next");
  auto c = make_cluster(1, 1, dir, {"--connect-timeout=60"});
  process ps(c.node("ps", 0), dir / "ps.log");
  REQUIRE(ps.wait_for_output("listening as ps 0", 60s));
  const auto port = first_port(c.ps);
  {
    raw_peer first(port);
    first.send(huge_header());
    REQUIRE(first.closed_within(scaled(10000ms)));
  }
  // On the socket number just freed: read as a header only if BASP forgot the
  // refused connection, else as the 4 GiB payload it announced, and dropped.
  raw_peer next(port);
  next.send(basp_header(basp_client_handshake, basp_handshake_bound + 1));
  CHECK(next.closed_within(scaled(10000ms)));
  CHECK(ps.wait_for_output("before its handshake (larger than any handshake)", 30s));
  CAPTURE(ps.output());
  ps.kill(SIGTERM);
  CHECK(ps.wait(60s) == 4);
}

TEST_CASE(
    "oversized, truncated and silent BASP headers sent to a ps and the chief mid-job cost "
    "them no memory and the job ends exactly without a rollback") {
  temp_dir dir("basp-guard");
  auto c = make_cluster(2, 2, dir,
                        {"--last-step=4000", "--log-every=100", "--save-checkpoint-steps=1000",
                         "--save-checkpoint-secs=0", "--connect-timeout=30"});
  two_by_two nodes(c, dir);
  auto& [ps0, ps1, chief, w1] = nodes;
  REQUIRE(chief.wait_for_output("global_step:", 120s));  // training has begun
  const std::size_t bound = basp_payload_bound(397'510);
  {
    // A peer that completes its handshake and leaves: the socket it had is
    // the next stranger's, who must not inherit its handshake.
    process status({DOWNPOUR_BINARY, "status", "--chief", c.ps.substr(0, c.ps.find(',')),
                    "--connect-timeout=30"},
                   dir / "status.log");
    CHECK(status.wait(60s) == 1);
    CAPTURE(status.output());
    CHECK(status.output().find("the chief") != std::string::npos);
  }
  const long ps_before = proc_status_kb(ps0.pid(), "VmHWM");
  const long chief_before = proc_status_kb(chief.pid(), "VmHWM");
  auto held_ps = attack(first_port(c.ps), bound, above_bound_header(bound));
  auto held_chief = attack(first_port(c.workers), bound, huge_header());
  const long ps_after = proc_status_kb(ps0.pid(), "VmHWM");
  const long chief_after = proc_status_kb(chief.pid(), "VmHWM");
  WARN_MESSAGE(!chief.wait_for_output("final:", 0s), "the job ended before the attack was over");
  MESSAGE("peak RSS of ps 0: " << ps_before / 1024 << " -> " << ps_after / 1024
                               << " MiB; of the chief: " << chief_before / 1024 << " -> "
                               << chief_after / 1024 << " MiB");
  // One bounded message held (bound / 2) and nothing more; unguarded, ps 0
  // went from 11 MB to 4.17 GB.
  CHECK(ps_after - ps_before < 64 * 1024);
  CHECK(chief_after - chief_before < 64 * 1024);
  for (auto* p : nodes.all()) {
    CAPTURE(p->output());
    CHECK(p->wait(300s) == 0);
  }
  const auto out = chief.output();
  CAPTURE(out);
  CHECK(out.find("final: global_step=4000 ") != std::string::npos);
  CHECK(restored_step(out) == -1);
  CHECK(out.find("went down") == std::string::npos);
  CHECK(out.find("refused a message of 4294967295 bytes from 127.0.0.1:") != std::string::npos);
  {
    const auto ps_log = ps0.output();
    CAPTURE(ps_log);
    CHECK(ps_log.find("refused a message of " + std::to_string(bound + 1) +
                      " bytes from 127.0.0.1:") != std::string::npos);
    for (const char* why : {"before its handshake (larger than any handshake)",
                            "before its handshake (connections not past their handshake hold"})
      CHECK(ps_log.find(why) != std::string::npos);
  }
  for (auto* p : {&ps0, &chief}) {
    const auto log = p->output();
    CAPTURE(log);
    // Hundreds of refusals of three kinds, rate-limited: the first line of
    // each kind, then a count.
    std::size_t lines = 0;
    for (auto at = log.find("refused a message"); at != std::string::npos;
         at = log.find("refused a message", at + 1))
      ++lines;
    CHECK(lines <= 6);
  }
}

}  // namespace test_basp_guard
