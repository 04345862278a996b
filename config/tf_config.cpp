// TF_CONFIG, the JSON through which TensorFlow and Kubeflow's TFJob tell each
// process the cluster and its own task:
//   {"cluster": {"chief": [...], "ps": [...], "worker": [...]},
//    "task": {"type": "worker", "index": 1}}
// Downpour's worker 0 is the chief, so a separate chief (or legacy master)
// task becomes worker 0 and TF_CONFIG's worker i becomes Downpour's worker i+1.
// Without a chief, worker 0 is the chief (TensorFlow 1.x's rule). An evaluator
// is never part of training: its entry is ignored and its own task refused.
#include <nlohmann/json.hpp>

#include "config/readers.hpp"

namespace downpour::config_detail {
namespace {

using json = nlohmann::json;

[[noreturn]] void fail(const std::string& what) {
  throw config_error("config: TF_CONFIG " + what);
}

std::vector<std::string> addresses(const json& cluster, const std::string& type) {
  auto it = cluster.find(type);
  if (it == cluster.end()) return {};
  if (!it->is_array())
    fail("cluster." + type + " is not valid (expected a list of \"host:port\" strings)");
  std::vector<std::string> out;
  for (const auto& a : *it) {
    if (!a.is_string())
      fail("cluster." + type + " entry " + a.dump() + " is not valid (expected a \"host:port\" string)");
    out.push_back(a.get<std::string>());
  }
  return out;
}

// task.index as a number or a string of digits ("1" parses, as in TensorFlow).
long long task_index(const json& task) {
  auto it = task.find("index");
  if (it == task.end()) return 0;  // TensorFlow's default
  if (it->is_number_integer()) return it->get<long long>();
  if (it->is_string()) {
    const std::string text = it->get<std::string>();
    long long value = 0;
    std::errc error{};
    if (!text.empty() && parse_whole(text, value, error)) return value;
  }
  fail("task.index=" + it->dump() + " is not valid (expected an integer >= 0)");
}

std::string task_type(const json& task) {
  auto it = task.find("type");
  if (it == task.end() || !it->is_string())
    fail("task.type is missing (expected chief|master|worker|ps)");
  return it->get<std::string>();
}

void check_types(const json& cluster) {
  for (const auto& [type, value] : cluster.items())
    if (type != "chief" && type != "master" && type != "worker" && type != "ps" &&
        type != "evaluator")
      fail("cluster." + type + " is not a Downpour role (expected chief|master|worker|ps|evaluator)");
}

std::string join(const std::vector<std::string>& xs) {
  std::string out;
  for (const auto& x : xs) out += (out.empty() ? "" : ",") + x;
  return out;
}

struct tf_cluster {
  std::vector<std::string> ps, workers;  // workers: the chief first, when there is one
  bool has_chief = false;
};

tf_cluster read_cluster(const json& cluster) {
  if (!cluster.is_object()) fail("cluster is not a JSON object");
  check_types(cluster);
  auto chiefs = addresses(cluster, "chief");
  auto masters = addresses(cluster, "master");
  chiefs.insert(chiefs.end(), masters.begin(), masters.end());
  if (chiefs.size() > 1)
    fail("cluster has " + std::to_string(chiefs.size()) +
         " chief/master entries (expected at most one chief)");
  tf_cluster c;
  c.has_chief = !chiefs.empty();
  c.workers = chiefs;
  auto workers = addresses(cluster, "worker");
  c.workers.insert(c.workers.end(), workers.begin(), workers.end());
  c.ps = addresses(cluster, "ps");
  if (c.ps.empty()) fail("cluster has no ps (expected at least one parameter server)");
  if (c.workers.empty()) fail("cluster has no chief or worker (expected at least one)");
  return c;
}

json parse(const std::string& text) {
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    fail("is not valid JSON (" + std::string(e.what()) + ")");
  }
}

}  // namespace

raw_values read_tf_config(const std::string& text) {
  const json doc = parse(text);
  if (!doc.is_object()) fail("is not a JSON object");
  if (doc.contains("sparseCluster"))
    fail("sparseCluster (enableDynamicWorker) is not supported (expected a fixed cluster)");
  if (!doc.contains("cluster") || doc["cluster"].empty()) return {};  // one-replica job
  const tf_cluster c = read_cluster(doc["cluster"]);
  if (!doc.contains("task") || !doc["task"].is_object())
    fail("has a cluster but no task (expected \"task\": {\"type\": ..., \"index\": ...})");
  const std::string type = task_type(doc["task"]);
  const long long index = task_index(doc["task"]);
  if (type == "evaluator")
    fail("task.type=evaluator is not a Downpour process (the chief evaluates with "
         "--eval-every; `downpour eval` evaluates a checkpoint)");
  const bool chief = type == "chief" || type == "master";
  if (!chief && type != "worker" && type != "ps")
    fail("task.type=" + type + " is not valid (expected chief|master|worker|ps)");
  const std::size_t count = chief ? c.has_chief : type == "ps" ? c.ps.size() : c.workers.size() - c.has_chief;
  if (count == 0) fail("task.type=" + type + " is not in the cluster");
  if (index < 0 || static_cast<std::size_t>(index) >= count)
    fail("task.index=" + std::to_string(index) + " is out of range (expected an integer from 0 to " +
         std::to_string(count - 1) + " for " + std::to_string(count) + " " + type + " entries)");
  const std::size_t task = type == "worker" ? index + c.has_chief : index;
  raw_values raw;
  raw.emplace("role", raw_value{type == "ps" ? "ps" : "worker", tf_config_source, "task.type"});
  raw.emplace("task", raw_value{std::to_string(task), tf_config_source, "task.index"});
  raw.emplace("ps-hosts", raw_value{join(c.ps), tf_config_source, "cluster.ps"});
  raw.emplace("worker-hosts",
              raw_value{join(c.workers), tf_config_source, "cluster.chief+cluster.worker"});
  return raw;
}

}  // namespace downpour::config_detail
