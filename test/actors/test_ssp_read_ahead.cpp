// The ssp coordinator's clock for a pipelined worker, which reads its next
// step's rows before it pushes the step in hand: that read is admitted only
// once the step it is for is within --staleness of the slowest live worker.
#include <doctest/doctest.h>

#include <memory>
#include <vector>

#include "actors/sync_coordinator.hpp"
#include "deterministic_fixture.hpp"

namespace test_ssp_read_ahead {

using namespace downpour;

TEST_CASE_FIXTURE(downpour::testing::deterministic_fixture,
                  "ssp admits a read ahead only once the step it is for is within the bound") {
  coordinator_config cc;
  cc.mode = train_mode::ssp;
  cc.workers = 2;
  cc.staleness = 1;
  auto coordinator = spawn_sync_coordinator(*sys, cc);
  auto slow = sys->spawn([=](caf::event_based_actor* self) -> caf::behavior {
    self->send(coordinator, join_atom_v, 1u);
    return {[=](std::int64_t c) {
      self->request(coordinator, caf::infinite, clock_atom_v, 1u, c).then([](std::int64_t) {});
    }};
  });
  run();  // worker 1 has joined at clock 0
  auto granted = std::make_shared<std::vector<std::int64_t>>();
  // Worker 0 finished 0 steps and reads for step 1 (1 ahead of worker 1:
  // allowed), then finished 1 and reads for step 2 (2 ahead: held).
  auto fast = sys->spawn([=](caf::event_based_actor* self) -> caf::behavior {
    self->send(coordinator, join_atom_v, 0u);
    for (std::int64_t c = 0; c < 2; ++c)
      self->request(coordinator, caf::infinite, clock_atom_v, 0u, c, c + 1)
          .then([=](std::int64_t g) { granted->push_back(g); });
    return {[](int) {}};
  });
  run();
  CHECK(*granted == std::vector<std::int64_t>{1});
  caf::anon_send(slow, std::int64_t{1});  // worker 1 finishes a step
  run();
  CHECK(*granted == std::vector<std::int64_t>{1, 2});
  for (auto a : {caf::actor_cast<caf::actor>(coordinator), fast, slow})
    (*chief)->send_exit(a, caf::exit_reason::user_shutdown);
  run();
}

}  // namespace test_ssp_read_ahead
