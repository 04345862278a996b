// SIGTERM and SIGINT end a job cleanly. No code runs in a signal handler:
// both signals are blocked in every thread (the mask is set before the first
// thread starts and threads inherit it) and one watcher thread takes them
// with sigwait, then acts like any other thread (logs, sends a message).
//
// The first signal runs the action the node armed (tell the supervisor to
// stop with a checkpoint, tell a worker to leave, ask the chief to stop); a
// node that has armed nothing yet has trained nothing and exits at once.
// A second signal exits at once with 128 + the signal: the checkpoint being
// written then is lost, the ones before it are whole (saves are atomic).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "reporting/log.hpp"

namespace downpour {

// What a stop request does on this node; empty: nothing to save yet.
using stop_action = std::function<void(const std::string& why)>;

// The node's current stop action, set and replaced as the node goes
// through its phases (a worker that rejoins arms its new actor).
class stop_switch {
 public:
  void arm(stop_action action);
  void disarm();
  // Runs the armed action with why; false when nothing is armed.
  bool trigger(const std::string& why);

 private:
  std::mutex mutex_;
  stop_action action_;
};

// Arms a switch for as long as it lives: a node's actors are gone after
// it, so no signal may reach them then.
class armed_stop {
 public:
  armed_stop(stop_switch* target, stop_action action);
  ~armed_stop();
  armed_stop(const armed_stop&) = delete;
  armed_stop& operator=(const armed_stop&) = delete;

 private:
  stop_switch* target_;
};

// Exit codes of a training node (README, docs/stopping.md).
inline constexpr int exit_completed = 0;
inline constexpr int exit_failed = 1;
inline constexpr int exit_bad_config = 2;
inline constexpr int exit_diverged = 3;
inline constexpr int exit_stopped = 4;

// Blocks SIGTERM and SIGINT in the calling thread and starts the watcher.
// Construct it in main before any other thread exists. A stop that has not
// ended the process within grace (a peer it waits for is gone, say) ends it
// with exit_stopped: saves are atomic, so the newest checkpoint is whole.
class signal_watcher {
 public:
  signal_watcher(stop_switch& target, logger log, std::chrono::milliseconds grace);
  ~signal_watcher();
  signal_watcher(const signal_watcher&) = delete;
  signal_watcher& operator=(const signal_watcher&) = delete;

 private:
  void watch();

  stop_switch& target_;
  logger log_;
  std::chrono::milliseconds grace_;
  std::atomic<bool> closing_{false};
  std::thread thread_;
};

}  // namespace downpour
