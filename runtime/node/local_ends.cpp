#include "runtime/node/local_ends.hpp"

#include <algorithm>

namespace downpour {

std::vector<std::string> await_local_ends(caf::scoped_actor& self,
                                          const std::vector<named_actor>& actors,
                                          caf::timespan bound, const logger& log) {
  std::vector<named_actor> running;
  for (const auto& a : actors) {
    if (!a.handle) continue;
    self->monitor(a.handle);
    running.push_back(a);
  }
  bool timed_out = false;
  self->receive_while([&] { return !running.empty() && !timed_out; })(
      [&](caf::down_msg& dm) {
        running.erase(std::remove_if(running.begin(), running.end(),
                                     [&](const named_actor& a) {
                                       return caf::actor_cast<caf::actor_addr>(a.handle) ==
                                              dm.source;
                                     }),
                      running.end());
      },
      caf::after(bound) >> [&] { timed_out = true; });
  std::vector<std::string> killed;
  for (const auto& a : running) {
    killed.push_back(a.name);
    self->send_exit(a.handle, caf::exit_reason::kill);
  }
  if (!killed.empty()) {
    std::string names;
    for (const auto& n : killed) names += (names.empty() ? "" : ", ") + n;
    const auto secs = std::chrono::duration_cast<std::chrono::seconds>(bound).count();
    log.warn("shutdown: " + names + " still running " + std::to_string(secs) +
             " s after the job ended; killed");
  }
  return killed;
}

}  // namespace downpour
