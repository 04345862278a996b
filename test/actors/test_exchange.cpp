// The exchange in front of a shard (--trainers K > 1), on CAF's
// deterministic scheduler: what the trainers ready together send the shard
// (one push batch, one pull per step, keys merged), what each trainer gets
// back, when a trainer is not waited for, and that each pushed gradient is
// still its own update at the shard.
#include <doctest/doctest.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "actors/exchange.hpp"
#include "deterministic_fixture.hpp"
#include "log_lines.hpp"

namespace test_exchange {

using namespace downpour;

namespace {

constexpr std::uint64_t kRows = 1000;

// One row variable of kRows keys, one float each.
row_space one_column() {
  row_variable_info v;
  v.name = "w";
  v.rows = kRows;
  v.cols = 1;
  return row_space({v});
}

// Each key's row reads as the key itself.
floats rows_of(const std::vector<std::uint64_t>& keys) {
  floats out;
  for (const auto k : keys) out.push_back(static_cast<float>(k));
  return out;
}

std::string keys_text(const key_list& keys) {
  std::string out;
  for (const auto k : keys.keys) out += (out.empty() ? "" : ",") + std::to_string(k);
  return out;
}

std::string pull_text(const row_pull& p) {
  std::string out = "rows " + keys_text(p.keys) + " for " + std::to_string(p.worker);
  for (const auto s : p.sharers) out += "+" + std::to_string(s);
  return out;
}

using message_log = std::shared_ptr<std::vector<std::string>>;

// A shard that writes down every message it gets and answers at once at
// step 5; a dense pull of a later step it holds until told to release.
// Each batch's workers go to batch_workers ("0,1").
caf::behavior recording_shard(caf::event_based_actor* self, message_log log,
                              std::shared_ptr<std::vector<caf::response_promise>> held,
                              message_log batch_workers) {
  return {
      [=](push_atom, push_batch& b) {
        std::string workers;
        for (const auto& p : b.pushes)
          workers += (workers.empty() ? "" : ",") + std::to_string(p.worker);
        batch_workers->push_back(workers);
        std::string line = "batch of " + std::to_string(b.pushes.size());
        for (const auto& p : b.pull) line += ", " + pull_text(p);
        log->push_back(line);
        push_batch_reply r;
        r.refusals.resize(b.pushes.size());
        r.step = 5;
        for (const auto& p : b.pull) r.pull.emplace_back(5, shared_tensor{}, false,
                                                         tensor{rows_of(p.keys.keys)});
        return r;
      },
      [=](pull_atom, row_pull& p) {
        log->push_back("pull of " + pull_text(p));
        return pull_reply{5, shared_tensor{}, false, tensor{rows_of(p.keys.keys)}};
      },
      [=](pull_atom, std::int64_t min_step) -> caf::result<pull_reply> {
        log->push_back("pull at " + std::to_string(min_step));
        if (min_step <= 5) return pull_reply{5, shared_tensor{std::vector<float>{1.0f}}};
        held->push_back(self->make_response_promise());
        return held->back();
      },
  };
}

push_msg push_of(std::uint32_t worker, std::vector<std::uint64_t> keys) {
  const auto n = keys.size();
  return push_msg{0, worker, shared_tensor{std::vector<float>{0.0f}}, key_list{std::move(keys)},
                  tensor{floats(n, 1.0f)}};
}

push_pull push_pull_of(std::uint32_t worker, std::vector<std::uint64_t> pushed,
                       std::vector<std::uint64_t> next) {
  return push_pull{push_of(worker, std::move(pushed)),
                   row_pull{0, worker, key_list{std::move(next)}}};
}

// Where the exchanges log: a base before the actor system's, so it outlives
// every exchange, whose end writes a line.
struct exchange_log_file {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> lines{std::tmpfile(), &std::fclose};
};

struct exchange_fixture : exchange_log_file, downpour::testing::deterministic_fixture {
  message_log log = std::make_shared<std::vector<std::string>>();
  std::shared_ptr<std::vector<caf::response_promise>> held =
      std::make_shared<std::vector<caf::response_promise>>();
  message_log batch_workers = std::make_shared<std::vector<std::string>>();
  caf::actor fake = sys->spawn(recording_shard, log, held, batch_workers);

  shard_link exchange_for(shard_actor shard, std::size_t trainers = 2) {
    exchange_config c;
    c.shard = std::move(shard);
    c.trainers = trainers;
    c.rows = one_column();
    c.shard_index = 3;
    c.log = logger{"worker:0", log_level::info, lines.get(), lines.get()};
    return spawn_exchange(*sys, std::move(c));
  }

  shard_link exchange() { return exchange_for(caf::actor_cast<shard_actor>(fake)); }

  // What the exchanges logged so far.
  std::string logged() {
    std::fflush(lines.get());
    std::rewind(lines.get());
    std::string out;
    for (int c; (c = std::fgetc(lines.get())) != EOF;) out += static_cast<char>(c);
    return out;
  }

  // A gather timer still pending holds its exchange; the shard's end ends it.
  ~exchange_fixture() {
    sched->trigger_timeouts();
    run();
    caf::anon_send_exit(fake, caf::exit_reason::user_shutdown);
    run();
  }
};

}  // namespace

TEST_CASE_FIXTURE(exchange_fixture,
                  "two trainers' push_pulls ready together reach the shard as one batch whose "
                  "pull names each key once, and each trainer gets the rows of its own keys") {
  auto ex = exchange();
  auto a = request<push_pull_reply>(ex, push_atom_v, push_pull_of(0, {1}, {1, 4}));
  CHECK_FALSE(a->has_value());  // trainer 1 is still computing
  CHECK(log->empty());
  auto b = request<push_pull_reply>(ex, push_atom_v, push_pull_of(1, {2}, {4, 9}));
  CHECK(*log == std::vector<std::string>{"batch of 2, rows 1,4,9 for 0+1"});
  REQUIRE(a->has_value());
  REQUIRE(b->has_value());
  CHECK((*a)->pull.rows.values == rows_of({1, 4}));
  CHECK((*b)->pull.rows.values == rows_of({4, 9}));
  CHECK((*a)->pushed == 5);
  CHECK_FALSE((*a)->refusal);
}

// A trainer that pushes twice, the second push once the first is answered.
caf::behavior twice_pushing(caf::event_based_actor* self, shard_link ex, std::uint32_t worker) {
  self->request(ex, caf::infinite, push_atom_v, push_of(worker, {}))
      .then([=](std::int64_t) {
        self->request(ex, caf::infinite, push_atom_v, push_of(worker, {}))
            .then([=](std::int64_t) { self->quit(); });
      });
  return {[](int) {}};
}

TEST_CASE_FIXTURE(exchange_fixture,
                  "trainers that stay on are gathered round after round, not only the first") {
  auto ex = exchange();
  sys->spawn(twice_pushing, ex, 0u);
  sys->spawn(twice_pushing, ex, 1u);
  run();
  CHECK(*log == std::vector<std::string>{"batch of 2", "batch of 2"});
}

// A trainer that pushes twice without waiting, as an async dense worker
// does (its pushes are not answered before it goes on).
caf::behavior pushing_ahead(caf::event_based_actor* self, shard_link ex, std::uint32_t worker) {
  for (int i = 0; i < 2; ++i)
    self->request(ex, caf::infinite, push_atom_v, push_of(worker, {})).then([](std::int64_t) {});
  return {[](int) {}};
}

TEST_CASE_FIXTURE(exchange_fixture,
                  "a push batch never carries two pushes of one trainer, and the batches keep "
                  "the pushes' order") {
  auto ex = exchange();
  sys->spawn(pushing_ahead, ex, 0u);
  run();
  CHECK(log->empty());  // trainer 1 is still computing
  auto b = request<std::int64_t>(ex, push_atom_v, push_of(1, {}));
  REQUIRE(b->has_value());
  CHECK(*log == std::vector<std::string>{"batch of 1", "batch of 2"});
  CHECK(*batch_workers == std::vector<std::string>{"0", "0,1"});
}

TEST_CASE_FIXTURE(exchange_fixture,
                  "a trainer's request goes alone once the gather time passes without the other") {
  auto ex = exchange();
  auto a = request<pull_reply>(ex, pull_atom_v, row_pull{0, 0, key_list{{3, 7}}});
  CHECK_FALSE(a->has_value());
  sched->trigger_timeouts();
  run();
  CHECK(*log == std::vector<std::string>{"pull of rows 3,7 for 0"});
  REQUIRE(a->has_value());
  CHECK((*a)->rows.values == rows_of({3, 7}));
}

TEST_CASE_FIXTURE(exchange_fixture,
                  "the trainers' pulls of one step take one dense pull and share its answer") {
  auto ex = exchange();
  auto a = request<pull_reply>(ex, pull_atom_v, std::int64_t{3});
  auto b = request<pull_reply>(ex, pull_atom_v, std::int64_t{3});
  CHECK(*log == std::vector<std::string>{"pull at 3"});
  REQUIRE(a->has_value());
  REQUIRE(b->has_value());
  CHECK((*a)->params.buffer == (*b)->params.buffer);
}

TEST_CASE_FIXTURE(exchange_fixture,
                  "a trainer waiting at the shard for a later step is not waited for: the "
                  "other's push goes at once") {
  auto ex = exchange();
  auto a = request<pull_reply>(ex, pull_atom_v, std::int64_t{6});
  sched->trigger_timeouts();  // trainer 1 not seen yet: trainer 0's pull goes alone
  run();
  CHECK(*log == std::vector<std::string>{"pull at 6"});
  CHECK_FALSE(a->has_value());  // held by the shard: a sync barrier
  auto b = request<std::int64_t>(ex, push_atom_v, push_of(1, {}));
  CHECK(*log == std::vector<std::string>{"pull at 6", "batch of 1"});
  REQUIRE(b->has_value());
  CHECK(**b == 5);
  for (auto& rp : *held) rp.deliver(pull_reply{6, shared_tensor{std::vector<float>{2.0f}}});
  run();
  CHECK(a->has_value());
}

TEST_CASE_FIXTURE(exchange_fixture, "an exchange ends with its shard's reason") {
  auto ex = exchange();
  auto reason = std::make_shared<std::optional<caf::error>>();
  caf::actor_cast<caf::abstract_actor*>(ex)->attach_functor(
      [reason](const caf::error& why) { *reason = why; });
  run();
  (*chief)->send_exit(fake, caf::make_error(errc::stopped, "the shard's node ended"));
  run();
  REQUIRE(reason->has_value());
  CHECK(**reason == errc::stopped);
}

TEST_CASE_FIXTURE(exchange_fixture,
                  "through an exchange each trainer's gradient is its own update at the shard, "
                  "and rows no merged pull returned are refused") {
  auto shard = rows_shard(kRows);
  auto ex = exchange_for(shard);
  auto pa = request<pull_reply>(ex, pull_atom_v, row_pull{0, 0, key_list{{1, 2}}});
  auto pb = request<pull_reply>(ex, pull_atom_v, row_pull{0, 1, key_list{{2, 3}}});
  REQUIRE(pa->has_value());
  REQUIRE(pb->has_value());
  CHECK((*pa)->rows.values == floats{0.0f, 0.0f});
  auto a = request<std::int64_t>(ex, push_atom_v, push_of(0, {1, 2}));
  auto b = request<std::int64_t>(ex, push_atom_v, push_of(1, {2, 3}));
  REQUIRE(a->has_value());
  REQUIRE(b->has_value());
  CHECK(**b == 2);  // two updates, not their sum as one
  auto rows = ask<pull_reply>(shard, pull_atom_v, row_pull{0, 2, key_list{{1, 2, 3}}});
  CHECK(rows.rows.values == floats{-0.5f, -1.0f, -0.5f});
  // Trainer 0's pull was pushed for; key 7 was in no pull at all.
  CHECK(push_verdict(shard, push_of(1, {7})).rfind("unpulled_rows: ", 0) == 0);
  stop(shard);
}

TEST_CASE_FIXTURE(exchange_fixture,
                  "an exchange's end line counts its messages, the trainer requests they "
                  "carried, and the pulled keys asked for and sent after dedup") {
  auto ex = exchange();
  auto a = request<push_pull_reply>(ex, push_atom_v, push_pull_of(0, {1}, {1, 4}));
  auto b = request<push_pull_reply>(ex, push_atom_v, push_pull_of(1, {2}, {4, 9}));
  REQUIRE(b->has_value());
  // Both trainers ended with their answers: a third one's pull goes alone.
  auto c = request<pull_reply>(ex, pull_atom_v, row_pull{0, 2, key_list{{3, 7}}});
  REQUIRE(c->has_value());
  CHECK(downpour::testing::exchange_stats_of(logged()).empty());  // not before its end
  (*chief)->send_exit(fake, caf::make_error(errc::stopped, "the shard's node ended"));
  run();
  const auto stats = downpour::testing::exchange_stats_of(logged());
  REQUIRE(stats.size() == 1);
  CHECK(stats[0].shard == 3);
  CHECK(stats[0].messages == 2);    // one push batch, one pull
  CHECK(stats[0].requests == 3);
  CHECK(stats[0].keys_asked == 6);  // 1,4 and 4,9; 3,7
  CHECK(stats[0].keys_sent == 5);   // 1,4,9; 3,7
}

}  // namespace test_exchange
