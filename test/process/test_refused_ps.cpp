// A ps that is not the one asked for, or runs with other settings, is
// refused alone: the healthy job goes on.
#include <doctest/doctest.h>

#include "actors/parameter_shard.hpp"
#include "cluster_procs.hpp"
#include "config/cluster_fingerprint.hpp"
#include "model/mlp_spec.hpp"
#include "runtime/net/connect.hpp"
#include "runtime/node/node.hpp"

namespace test_refused_ps {

using namespace downpour;
using namespace downpour::testing;
using namespace std::chrono_literals;

TEST_CASE("a shard asked for as another shard (one address listed twice) refuses, naming both") {
  options opts;
  node_config cfg{opts, mlp_spec{}.layout("mlp")};
  caf::actor_system sys{cfg};
  shard_config c;
  c.index = 1;
  c.fingerprint = cluster_fingerprint(opts);  // what the shard compares: any text
  auto shard = spawn_parameter_shard(sys, c);
  caf::scoped_actor self{sys};
  caf::error refused;
  self->request(shard, caf::timespan{scaled(10s)}, hello_atom_v,
                hello_msg{cluster_fingerprint(opts), 0, 0, {}})
      .receive([](std::int64_t) {}, [&](caf::error& e) { refused = std::move(e); });
  CHECK(refused == errc::config_mismatch);
  CHECK(describe(refused).find("the node at the address of ps 0 is ps 1") != std::string::npos);
  std::int64_t step = 0;
  self->request(shard, caf::timespan{scaled(10s)}, hello_atom_v,
                hello_msg{cluster_fingerprint(opts), 1, 0, {}})
      .receive([&](std::int64_t s) { step = s; }, [](caf::error&) {});
  CHECK(step == -1);  // the right one: not initialised yet
  self->send(shard, stop_atom_v);
}

TEST_CASE("a ps restarted with another --batch-size is refused alone and exits 1 naming the "
          "difference; the job goes on with a correct one and ends exactly") {
  temp_dir dir("refused-ps");
  auto c = make_cluster(2, 2, dir,
                        {"--last-step=2500", "--log-every=100", "--save-checkpoint-steps=500",
                         "--save-checkpoint-secs=0", "--connect-timeout=60"});
  two_by_two nodes(c, dir);
  auto& [ps0, ps1, chief, w1] = nodes;
  REQUIRE(chief.wait_for_output("model.ckpt-500", 120s));
  ps1.kill(SIGKILL);
  REQUIRE(chief.wait_for_output("stop_supervisor: ps 1 went down", 30s));
  CHECK(ps1.wait(30s) == 128 + SIGKILL);
  {
    process wrong(c.node("ps", 1, {"--batch-size=50"}), dir / "ps1-wrong.log");
    CAPTURE(wrong.output());
    CHECK(wrong.wait(60s) == 1);
    CHECK(wrong.output().find(
              "ps:1 ERROR refused by the chief: batch-size=50 here but batch-size=100 at the "
              "chief") != std::string::npos);
  }
  CHECK(chief.wait_for_output("was started with other settings (batch-size=100 here but "
                              "batch-size=50 at ps 1); refused it",
                              30s));
  process right(c.node("ps", 1), dir / "ps1b.log");
  for (auto* p : {&chief, &w1, &ps0, &right}) {
    CAPTURE(p->output());
    CHECK(p->wait(300s) == 0);
  }
  CHECK(chief.output().find("final: global_step=2500 ") != std::string::npos);
}

}  // namespace test_refused_ps
