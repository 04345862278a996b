// The checkpoint saver's log lines: a save whose step a shard has already
// passed is part of a healthy run (a timed save aims a little past shard 0,
// another shard may be past that), not an ERROR; real failures still are.
#include <doctest/doctest.h>

#include <cstdio>
#include <stdexcept>

#include "actors/checkpoint_saver.hpp"
#include "deterministic_fixture.hpp"
#include "reporting/log.hpp"

namespace test_checkpoint_saver_logs {

using namespace downpour;

namespace {

std::string read_all(std::FILE* f) {
  std::string text;
  std::rewind(f);
  for (int c; (c = std::fgetc(f)) != EOF;) text += static_cast<char>(c);
  return text;
}

struct saver_fixture : downpour::testing::deterministic_fixture {
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  logger log{"worker:0", log_level::debug, out, err};

  ~saver_fixture() {
    std::fclose(out);
    std::fclose(err);
  }

  // An async shard holding one float at offset first of a two-float model.
  shard_actor shard_at(std::size_t first) {
    shard_config c;
    c.mode = train_mode::async;
    c.last_step = 1000;
    auto shard = spawn_parameter_shard(*sys, c);
    shard_init init;
    init.ranges = {first, first + 1};
    init.params.values = to_floats(std::vector<float>{0.0f});
    init.ema.values = to_floats(std::vector<float>{0.0f});
    (*chief)->send(shard, init_atom_v, std::move(init));
    run();
    return shard;
  }

  void push_steps(const shard_actor& shard, std::int64_t steps) {
    for (std::int64_t k = 0; k < steps; ++k) {
      (*chief)->send(shard, push_atom_v, push_msg{k, 0, shared_tensor{std::vector<float>{0.1f}}});
      run();
    }
  }

  saver_actor saver(std::vector<shard_actor> shards, std::size_t floats, checkpoint_writer write) {
    saver_config cfg;
    cfg.shards = std::move(shards);
    cfg.layout = model_layout("test", std::to_string(floats), {{"w", 1, floats, {}, false}});
    cfg.mode = "async";
    cfg.write = std::move(write);
    cfg.last_step = 1000;
    cfg.log = log;
    return spawn_checkpoint_saver(*sys, cfg);
  }

  void end(std::initializer_list<caf::actor> actors) {
    for (const auto& a : actors) (*chief)->send_exit(a, caf::exit_reason::user_shutdown);
    run();
  }
};

checkpoint_writer unused() {
  return [](const checkpoint&) -> std::string { throw std::logic_error("nothing is written"); };
}

}  // namespace

TEST_CASE_FIXTURE(saver_fixture,
                  "a timed save of a step another shard has passed is an INFO line, not an ERROR") {
  auto behind = shard_at(0);
  auto ahead = shard_at(1);
  push_steps(ahead, 20);  // async shards step on their own: 0 and 20
  auto s = saver({behind, ahead}, 2, unused());
  (*chief)->send(s, tick_atom_v);  // aims at shard 0's step + 8, which the other has passed
  run();
  const auto records = parse_log(read_all(out) + read_all(err));
  REQUIRE(records.size() == 1);
  CHECK(records[0].level == log_level::info);
  CHECK(records[0].message.rfind("checkpoint: no checkpoint at step 8: ", 0) == 0);
  CHECK(records[0].message.find("the shard is past step 8") != std::string::npos);
  end({caf::actor_cast<caf::actor>(s), caf::actor_cast<caf::actor>(behind),
       caf::actor_cast<caf::actor>(ahead)});
}

TEST_CASE_FIXTURE(saver_fixture,
                  "a requested save of a passed step is a WARN line; a failed write stays an ERROR") {
  auto shard = shard_at(0);
  push_steps(shard, 5);
  auto s = saver({shard}, 1, [](const checkpoint&) -> std::string {
    throw std::runtime_error("checkpoint: disk full");
  });
  auto passed = std::make_shared<std::optional<errc>>();
  auto failed = std::make_shared<std::optional<errc>>();
  sys->spawn([=](caf::event_based_actor* self) {
    self->request(s, caf::infinite, save_atom_v, std::int64_t{2})
        .then([](std::string&) {}, [=](caf::error& e) { *passed = static_cast<errc>(e.code()); });
    self->request(s, caf::infinite, save_atom_v, std::int64_t{5})
        .then([](std::string&) {}, [=](caf::error& e) { *failed = static_cast<errc>(e.code()); });
  });
  run();
  CHECK(*passed == errc::step_passed);
  CHECK(*failed == errc::save_failed);
  const auto records = parse_log(read_all(err));
  REQUIRE(records.size() == 2);
  CHECK(records[0].level == log_level::warn);
  CHECK(records[0].message.find("no checkpoint at step 2: ") != std::string::npos);
  CHECK(records[1].level == log_level::error);
  CHECK(records[1].message == "checkpoint: disk full");
  CHECK(read_all(out).empty());
  end({caf::actor_cast<caf::actor>(s), caf::actor_cast<caf::actor>(shard)});
}

}  // namespace test_checkpoint_saver_logs
