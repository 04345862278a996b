#include "runtime/node/signals.hpp"

#include <pthread.h>
#include <signal.h>

#include <cstdlib>
#include <cstring>

namespace downpour {

void stop_switch::arm(stop_action action) {
  std::lock_guard<std::mutex> lock(mutex_);
  action_ = std::move(action);
}

void stop_switch::disarm() {
  std::lock_guard<std::mutex> lock(mutex_);
  action_ = nullptr;
}

bool stop_switch::trigger(const std::string& why) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!action_) return false;
  action_(why);
  return true;
}

armed_stop::armed_stop(stop_switch* target, stop_action action) : target_(target) {
  if (target_) target_->arm(std::move(action));
}

armed_stop::~armed_stop() {
  if (target_) target_->disarm();
}

namespace {

// SIGUSR2 only wakes the watcher when it is destroyed.
sigset_t watched_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGUSR2);
  return set;
}

}  // namespace

signal_watcher::signal_watcher(stop_switch& target, logger log)
    : target_(target), log_(std::move(log)) {
  sigset_t set = watched_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  thread_ = std::thread([this] { watch(); });
}

signal_watcher::~signal_watcher() {
  closing_ = true;
  pthread_kill(thread_.native_handle(), SIGUSR2);
  thread_.join();
}

void signal_watcher::watch() {
  const sigset_t set = watched_signals();
  int stops = 0;
  for (;;) {
    int sig = 0;
    if (sigwait(&set, &sig) != 0) continue;
    if (sig == SIGUSR2) {
      if (closing_) return;
      continue;
    }
    const std::string name = sig == SIGTERM ? "SIGTERM" : "SIGINT";
    if (++stops > 1) {
      log_.warn(name + " again while stopping: exiting at once; the checkpoints saved before "
                       "are intact");
      std::_Exit(128 + sig);
    }
    if (!target_.trigger(name)) {
      log_.info(name + " received before training started: exiting, nothing to save");
      std::_Exit(exit_stopped);
    }
  }
}

}  // namespace downpour
