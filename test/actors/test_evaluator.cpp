// The evaluator on CAF's deterministic scheduler, over real parameter shards:
// the figures it reports against model::evaluate on the same buffers (the
// oracle computed here), the steps it reports at, and what a shard past the
// step or gone does to it. A stand-in supervisor records the reports.
#include <doctest/doctest.h>

#include <memory>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "actors/evaluator.hpp"
#include "data/idx.hpp"
#include "data/libsvm.hpp"
#include "model/builtin.hpp"
#include "model/mlp.hpp"
#include "model/sparse_logreg.hpp"
#include "model/sparse_models.hpp"
#include "model_shards.hpp"

namespace test_evaluator {

using namespace downpour;
using testing::model_values;

namespace {

struct report {
  std::int64_t step = 0;
  double raw = 0, ema = 0;
  bool operator==(const report& o) const { return step == o.step && raw == o.raw && ema == o.ema; }
};

std::ostream& operator<<(std::ostream& os, const report& r) {
  return os << "{" << r.step << ", " << r.raw << ", " << r.ema << "}";
}

std::ostream& operator<<(std::ostream& os, const std::vector<report>& rs) {
  for (const auto& r : rs) os << r << " ";
  return os;
}

// What reached the relays and the supervisor, in order ("snapshot 4", "report 2").
using event_log = std::shared_ptr<std::vector<std::string>>;

caf::behavior fake_supervisor(caf::event_based_actor*, std::shared_ptr<std::vector<report>> seen,
                              event_log events) {
  return {[=](eval_atom, std::int64_t step, double raw, double ema) {
    seen->push_back({step, raw, ema});
    events->push_back("report " + std::to_string(step));
  }};
}

// Passes the evaluator's requests on to a real shard, logging its snapshot requests.
caf::behavior logging_relay(caf::event_based_actor* self, shard_actor shard, std::size_t index,
                            event_log events) {
  return {
      [=](snapshot_atom a, std::int64_t step) {
        events->push_back("shard " + std::to_string(index) + " snapshot " + std::to_string(step));
        return self->delegate(shard, a, step);
      },
      [=](await_atom a, std::int64_t step) { return self->delegate(shard, a, step); },
  };
}

std::vector<float> normal_floats(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// A 4-3-2 MLP and 40 random 2x2 images with random labels.
std::shared_ptr<const model> tiny_mlp() {
  return mlp_model_of("mlp", mlp_spec{4, {3}, 2}, 1e-4f);
}

std::shared_ptr<const dataset> images() {
  std::mt19937 rng(3);
  std::vector<std::uint8_t> pixels(40 * 4), labels(40);
  for (auto& p : pixels) p = static_cast<std::uint8_t>(rng() % 256);
  for (auto& l : labels) l = static_cast<std::uint8_t>(rng() % 2);
  return std::make_shared<idx_images>(2, 2, pixels, labels);
}

struct evaluator_fixture : testing::model_shards_fixture {
  std::shared_ptr<std::vector<report>> reports = std::make_shared<std::vector<report>>();
  std::shared_ptr<std::optional<caf::error>> ended = std::make_shared<std::optional<caf::error>>();
  event_log events = std::make_shared<std::vector<std::string>>();
  caf::actor supervisor = sys->spawn(fake_supervisor, reports, events);

  evaluator_fixture() { others.push_back(supervisor); }

  // Evaluates every `every` steps after start_step, reading through readers
  // (the shards unless told), until last_step; ended gets the reason it stops.
  void start(std::shared_ptr<const model> net, std::shared_ptr<const dataset> data,
             std::int64_t every, std::int64_t start_step, std::int64_t last_step,
             std::optional<std::vector<shard_actor>> readers = std::nullopt) {
    evaluator_config c;
    c.shards = readers ? *readers : shards;
    c.model_size = net->layout().size();
    c.rows = row_tables_of(net->layout(), 0);
    c.net = std::move(net);
    c.validation = std::move(data);
    c.every = every;
    c.last_step = last_step;
    c.supervisor = caf::actor_cast<supervisor_actor>(supervisor);
    auto evaluator = spawn_evaluator<caf::no_spawn_options>(*sys, std::move(c), start_step);
    others.push_back(caf::actor_cast<caf::actor>(evaluator));
    others.push_back(sys->spawn([=, slot = ended](caf::event_based_actor* self) -> caf::behavior {
      self->monitor(evaluator);
      self->set_down_handler([=](caf::down_msg& dm) { *slot = dm.reason; });
      return {[](int) {}};
    }));
    settle();
  }

  // Stand-ins for the shards that log each snapshot request before passing it on.
  std::vector<shard_actor> logging_relays() {
    std::vector<shard_actor> relays;
    for (std::size_t k = 0; k < shards.size(); ++k) {
      others.push_back(sys->spawn(logging_relay, shards[k], k, events));
      relays.push_back(caf::actor_cast<shard_actor>(others.back()));
    }
    return relays;
  }

  // Two shards holding random parameters (their moving averages the same) at `step`.
  void place_random_mlp(const model& net, std::int64_t step) {
    model_values values;
    values.params = normal_floats(net.layout().size(), 1);
    values.ema = values.params;
    values.step = step;
    place(net.layout(), 2, placement_kind::balanced, values);
  }

  std::vector<std::int64_t> reported_steps() const {
    std::vector<std::int64_t> steps;
    for (const auto& r : *reports) steps.push_back(r.step);
    return steps;
  }
};

report oracle(const model& net, const model_values& m, const dataset& data) {
  return {m.step, evaluate(net, m.params.data(), data).overall,
          evaluate(net, m.ema.data(), data).overall};
}

}  // namespace

TEST_CASE_FIXTURE(evaluator_fixture,
                  "the evaluator reports what model::evaluate gives for the parameters and their "
                  "moving averages, at each multiple of its period up to the last step") {
  const auto net = tiny_mlp();
  const auto data = images();
  model_values model;
  model.params = normal_floats(net->layout().size(), 1);
  model.ema = normal_floats(net->layout().size(), 2);
  model.step = 1002;
  place(net->layout(), 2, placement_kind::balanced, model);
  start(net, data, 2, 1001, 1004);
  const report first = oracle(*net, model, *data);
  CHECK(first.raw != first.ema);  // a swap of the two would show
  CHECK(*reports == std::vector<report>{first});
  push_all();  // 1003: not a multiple
  push(0);     // 1004 on shard 0 only: the evaluation waits for shard 1
  CHECK(reports->size() == 1);
  push(1);
  const report second = oracle(*net, testing::after_steps(model, 2), *data);
  CHECK(*reports == std::vector<report>{first, second});
  push_all(2);  // 1006 is past the last step
  CHECK(reports->size() == 2);
  CHECK_FALSE(ended->has_value());
}

TEST_CASE_FIXTURE(evaluator_fixture,
                  "a sparse model is evaluated with its rows read once, one snapshot of each "
                  "shard serving both figures") {
  const auto net =
      make_builtin_model({"logreg", {}, 16, 8}, model_request{data_shape{{0}}, 2, 0.0f, {}});
  model_values model;
  model.params = {0.0f};
  model.ema = {-1.0f};
  model.step = 2;
  const auto row_values = normal_floats(16, 4);
  for (std::uint64_t r = 0; r < 16; ++r) model.rows.keys.push_back(r);
  model.rows.values = row_values;
  // Examples labelled by the held rows' own logit: only the rows read give
  // the raw figure its value.
  const sparse_logreg hashing(16, kFeatureHashSeed);
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  sparse_examples examples;
  for (int i = 0; i < 30; ++i) {
    float logit = 0.0f;
    for (std::uint64_t feature = 0; feature < 100; feature += 1 + rng() % 40) {
      examples.keys.push_back(feature);
      examples.values.push_back(value(rng));
      logit += examples.values.back() * row_values[hashing.row_of(feature)];
    }
    examples.close_example(logit > 0.0f ? 1 : 0);
  }
  const auto data = std::make_shared<libsvm_set>(examples);
  place(net->layout(), 2, placement_kind::balanced, model);
  start(net, data, 2, 1, 2, logging_relays());
  row_tables table(row_tables_of(net->layout(), 0));
  table.load(model.rows);
  const row_source held = [&](const std::vector<std::uint64_t>& keys) { return table.pull(keys); };
  const row_source none = [](const std::vector<std::uint64_t>& keys) {
    return std::vector<float>(keys.size(), 0.0f);
  };
  const report expected{2, evaluate(*net, model.params.data(), held, *data).overall,
                        evaluate(*net, model.ema.data(), held, *data).overall};
  CHECK(expected.raw != evaluate(*net, model.params.data(), none, *data).overall);
  CHECK(expected.raw != expected.ema);
  CHECK(*reports == std::vector<report>{expected});
  CHECK(*events ==
        std::vector<std::string>{"shard 0 snapshot 2", "shard 1 snapshot 2", "report 2"});
}

TEST_CASE_FIXTURE(evaluator_fixture,
                  "the next multiple's snapshot is asked for before an evaluation is computed, so "
                  "shards moving on during it do not make the next one skip") {
  const auto net = tiny_mlp();
  place_random_mlp(*net, 1002);
  start(net, images(), 2, 1001, 1006, logging_relays());
  CHECK(*events == std::vector<std::string>{"shard 0 snapshot 1002", "shard 1 snapshot 1002",
                                            "shard 0 snapshot 1004", "shard 1 snapshot 1004",
                                            "report 1002"});
  push_all(2);
  push_all(2);
  CHECK(reported_steps() == std::vector<std::int64_t>{1002, 1004, 1006});
}

TEST_CASE_FIXTURE(evaluator_fixture,
                  "a shard past the step skips that evaluation and the next multiple after it is "
                  "evaluated, even while shard 0 is behind") {
  const auto net = tiny_mlp();
  place_random_mlp(*net, 1001);
  push(1);
  push(1);  // shard 1 at 1003 has passed 1002; shard 0 stands at 1001
  start(net, images(), 2, 1000, 1010);
  CHECK(reports->empty());
  push(0);
  push(0);
  push(0);
  push(1);
  CHECK(reported_steps() == std::vector<std::int64_t>{1004});
  CHECK_FALSE(ended->has_value());
}

TEST_CASE_FIXTURE(evaluator_fixture,
                  "a shard that is gone ends the evaluator with that shard's error instead of a "
                  "retry without end") {
  const auto net = tiny_mlp();
  place_random_mlp(*net, 1001);
  stop(shards[1]);
  start(net, images(), 2, 1000, 1010);  // settles: the evaluator goes quiet
  REQUIRE(ended->has_value());
  CHECK(**ended == caf::sec::request_receiver_down);
  push(0);
  CHECK(reports->empty());
}

}  // namespace test_evaluator
