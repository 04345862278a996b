// The checkpoint saver on CAF's deterministic scheduler, over real parameter
// shards: what it writes (through a writer that records the checkpoints it is
// given), at which step, and how each failure is answered.
#include <doctest/doctest.h>

#include <chrono>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "actors/checkpoint_saver.hpp"
#include "model_shards.hpp"

namespace test_checkpoint_saver {

using namespace downpour;
using namespace std::chrono_literals;

namespace {

variable_spec variable(std::string name, std::size_t rows, std::size_t cols,
                       storage store = storage::dense) {
  return variable_spec{std::move(name), rows, cols, initializer{}, false, store};
}

// Four variables round-robin on two shards: each shard holds two parts.
model_layout dense_layout() {
  return model_layout("mlp", "3-2-1",
                      {variable("layer1/weights", 3, 2), variable("layer1/biases", 1, 2),
                       variable("layer2/weights", 2, 1), variable("layer2/biases", 1, 1)});
}

model_layout sparse_layout() {
  return model_layout("logreg", "16",
                      {variable("bias", 1, 1), variable("weights", 16, 1, storage::rows)});
}

// Every value tells where it sits: params 100.25 + i, shadows 200.5 + i.
testing::model_values positional(std::size_t n) {
  testing::model_values m;
  for (std::size_t i = 0; i < n; ++i) {
    m.params.push_back(100.25f + static_cast<float>(i));
    m.ema.push_back(200.5f + static_cast<float>(i));
  }
  return m;
}

template <class A, class B>
bool same_bits(const A& a, const B& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

struct saver_fixture : testing::model_shards_fixture {
  model_layout layout = dense_layout();
  std::shared_ptr<std::vector<checkpoint>> written = std::make_shared<std::vector<checkpoint>>();
  saver_actor saver;

  // Records what it is given and names it as save_checkpoint would.
  checkpoint_writer recorder() const {
    return [w = written](const checkpoint& c) {
      w->push_back(c);
      return "dir/model.ckpt-" + std::to_string(c.global_step);
    };
  }

  saver_config config() const {
    saver_config c;
    c.shards = shards;
    c.layout = layout;
    c.mode = "ssp";
    c.write = recorder();
    c.last_step = 100;
    c.log = test_log();
    return c;
  }

  void start(saver_config c) {
    saver = spawn_checkpoint_saver(*sys, std::move(c));
    others.push_back(caf::actor_cast<caf::actor>(saver));
    run();
  }

  void start() { start(config()); }

  std::shared_ptr<testing::answer_slot<std::string>> save(std::int64_t step) {
    return answer<std::string>(saver, save_atom_v, step);
  }

  // The saver's stats: the newest checkpoint written and its time.
  std::pair<std::string, double> newest() {
    auto seen = std::make_shared<std::pair<std::string, double>>("no answer", -1.0);
    others.push_back(sys->spawn([=, s = saver](caf::event_based_actor* self) {
      self->request(s, caf::infinite, stats_atom_v).then([=](std::string& path, double time) {
        *seen = {path, time};
      });
    }));
    run();
    return *seen;
  }

  std::vector<std::int64_t> written_steps() const {
    std::vector<std::int64_t> steps;
    for (const auto& c : *written) steps.push_back(c.global_step);
    return steps;
  }

  // The lines the saver logged at a level.
  std::vector<std::string> logged_at(log_level level) const {
    std::vector<std::string> lines;
    for (const auto& r : logged())
      if (r.level == level) lines.push_back(r.message);
    return lines;
  }
  std::vector<std::string> errors_logged() const { return logged_at(log_level::error); }
};

}  // namespace

TEST_CASE_FIXTURE(saver_fixture,
                  "a save snapshots every shard and writes exactly the assembled checkpoint") {
  const auto model = positional(layout.size());
  place(layout, 2, placement_kind::round_robin, model);
  start();
  auto answer = save(0);
  REQUIRE(answer->value);
  CHECK(*answer->value == "dir/model.ckpt-0");
  REQUIRE(written->size() == 1);
  const checkpoint& c = written->front();
  CHECK(c.layout == layout);
  CHECK(c.global_step == 0);
  CHECK(c.mode == "ssp");
  CHECK(same_bits(c.params, model.params));
  CHECK(same_bits(c.ema, model.ema));
  CHECK(c.rows.keys.empty());
  CHECK(c.wall_time > 1.6e9);
  CHECK(newest() == std::make_pair(std::string{"dir/model.ckpt-0"}, c.wall_time));
}

TEST_CASE_FIXTURE(saver_fixture,
                  "a save asked before the shards reach its step writes the model after exactly "
                  "that step") {
  const auto model = positional(layout.size());
  place(layout, 2, placement_kind::round_robin, model);
  start();
  auto answer = save(2);
  push_all();
  push(1);  // shard 1 answers first: its parts still land where they belong
  CHECK(written->empty());
  CHECK_FALSE(answer->answered());
  push(0);
  push_all();  // a third step, after the snapshot
  REQUIRE(answer->value);
  REQUIRE(written->size() == 1);
  const auto expected = testing::after_steps(model, 2);
  CHECK(written->front().global_step == 2);
  CHECK(same_bits(written->front().params, expected.params));
  CHECK(same_bits(written->front().ema, expected.ema));
}

TEST_CASE_FIXTURE(saver_fixture,
                  "a sparse model's checkpoint holds every shard's rows, keys ascending, with "
                  "their accumulators") {
  layout = sparse_layout();
  auto model = positional(layout.size());
  model.rows = row_dump{{1, 6, 9, 15}, {0.5f, -1.5f, 2.25f, 3.0f}, {0.125f, 0.25f, 0.375f, 0.5f}};
  place(layout, 2, placement_kind::balanced, model, update_rule::adagrad);
  start();
  auto answer = save(1);
  push(1);  // the shard of rows 8..15 answers first
  CHECK(written->empty());
  push(0);
  REQUIRE(answer->value);
  REQUIRE(written->size() == 1);
  const checkpoint& c = written->front();
  CHECK(c.layout == layout);
  CHECK(c.params == std::vector<float>{99.75f});  // the dense bias after its step
  CHECK(c.rows.keys == model.rows.keys);
  CHECK(c.rows.values == model.rows.values);
  CHECK(c.rows.accumulators == model.rows.accumulators);
}

TEST_CASE_FIXTURE(saver_fixture,
                  "a save at a step a shard has passed fails with step_passed and writes nothing") {
  place(layout, 2, placement_kind::round_robin, positional(layout.size()));
  start();
  push(1);
  auto answer = save(0);  // shard 0 is at step 0 and answers; shard 1 is at 1
  REQUIRE(answer->error);
  CHECK(answer->error == errc::step_passed);
  CHECK(sys->render(answer->error).find("the shard is past step 0") != std::string::npos);
  CHECK(written->empty());
  // A passed step is part of a healthy run: a requested save warns, it is no error.
  CHECK(errors_logged().empty());
  const auto warnings = logged_at(log_level::warn);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].rfind("checkpoint: no checkpoint at step 0: ", 0) == 0);
  CHECK(newest().first.empty());
}

TEST_CASE_FIXTURE(saver_fixture,
                  "a save fails with the error of a shard that is gone or restored and writes "
                  "nothing") {
  place(layout, 2, placement_kind::round_robin, positional(layout.size()));
  start();
  auto waiting = save(3);
  (*chief)->send(shards[1], restore_atom_v, inits[1]);  // recovery: pending snapshots fail
  run();
  REQUIRE(waiting->error);
  CHECK(waiting->error == errc::restored);
  push_all(3);  // shard 0's answer at step 3 finds the save already failed
  CHECK(written->empty());
  stop(shards[1]);
  auto gone = save(3);
  REQUIRE(gone->error);
  CHECK(gone->error == caf::sec::request_receiver_down);
  CHECK(written->empty());
}

TEST_CASE_FIXTURE(saver_fixture,
                  "a writer that throws is answered with save_failed and its message, logged, "
                  "and the next save is written") {
  place(layout, 2, placement_kind::round_robin, positional(layout.size()));
  auto c = config();
  auto calls = std::make_shared<int>(0);
  c.write = [calls, record = recorder()](const checkpoint& ckpt) -> std::string {
    ++*calls;
    if (*calls == 1) throw std::runtime_error("checkpoint: dir/model.ckpt-0: disk full");
    if (*calls == 2) throw std::bad_alloc();  // not a runtime_error: still answered
    return record(ckpt);
  };
  start(std::move(c));
  auto failed = save(0);
  REQUIRE(failed->error);
  CHECK(failed->error == errc::save_failed);
  CHECK(sys->render(failed->error).find("checkpoint: dir/model.ckpt-0: disk full") !=
        std::string::npos);
  CHECK(errors_logged() == std::vector<std::string>{"checkpoint: dir/model.ckpt-0: disk full"});
  auto no_memory = save(0);
  REQUIRE(no_memory->error);
  CHECK(no_memory->error == errc::save_failed);
  CHECK(newest().first.empty());
  auto next = save(0);
  REQUIRE(next->value);
  CHECK(*next->value == "dir/model.ckpt-0");
  CHECK(written_steps() == std::vector<std::int64_t>{0});
}

TEST_CASE_FIXTURE(saver_fixture,
                  "saves asked while others wait are neither merged nor refused: each is written "
                  "at its own step, in step order") {
  place(layout, 2, placement_kind::round_robin, positional(layout.size()));
  start();
  auto later = save(2), sooner = save(1), again = save(2);
  CHECK(written->empty());
  push_all(2);
  REQUIRE(sooner->value);
  REQUIRE(later->value);
  REQUIRE(again->value);
  CHECK(*sooner->value == "dir/model.ckpt-1");
  CHECK(*later->value == "dir/model.ckpt-2");
  CHECK(*again->value == "dir/model.ckpt-2");
  CHECK(written_steps() == std::vector<std::int64_t>{1, 2, 2});
  CHECK(newest().first == "dir/model.ckpt-2");
}

TEST_CASE_FIXTURE(saver_fixture,
                  "a model that is not finite is never written: the save fails with diverged") {
  auto model = positional(layout.size());
  model.ema[7] = std::numeric_limits<float>::quiet_NaN();
  place(layout, 2, placement_kind::round_robin, model);
  start();
  auto answer = save(0);
  REQUIRE(answer->error);
  CHECK(answer->error == errc::diverged);
  CHECK(sys->render(answer->error).find("not saved at global step 0") != std::string::npos);
  CHECK(written->empty());
}

TEST_CASE_FIXTURE(saver_fixture,
                  "a timed save aims a few steps past shard 0, never past the last step, and is "
                  "skipped once that step is saved") {
  place(layout, 2, placement_kind::round_robin, positional(layout.size()));
  auto c = config();
  c.every_secs = 30;
  c.last_step = 12;
  start(std::move(c));
  push_all(3);
  sched->advance_time(30s);
  run();
  push_all(7);  // step 10: the save waits for 3 + 8
  CHECK(written->empty());
  push_all();
  CHECK(written_steps() == std::vector<std::int64_t>{11});
  push_all();
  sched->advance_time(30s);  // at 12: 12 + 8 is past the last step, 12 is aimed at
  run();
  CHECK(written_steps() == std::vector<std::int64_t>{11, 12});
  sched->advance_time(30s);  // 12 again: already saved
  run();
  CHECK(written_steps() == std::vector<std::int64_t>{11, 12});
}

TEST_CASE_FIXTURE(saver_fixture,
                  "step-count saves are written at every multiple before the last step and at no "
                  "other") {
  place(layout, 2, placement_kind::round_robin, positional(layout.size()));
  auto c = config();
  c.every_steps = 2;
  c.last_step = 6;  // 6 itself is the chief's final save
  start(std::move(c));
  push_all(6);
  CHECK(written_steps() == std::vector<std::int64_t>{2, 4});
  const auto at_4 = testing::after_steps(positional(layout.size()), 4);
  CHECK(same_bits(written->back().params, at_4.params));
}

}  // namespace test_checkpoint_saver
