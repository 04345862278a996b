// The stop supervisor's ticket count, with local actors: exactly last_step -
// start_step tickets are spent, a push refused by a shard (settle_atom) or
// lost with its worker gives its ticket back, and the end waits until every
// push is answered; an ask after the last ticket waits for one that may come
// back; a batch never pushed while stopping gives its ticket back. The shards' own refusal of pushes past the last step hides none of
// it here: no shard is involved.
#include <doctest/doctest.h>

#include <limits>
#include <optional>

#include "actors/stop_supervisor.hpp"
#include "model/mlp_spec.hpp"
#include "runtime/node/node.hpp"
#include "test_jobs.hpp"
#include "time_bounds.hpp"

namespace test_supervisor_tickets {

using namespace downpour;
using namespace std::chrono_literals;

namespace {

// Writes nothing: the supervisor saves the final step before it tells the end.
saver_actor::behavior_type instant_saver() {
  return {
      [](save_atom, std::int64_t step) { return "model.ckpt-" + std::to_string(step); },
      [](tick_atom) {},
      [](stats_atom) { return caf::make_result(std::string{}, 0.0); },
  };
}

struct fixture {
  options opts = downpour::testing::local_job(2, 1, 100, "");
  node_config cfg{opts, mlp_spec{}.layout("mlp")};
  caf::actor_system sys{cfg};
  caf::scoped_actor self{sys};

  supervisor_actor supervisor(std::int64_t start, std::int64_t last) {
    progress_config progress;
    progress.last_step = last;
    progress.quiet = true;
    supervisor_config c;
    c.start_step = start;
    c.last_step = last;
    c.progress = progress;
    c.workers = 2;
    c.saver = sys.spawn(instant_saver);
    return spawn_stop_supervisor(sys, std::move(c));
  }

  static std::int64_t ticket(caf::scoped_actor& asker, const supervisor_actor& s,
                             std::uint32_t worker) {
    std::int64_t got = -2;
    asker->request(s, testing::scaled(5s), ticket_atom_v, worker, 0.5f)
        .receive([&](std::int64_t t) { got = t; }, [&](caf::error&) { got = -3; });
    return got;
  }

  std::int64_t end(const supervisor_actor& s) {
    std::int64_t step = -2;
    self->request(s, testing::scaled(5s), end_atom_v)
        .receive([&](std::int64_t at, float, std::string&) { step = at; },
                 [&](caf::error&) { step = -3; });
    return step;
  }
};

}  // namespace

TEST_CASE_FIXTURE(fixture, "two workers get exactly last_step - start_step tickets between them, "
                           "then -1, and the job ends at the last step") {
  auto sup = supervisor(3, 20);
  caf::scoped_actor other{sys};
  std::int64_t tickets = 0;
  for (bool over = false; !over;) {
    over = true;
    for (auto* w : {&self, &other}) {
      auto t = ticket(*w, sup, w == &self ? 0 : 1);
      REQUIRE(t >= -1);
      if (t < 0) continue;
      over = false;
      ++tickets;
      (*w)->send(sup, settle_atom_v, std::uint32_t{0}, std::int64_t{0});
    }
  }
  CHECK(tickets == 17);
  self->send(sup, done_atom_v, std::uint32_t{0});
  other->send(sup, done_atom_v, std::uint32_t{1});
  CHECK(end(sup) == 20);
  self->send_exit(sup, caf::exit_reason::user_shutdown);
}

TEST_CASE_FIXTURE(fixture, "a push refused by a shard gives its ticket back: the job needs one "
                           "more ticket for each and still ends at the last step") {
  auto sup = supervisor(0, 10);
  std::int64_t tickets = 0;
  for (auto t = ticket(self, sup, 0); t >= 0; t = ticket(self, sup, 0)) {
    ++tickets;
    const std::int64_t refused = (tickets % 4 == 0) ? 1 : 0;  // tickets 4, 8 and 12
    self->send(sup, settle_atom_v, std::uint32_t{0}, refused);
  }
  CHECK(tickets == 13);
  self->send(sup, done_atom_v, std::uint32_t{0});
  CHECK(end(sup) == 10);
  self->send_exit(sup, caf::exit_reason::user_shutdown);
}

TEST_CASE_FIXTURE(fixture, "a worker that dies with pushes not yet answered gives back every "
                           "ticket they carried, even after asking for the next") {
  auto sup = supervisor(0, 10);
  {
    caf::scoped_actor doomed{sys};
    CHECK(ticket(doomed, sup, 1) == 0);
    // Asking again said nothing of the push of ticket 0: in a partition it
    // may reach one ps and be lost on the way to the other.
    CHECK(ticket(doomed, sup, 1) == 1);
  }  // gone with neither push answered: the down returns both tickets
  std::int64_t tickets = 0;
  for (auto t = ticket(self, sup, 0); t >= 0; t = ticket(self, sup, 0)) {
    ++tickets;
    self->send(sup, settle_atom_v, std::uint32_t{0}, std::int64_t{0});
  }
  CHECK(tickets == 10);
  self->send(sup, done_atom_v, std::uint32_t{0});
  CHECK(end(sup) == 10);
  self->send_exit(sup, caf::exit_reason::user_shutdown);
}

TEST_CASE_FIXTURE(fixture, "a bad batch reported while stopping gives its ticket back: the stop "
                           "step counts only the pushes made") {
  auto sup = supervisor(0, 100);
  for (std::int64_t want : {0, 1}) {
    CHECK(ticket(self, sup, 0) == want);
    self->send(sup, settle_atom_v, std::uint32_t{0}, std::int64_t{0});
  }
  CHECK(ticket(self, sup, 0) == 2);  // computed on, never pushed: its batch is not finite
  self->send(sup, stop_atom_v, std::string{"SIGTERM"});
  caf::error verdict;
  self->request(sup, testing::scaled(5s), diverged_atom_v, std::uint32_t{0}, std::int64_t{2},
                std::numeric_limits<float>::quiet_NaN())
      .receive([](std::int64_t) {}, [&](caf::error& err) { verdict = std::move(err); });
  CHECK(verdict == errc::interrupted);  // not diverged: --max-bad-batches is 0 here
  self->send(sup, done_atom_v, std::uint32_t{0});
  CHECK(end(sup) == 2);
  self->send_exit(sup, caf::exit_reason::user_shutdown);
}

TEST_CASE_FIXTURE(fixture, "an ask after the last ticket waits while a push is unanswered, and "
                           "gets the tickets of a worker that dies holding them: the job ends "
                           "at the last step") {
  auto sup = supervisor(0, 4);
  std::optional<caf::scoped_actor> doomed{sys};
  CHECK(ticket(*doomed, sup, 1) == 0);
  CHECK(ticket(*doomed, sup, 1) == 1);
  for (std::int64_t want : {2, 3}) {
    CHECK(ticket(self, sup, 0) == want);
    self->send(sup, settle_atom_v, std::uint32_t{0}, std::int64_t{0});
  }
  // Tickets 0 and 1 are unanswered: -1 now would send worker 0 away before
  // they come back, and no one would be left to take them.
  auto waiting = self->request(sup, testing::scaled(5s), ticket_atom_v, std::uint32_t{0}, 0.5f);
  doomed.reset();  // gone with both pushes unanswered: the down returns both tickets
  std::int64_t got = -2;
  std::move(waiting).receive([&](std::int64_t t) { got = t; },
                            [&](caf::error& e) { got = -3; MESSAGE(sys.render(e)); });
  CHECK(got == 2);
  self->send(sup, settle_atom_v, std::uint32_t{0}, std::int64_t{0});
  CHECK(ticket(self, sup, 0) == 3);
  self->send(sup, settle_atom_v, std::uint32_t{0}, std::int64_t{0});
  CHECK(ticket(self, sup, 0) == -1);
  self->send(sup, done_atom_v, std::uint32_t{0});
  CHECK(end(sup) == 4);
  self->send_exit(sup, caf::exit_reason::user_shutdown);
}

TEST_CASE_FIXTURE(fixture, "an ask waiting after the last ticket hears a stop as the stop") {
  auto sup = supervisor(0, 2);
  caf::scoped_actor other{sys};
  CHECK(ticket(other, sup, 1) == 0);
  CHECK(ticket(self, sup, 0) == 1);
  self->send(sup, settle_atom_v, std::uint32_t{0}, std::int64_t{0});
  auto waiting = self->request(sup, testing::scaled(5s), ticket_atom_v, std::uint32_t{0}, 0.5f);
  other->send(sup, stop_atom_v, std::string{"SIGTERM"});
  caf::error heard;
  std::move(waiting).receive([](std::int64_t) {}, [&](caf::error& e) { heard = std::move(e); });
  CHECK(heard == errc::interrupted);
  other->send(sup, settle_atom_v, std::uint32_t{1}, std::int64_t{0});
  self->send(sup, done_atom_v, std::uint32_t{0});
  other->send(sup, done_atom_v, std::uint32_t{1});
  CHECK(end(sup) == 2);
  self->send_exit(sup, caf::exit_reason::user_shutdown);
}

}  // namespace test_supervisor_tickets
