// The stop supervisor's members beyond --worker-hosts: a node started with
// --join proves the cluster secret and shows the cluster's fingerprint as a
// listed worker's hello does, and is given the next task index after the
// listed workers and the earlier joiners. It then says hello as that task.
#include "actors/supervisor_state.hpp"
#include "config/cluster_fingerprint.hpp"

namespace downpour {
namespace {

// A node that joined before (it lost a peer and joins again) keeps its index.
std::uint32_t index_for(stop_supervisor_state& st, const caf::node_id& node) {
  for (const auto& [task, member] : st.joined)
    if (member == node) return task;
  const auto task = static_cast<std::uint32_t>(st.cfg.listed_tasks + st.joined.size());
  st.joined.emplace(task, node);
  return task;
}

}  // namespace

caf::result<std::uint32_t> on_join_request(supervisor_pointer self, const hello_msg& m) {
  auto& s = self->state;
  const auto sender = self->current_sender();
  if (!hello_proven(self, m)) return unproven_hello();
  if (auto diff = fingerprint_difference(m.fingerprint, s.cfg.fingerprint, "the chief")) {
    s.guard.refuse("a join with other settings", sender, " (" + *diff + ")");
    return caf::make_error(errc::config_mismatch, *diff);
  }
  if (!sender || m.worker != hello_msg::joining || m.shard != hello_msg::to_chief)
    return unauthorized("a join");
  if (!s.cfg.joins_refused.empty()) {
    s.guard.refuse("a join", sender, ": " + s.cfg.joins_refused);
    return caf::make_error(errc::join_refused, "the chief refuses joins: " + s.cfg.joins_refused);
  }
  if (walk_over(s)) return caf::make_error(errc::stopped, "the job is over");
  const auto task = index_for(s, sender->node());
  s.cfg.log.info("stop_supervisor: a node joined as worker task " + std::to_string(task) +
                 " (" + std::to_string(s.cfg.listed_tasks + s.joined.size()) +
                 " worker nodes now)");
  return task;
}

bool may_hello_as(supervisor_pointer self, std::uint32_t task, const caf::node_id& node) {
  auto& s = self->state;
  if (task < s.cfg.listed_tasks || node == self->node()) return true;
  auto it = s.joined.find(task);
  if (it != s.joined.end() && it->second == node) return true;
  return false;
}

}  // namespace downpour
