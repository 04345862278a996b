// Workers that join past --worker-hosts (--join) or leave a running job: a
// sync round changes size only between rounds (the raise waits for the next
// round, the round a leaver pushed to still waits for the others), with the
// coordinator's log line; ssp and async take a joiner as it comes.
#include <doctest/doctest.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "actors/parameter_shard.hpp"
#include "actors/sync_coordinator.hpp"
#include "reporting/log.hpp"
#include "sync_shard_fixture.hpp"

namespace test_sync_joiners {

using namespace downpour;

namespace {

// The messages a logger wrote to its file at one level, in order.
std::vector<std::string> messages_in(std::FILE* f, log_level level) {
  std::string text;
  std::rewind(f);
  for (int c; (c = std::fgetc(f)) != EOF;) text += static_cast<char>(c);
  std::vector<std::string> lines;
  for (const auto& r : parse_log(text))
    if (r.level == level) lines.push_back(r.message);
  return lines;
}

// A coordinator of two listed workers over one sync shard needing two
// gradients a round, its info lines in a file the test reads.
struct joiners_fixture : downpour::testing::sync_shard_fixture {
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  shard_actor shard;
  coordinator_actor coordinator;
  std::vector<caf::actor> members;

  explicit joiners_fixture(train_mode mode = train_mode::sync) {
    shard = sync_shard(2, {0.0f});
    coordinator_config cc;
    cc.mode = mode;
    cc.workers = 2;
    cc.replicas_to_aggregate = 2;
    cc.staleness = 1;
    cc.shards = {shard};
    cc.log = logger{"worker:0", log_level::info, out, err};
    coordinator = spawn_sync_coordinator(*sys, cc);
  }

  ~joiners_fixture() {
    for (const auto& a : members) (*chief)->send_exit(a, caf::exit_reason::user_shutdown);
    (*chief)->send_exit(coordinator, caf::exit_reason::user_shutdown);
    stop(shard);
    std::fclose(out);
    std::fclose(err);
  }

  // A worker actor that joins the coordinator as index and idles.
  caf::actor join(std::uint32_t index) {
    auto w = sys->spawn([=](caf::event_based_actor* self) -> caf::behavior {
      self->send(coordinator, join_atom_v, index);
      return {[](int) {}};
    });
    run();
    members.push_back(w);
    return w;
  }

  std::int64_t step() { return snapshot(shard).step; }
  std::vector<std::string> infos() { return messages_in(out, log_level::info); }
};

}  // namespace

TEST_CASE_FIXTURE(joiners_fixture,
                  "a worker joining mid-round leaves that round at its size; the next one needs "
                  "its gradient too, with a log line") {
  join(0);
  join(1);
  push(shard, 0, 0, {1.0f});  // round 0 has one of its two gradients
  join(2);                    // past the listed workers: a --join node
  REQUIRE(infos().size() == 1);
  CHECK(infos()[0] ==
        "sync_coordinator: a round now needs 3 gradients (3 live workers, 1 joined), from the "
        "next round on");
  push(shard, 0, 1, {1.0f});
  CHECK(step() == 1);  // round 0 closed at two gradients: the raise waited for the boundary
  push(shard, 1, 0, {1.0f});
  push(shard, 1, 1, {1.0f});
  CHECK(step() == 1);  // round 1 waits for the joiner
  push(shard, 1, 2, {1.0f});
  CHECK(step() == 2);
}

TEST_CASE_FIXTURE(joiners_fixture,
                  "a worker joining between rounds counts from the round that has not begun") {
  join(0);
  join(1);
  push(shard, 0, 0, {1.0f});
  push(shard, 0, 1, {1.0f});
  REQUIRE(step() == 1);
  join(2);  // no gradient of round 1 is in yet: round 1 is the next round
  push(shard, 1, 0, {1.0f});
  push(shard, 1, 1, {1.0f});
  CHECK(step() == 1);
  push(shard, 1, 2, {1.0f});
  CHECK(step() == 2);
}

TEST_CASE_FIXTURE(joiners_fixture,
                  "a joiner that dies closes the round it held up and the rounds after need one "
                  "gradient fewer, with a log line") {
  join(0);
  join(1);
  auto joiner = join(2);
  push(shard, 0, 0, {1.0f});
  push(shard, 0, 1, {1.0f});
  REQUIRE(step() == 0);  // waiting for the joiner's gradient, which never comes
  caf::anon_send_exit(joiner, caf::exit_reason::kill);
  run();
  CHECK(step() == 1);
  CHECK(infos().back() == "sync_coordinator: a round now needs 2 gradients (2 live workers, 1 joined)");
  push(shard, 1, 0, {1.0f});
  push(shard, 1, 1, {1.0f});
  CHECK(step() == 2);
}

TEST_CASE_FIXTURE(joiners_fixture,
                  "a joiner that leaves still counts for the round of its last gradient, not "
                  "for the rounds after") {
  join(0);
  join(1);
  join(2);
  // A leave counts only from the actor that joined: this joiner sends its own.
  auto leaver = sys->spawn([=](caf::event_based_actor* self) -> caf::behavior {
    self->send(coordinator, join_atom_v, 3u);
    return {[=](leave_atom, std::int64_t last_round) {
      self->send(coordinator, leave_atom_v, 3u, last_round);
    }};
  });
  members.push_back(leaver);
  run();  // worker 3 joined too: rounds need 4
  push(shard, 0, 0, {1.0f});
  push(shard, 0, 1, {1.0f});
  push(shard, 0, 2, {1.0f});
  REQUIRE(step() == 0);
  push(shard, 0, 3, {1.0f});
  REQUIRE(step() == 1);
  push(shard, 1, 3, {1.0f});  // worker 3's last gradient is for round 1
  (*chief)->send(leaver, leave_atom_v, std::int64_t{1});
  run();
  push(shard, 1, 0, {1.0f});
  push(shard, 1, 1, {1.0f});
  CHECK(step() == 1);  // round 1 still needs worker 2's gradient: the leave waits for it
  push(shard, 1, 2, {1.0f});
  CHECK(step() == 2);
  CHECK(infos().back() == "sync_coordinator: a round now needs 3 gradients (3 live workers, 2 joined)");
  push(shard, 2, 0, {1.0f});
  push(shard, 2, 1, {1.0f});
  push(shard, 2, 2, {1.0f});
  CHECK(step() == 3);
}

namespace {

struct ssp_joiners_fixture : joiners_fixture {
  ssp_joiners_fixture() : joiners_fixture(train_mode::ssp) {}
};

// A member under ssp: joins as index, and asks the coordinator for each
// clock the test sends it, the grants landing in *granted.
caf::behavior ssp_member(caf::event_based_actor* self, coordinator_actor coordinator,
                         std::uint32_t index, std::shared_ptr<std::vector<std::int64_t>> granted) {
  self->send(coordinator, join_atom_v, index);
  return {[=](clock_atom, std::int64_t finished) {
    self->request(coordinator, caf::infinite, clock_atom_v, index, finished)
        .then([=](std::int64_t g) { granted->push_back(g); });
  }};
}

}  // namespace

TEST_CASE_FIXTURE(ssp_joiners_fixture,
                  "under ssp a joiner starts at the slowest live clock: it is let through at "
                  "once and holds the others to the bound from there") {
  auto g0 = std::make_shared<std::vector<std::int64_t>>();
  auto g1 = std::make_shared<std::vector<std::int64_t>>();
  auto g2 = std::make_shared<std::vector<std::int64_t>>();
  auto w0 = sys->spawn(ssp_member, coordinator, 0u, g0);
  auto w1 = sys->spawn(ssp_member, coordinator, 1u, g1);
  members = {w0, w1};
  run();
  for (std::int64_t c = 1; c <= 4; ++c) {
    (*chief)->send(w0, clock_atom_v, c);
    (*chief)->send(w1, clock_atom_v, c);
  }
  run();
  REQUIRE(*g0 == std::vector<std::int64_t>{1, 2, 3, 4});
  auto joiner = sys->spawn(ssp_member, coordinator, 2u, g2);
  members.push_back(joiner);
  run();
  (*chief)->send(joiner, clock_atom_v, std::int64_t{0});  // it has finished no step of its own
  run();
  CHECK(*g2 == std::vector<std::int64_t>{4});  // counted from clock 4, not held at 0
  (*chief)->send(w0, clock_atom_v, std::int64_t{5});
  run();
  CHECK(g0->back() == 5);  // within staleness 1 of the joiner's 4
  (*chief)->send(w0, clock_atom_v, std::int64_t{6});
  run();
  CHECK(g0->back() == 5);  // 6 is two past the joiner and worker 1: held
  (*chief)->send(joiner, clock_atom_v, std::int64_t{5});
  (*chief)->send(w1, clock_atom_v, std::int64_t{5});
  run();
  CHECK(g0->back() == 6);
  CHECK(infos().empty());  // no round size outside sync
}

namespace {

struct async_joiners_fixture : joiners_fixture {
  async_joiners_fixture() : joiners_fixture(train_mode::async) {}
};

}  // namespace

TEST_CASE_FIXTURE(async_joiners_fixture,
                  "outside sync a joiner changes no round size: the coordinator tells the shards "
                  "nothing") {
  join(0);
  join(1);
  join(2);
  // The fixture's shard aggregates two; a size sent for three workers would hold this round.
  push(shard, 0, 0, {1.0f});
  push(shard, 0, 1, {1.0f});
  CHECK(step() == 1);
  CHECK(infos().empty());
}

}  // namespace test_sync_joiners
