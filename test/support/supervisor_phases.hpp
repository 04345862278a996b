// The stop supervisor on CAF's deterministic scheduler with stand-ins for
// the shards, the saver, the coordinator and a worker that record what it
// asked and hold every answer until the test gives it (the chief's phase
// tests: test_chief_phases.cpp, test_chief_phases_edges.cpp).
#pragma once

#include <doctest/doctest.h>

#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

#include "actors/chief_phase.hpp"
#include "actors/stop_supervisor.hpp"
#include "actors/supervisor_state.hpp"
#include "deterministic_fixture.hpp"

using namespace downpour;
using phase = chief_phase;

namespace downpour::testing {

// A held answer is given by the stand-in that holds it, inside its own
// handler: a promise delivered from outside an actor has no execution
// context on the test scheduler.
using answer_atom = caf::atom_constant<caf::atom("answer")>;

// What the stand-ins saw, and the answers they hold.
struct seen {
  std::vector<std::pair<std::size_t, std::int64_t>> awaits;  // (shard, target)
  std::vector<caf::response_promise> await_answers;
  std::vector<std::int64_t> saves;
  std::vector<caf::response_promise> save_answers;
  std::vector<std::int64_t> tickets;  // the worker's: a ticket, or -100 - the error code
  std::vector<std::int64_t> verdicts;
  std::optional<std::tuple<std::int64_t, float, std::string>> end;
  caf::error end_error;
};

inline std::int64_t code_of(const caf::error& err) {
  return -100 - static_cast<std::int64_t>(err.code());
}

constexpr auto recovering_code = -100 - static_cast<std::int64_t>(errc::recovering);
constexpr auto interrupted_code = -100 - static_cast<std::int64_t>(errc::interrupted);
constexpr auto diverged_code = -100 - static_cast<std::int64_t>(errc::diverged);

inline caf::behavior fake_shard(caf::event_based_actor* self, std::shared_ptr<seen> s, std::size_t k) {
  return {
      [=](answer_atom, std::size_t i, std::int64_t x) { s->await_answers.at(i).deliver(x); },
      [=](join_atom) {},
      [=](await_atom, std::int64_t target) {
        s->awaits.emplace_back(k, target);
        s->await_answers.push_back(self->make_response_promise());
        return s->await_answers.back();
      },
  };
}

inline caf::behavior fake_saver(caf::event_based_actor* self, std::shared_ptr<seen> s) {
  return {
      [=](answer_atom, std::size_t i) { s->save_answers.at(i).deliver(std::string{"saved"}); },
      [=](answer_atom, std::size_t i, caf::error& err) { s->save_answers.at(i).deliver(err); },
      [=](save_atom, std::int64_t step) {
        s->saves.push_back(step);
        s->save_answers.push_back(self->make_response_promise());
        return s->save_answers.back();
      },
  };
}

inline caf::behavior fake_coordinator(caf::event_based_actor*) {
  return {[](hello_atom, const caf::node_id&) {}};
}

// Worker 0, on the test's command: asks for a ticket, reports a bad batch,
// says done. It lives on, so the supervisor's watch on it stays quiet.
inline caf::behavior fake_worker(caf::event_based_actor* self, std::shared_ptr<seen> s,
                          supervisor_actor sup) {
  auto record = [](std::vector<std::int64_t>& into) {
    return std::make_pair([&into](std::int64_t x) { into.push_back(x); },
                          [&into](caf::error& err) { into.push_back(code_of(err)); });
  };
  return {
      [=](ticket_atom) {
        auto err = record(s->tickets).second;
        // Every shard accepts its push at once: the ticket is settled.
        auto ok = [=](std::int64_t t) {
          s->tickets.push_back(t);
          if (t >= 0) self->send(sup, settle_atom_v, std::uint32_t{0}, std::int64_t{0});
        };
        self->request(sup, caf::infinite, ticket_atom_v, std::uint32_t{0}, 0.25f).then(ok, err);
      },
      [=](diverged_atom, std::int64_t step) {
        auto [ok, err] = record(s->verdicts);
        self->request(sup, caf::infinite, diverged_atom_v, std::uint32_t{0}, step,
                      std::numeric_limits<float>::infinity())
            .then(ok, err);
      },
      [=](done_atom) { self->send(sup, done_atom_v, std::uint32_t{0}); },
  };
}

struct supervisor_fixture : downpour::testing::deterministic_fixture {
  std::shared_ptr<seen> s = std::make_shared<seen>();
  std::vector<caf::actor> shards;
  caf::actor saver = sys->spawn(fake_saver, s);
  caf::actor coordinator = sys->spawn(fake_coordinator);
  supervisor_actor sup;
  caf::actor worker;

  void start(train_mode mode, std::int64_t start_step, std::int64_t last_step,
             std::int64_t max_bad_batches = 0) {
    shards = {sys->spawn(fake_shard, s, std::size_t{0}), sys->spawn(fake_shard, s, std::size_t{1})};
    supervisor_config c;
    c.fingerprint = "fp";
    c.start_step = start_step;
    c.last_step = last_step;
    for (auto& k : shards) c.shards.push_back(caf::actor_cast<shard_actor>(k));
    c.progress.start_step = start_step;
    c.progress.last_step = last_step;
    c.progress.quiet = true;
    c.mode = mode;
    c.coordinator = caf::actor_cast<coordinator_actor>(coordinator);
    c.saver = caf::actor_cast<saver_actor>(saver);
    c.workers = 1;
    c.log = logger{"chief", log_level::error};
    c.max_bad_batches = max_bad_batches;
    sup = spawn_stop_supervisor(*sys, std::move(c));
    worker = sys->spawn(fake_worker, s, sup);
    run();
  }

  phase now() {
    auto ptr = caf::actor_cast<caf::abstract_actor*>(sup);
    return dynamic_cast<supervisor_actor::stateful_base<stop_supervisor_state>&>(*ptr)
        .state.life.phase();
  }

  void tell(const caf::actor& whom, caf::message m) {
    (*chief)->send(whom, std::move(m));
    run();
  }
  void ticket() { tell(worker, caf::make_message(ticket_atom_v)); }
  void done() { tell(worker, caf::make_message(done_atom_v)); }
  void answer_await(std::size_t i, std::int64_t x) {
    tell(shards.at(s->awaits.at(i).first), caf::make_message(answer_atom::value, i, x));
  }
  void answer_save(std::size_t i) { tell(saver, caf::make_message(answer_atom::value, i)); }
  void refuse_save(std::size_t i, caf::error err) {
    tell(saver, caf::make_message(answer_atom::value, i, std::move(err)));
  }
  void stop(const std::string& why) {
    (*chief)->send(sup, stop_atom_v, why);
    run();
  }

  void lose_shard(std::size_t k) {
    (*chief)->send_exit(shards[k], caf::exit_reason::kill);
    run();
  }

  // Shard k started again, every shard restored at step: the supervisor's answer.
  std::int64_t restore(std::size_t k, std::int64_t step) {
    shards[k] = sys->spawn(fake_shard, s, k);
    recovery_plan plan;
    plan.step = step;
    for (auto& shard : shards) plan.shards.push_back(caf::actor_cast<shard_actor>(shard));
    plan.coordinator = caf::actor_cast<coordinator_actor>(coordinator);
    plan.saver = caf::actor_cast<saver_actor>(saver);
    return ask<std::int64_t>(sup, restore_atom_v, plan);
  }

  // The chief's end request; its answer lands in s->end or s->end_error.
  void ask_end() {
    auto target = sup;
    auto out = s;
    sys->spawn([=](caf::event_based_actor* self) {
      self->request(target, caf::infinite, end_atom_v)
          .then([=](std::int64_t step, float loss,
                    std::string& why) { out->end = std::make_tuple(step, loss, why); },
                [=](caf::error& err) { out->end_error = err; });
    });
    run();
  }

  ~supervisor_fixture() {
    for (auto a : {caf::actor_cast<caf::actor>(sup), saver, coordinator, worker})
      (*chief)->send_exit(a, caf::exit_reason::user_shutdown);
    for (auto& k : shards) (*chief)->send_exit(k, caf::exit_reason::user_shutdown);
    run();
  }
};

}  // namespace downpour::testing
