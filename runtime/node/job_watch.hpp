// The chief's wait for the end of the job. The supervisor answers it at the
// last step; but when an exception ends an actor of the chief's process (a
// worker, a shard of a local job, the saver, the supervisor itself: see
// protocol/failure.hpp), nothing would ever answer, so the watch answers first
// with that actor's message and the chief stops the job.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "protocol/messages.hpp"

namespace downpour {

// How the training ended, the checkpoint of `step` written: at the last
// step, or stopped (a signal) at `step`.
struct job_end {
  std::int64_t step = 0;
  float loss = 0.0f;
  std::string stop_reason;  // empty: the last step was reached
};

class job_watch {
 public:
  job_watch(caf::actor_system& sys, const supervisor_actor& supervisor);
  ~job_watch();
  job_watch(const job_watch&) = delete;
  job_watch& operator=(const job_watch&) = delete;

  // Watches h if it runs in this process; a remote actor's failure is its
  // own node's to report (the chief sees that node go down).
  template <class Handle>
  void watch(const Handle& h) {
    add(caf::actor_cast<caf::actor>(h));
  }

  // How the supervisor says the training ended, or its error, or the
  // error (errc::failed, with the message) of a watched actor.
  caf::expected<job_end> await_end(caf::scoped_actor& self);

 private:
  void add(caf::actor a);
  caf::actor relay_;
};

}  // namespace downpour
