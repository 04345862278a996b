// Anyone who can connect can speak BASP to a published actor (CAF 0.17.6's
// listening side checks nothing about a connecting peer): a ps and the chief
// serve a remote node nothing but a hello until it proved it belongs to the
// cluster, and take control messages only from the chief.
#include <doctest/doctest.h>

#include "cluster_procs.hpp"
#include "forged_client.hpp"

namespace test_peer_auth {

using namespace downpour;
using namespace downpour::testing;
using namespace std::chrono_literals;

TEST_CASE("a forged BASP client cannot stop, exit, init, restore, snapshot, pull from or push to "
          "a ps, nor take tickets from the chief; the job ends exactly") {
  temp_dir dir("forged");
  auto c = make_cluster(1, 2, dir,
                        {"--last-step=3000", "--log-every=100", "--save-checkpoint-secs=0",
                         "--connect-timeout=30"});
  process ps0(c.node("ps", 0), dir / "ps0.log");
  process chief(c.node("worker", 0), dir / "w0.log");
  process w1(c.node("worker", 1), dir / "w1.log");
  REQUIRE(chief.wait_for_output("global_step:", 120s));  // training has begun
  options theirs;
  theirs.cluster_name = "other";
  forged_client stranger(theirs, "downpour");
  attack_shard(stranger, stranger.connect<shard_actor>(first_port(c.ps)),
               "cluster-name=other here but cluster-name=downpour at ps 0");
  auto sup = stranger.connect<supervisor_actor>(first_port(c.workers));
  {
    caf::scoped_actor self{stranger.system()};
    self->send_exit(sup, caf::exit_reason::kill);
    caf::anon_send_exit(sup, caf::exit_reason::kill);
    caf::error ticket;
    self->request(sup, caf::timespan{scaled(30s)}, ticket_atom_v, std::uint32_t{1}, 0.0f)
        .receive([](std::int64_t) {}, [&](caf::error& e) { ticket = std::move(e); });
    CHECK(ticket == errc::unauthorized);
  }
  WARN_MESSAGE(!chief.wait_for_output("final:", 0s), "the job ended before the attack was over");
  for (auto* p : {&chief, &w1, &ps0}) {
    CAPTURE(p->output());
    CHECK(p->wait(300s) == 0);
  }
  const auto out = chief.output();
  CAPTURE(out);
  CHECK(out.find("final: global_step=3000 ") != std::string::npos);
  CHECK(out.find("refused a ticket request from node ") != std::string::npos);
  CHECK(out.find("refused an exit from node ") != std::string::npos);
  const auto ps_log = ps0.output();
  CAPTURE(ps_log);
  // Rate-limited per kind: the anonymous stop and exit sent after them are counted.
  for (const char* line : {"refused a stop from node ", "refused an exit from node ",
                           "refused an error from ",
                           "refused a hello with other settings (cluster-name=other here",
                           "refused an init from node ", "refused a snapshot from node "})
    CHECK(ps_log.find(line) != std::string::npos);
}

}  // namespace test_peer_auth
