#include "reporting/status_json.hpp"

#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace downpour {
namespace {

using json = nlohmann::ordered_json;

json number(double x) {
  return std::isfinite(x) ? json(x) : json();
}

double number_of(const json& j, const char* key) {
  const json& v = j.at(key);
  return v.is_null() ? std::nan("") : v.get<double>();
}

json shard_json(std::size_t index, const shard_facts& s) {
  json j{{"index", index}, {"reachable", s.reachable}};
  json ranges = json::array();
  std::uint64_t floats = 0;
  for (std::size_t i = 0; i + 1 < s.ranges.size(); i += 2) {
    ranges.push_back({s.ranges[i], s.ranges[i] + s.ranges[i + 1]});
    floats += s.ranges[i + 1];
  }
  j["ranges"] = ranges;
  j["floats"] = floats;
  j["step"] = s.step;
  j["dropped"] = s.dropped;
  j["rejected"] = s.rejected;
  j["replayed"] = s.replayed;
  j["rows_held"] = s.rows_held;
  j["keys_pulled_per_s"] = s.keys_pulled_per_s;
  j["keys_pushed_per_s"] = s.keys_pushed_per_s;
  return j;
}

shard_facts shard_from(const json& j) {
  shard_facts s;
  s.reachable = j.at("reachable").get<bool>();
  for (const auto& r : j.at("ranges")) {
    const auto begin = r.at(0).get<std::uint64_t>();
    s.ranges.push_back(begin);
    s.ranges.push_back(r.at(1).get<std::uint64_t>() - begin);
  }
  s.step = j.at("step").get<std::int64_t>();
  s.dropped = j.at("dropped").get<std::int64_t>();
  s.rejected = j.at("rejected").get<std::int64_t>();
  s.replayed = j.at("replayed").get<std::int64_t>();
  s.rows_held = j.value("rows_held", std::uint64_t{0});
  s.keys_pulled_per_s = j.value("keys_pulled_per_s", std::uint64_t{0});
  s.keys_pushed_per_s = j.value("keys_pushed_per_s", std::uint64_t{0});
  return s;
}

json validation_json(const std::optional<validation_facts>& v) {
  if (!v) return json();
  return json{{"global_step", v->global_step},
              {"accuracy", number(v->accuracy)},
              {"ema_accuracy", number(v->ema_accuracy)}};
}

std::int64_t dropped_total(const status_facts& f) {
  std::int64_t dropped = 0;
  for (const auto& s : f.shards) dropped += s.dropped;
  return dropped;
}

// Passes counted from 1, as the workers' log lines name them.
json input_json(const std::vector<worker_position>& positions) {
  json all = json::array();
  for (const auto& p : positions)
    all.push_back({{"worker", p.worker},
                   {"pass", p.at.pass + 1},
                   {"examples", p.at.examples},
                   {"batches", p.at.batches}});
  return all;
}

std::vector<worker_position> input_from(const json& j) {
  std::vector<worker_position> out;
  for (const auto& p : j) {
    worker_position w;
    w.worker = p.at("worker").get<std::uint32_t>();
    w.at.pass = p.at("pass").get<std::uint64_t>() - 1;
    w.at.examples = p.at("examples").get<std::uint64_t>();
    w.at.batches = p.at("batches").get<std::uint64_t>();
    out.push_back(w);
  }
  return out;
}

}  // namespace

std::string status_json(const status_facts& f) {
  json j;
  j["mode"] = f.mode;
  j["state"] = f.state;
  j["global_step"] = f.global_step;
  j["last_step"] = f.last_step;
  j["steps_per_s"] = number(f.steps_per_s);
  j["eta_s"] = f.steps_per_s > 0
                   ? number(static_cast<double>(f.last_step - f.global_step) / f.steps_per_s)
                   : json();
  j["loss"] = number(f.loss);
  j["learning_rate"] = number(f.learning_rate);
  j["validation"] = validation_json(f.validation);
  j["workers"] = {{"expected", f.expected_workers},
                  {"live", f.live_workers},
                  {"dead", f.dead_workers},
                  {"joined", f.joined_workers}};
  j["shards"] = json::array();
  for (std::size_t k = 0; k < f.shards.size(); ++k) j["shards"].push_back(shard_json(k, f.shards[k]));
  j["dropped_stale_gradients"] = dropped_total(f);
  j["bad_batches_skipped"] = f.bad_batches_skipped;
  j["updates_applied"] = f.updates_applied;
  j["updates_lost"] = f.updates_lost;
  j["failover_pause_s"] = number(f.failover_pause_s);
  j["input"] = input_json(f.positions);
  j["last_checkpoint"] =
      f.last_checkpoint.empty()
          ? json()
          : json{{"path", f.last_checkpoint}, {"age_s", number(f.checkpoint_age_s)}};
  j["config_sources"] = f.config_sources;
  return j.dump();
}

status_facts parse_status_json(const std::string& text) {
  try {
    const json j = json::parse(text);
    status_facts f;
    f.mode = j.at("mode").get<std::string>();
    f.state = j.value("state", std::string("training"));
    f.bad_batches_skipped = j.value("bad_batches_skipped", std::int64_t{0});
    f.updates_applied = j.value("updates_applied", std::int64_t{0});
    f.updates_lost = j.value("updates_lost", std::int64_t{0});
    f.failover_pause_s = j.value("failover_pause_s", 0.0);
    f.global_step = j.at("global_step").get<std::int64_t>();
    f.last_step = j.at("last_step").get<std::int64_t>();
    f.steps_per_s = j.at("steps_per_s").is_null() ? 0.0 : j.at("steps_per_s").get<double>();
    f.loss = static_cast<float>(number_of(j, "loss"));
    f.learning_rate = number_of(j, "learning_rate");
    if (const json& v = j.at("validation"); !v.is_null())
      f.validation = validation_facts{v.at("global_step").get<std::int64_t>(),
                                      number_of(v, "accuracy"), number_of(v, "ema_accuracy")};
    const json& w = j.at("workers");
    f.expected_workers = w.at("expected").get<std::size_t>();
    f.live_workers = w.at("live").get<std::vector<std::uint32_t>>();
    f.dead_workers = w.at("dead").get<std::vector<std::uint32_t>>();
    f.joined_workers = w.value("joined", std::vector<std::uint32_t>{});
    for (const auto& s : j.at("shards")) f.shards.push_back(shard_from(s));
    if (j.contains("input")) f.positions = input_from(j.at("input"));
    if (const json& c = j.at("last_checkpoint"); !c.is_null()) {
      f.last_checkpoint = c.at("path").get<std::string>();
      f.checkpoint_age_s = number_of(c, "age_s");
    }
    f.config_sources = j.at("config_sources").get<std::map<std::string, std::string>>();
    return f;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("the chief's status is not valid: ") + e.what());
  }
}

std::string with_chief(const std::string& json_text, const std::string& address) {
  json j{{"chief", address}};
  const json facts = json::parse(json_text);
  for (const auto& [key, value] : facts.items()) j[key] = value;
  return j.dump(2);
}

}  // namespace downpour
