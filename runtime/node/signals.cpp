#include "runtime/node/signals.hpp"

#include <pthread.h>
#include <signal.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <optional>
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

signal_watcher::signal_watcher(stop_switch& target, logger log,
                               std::chrono::milliseconds grace)
    : target_(target), log_(std::move(log)), grace_(grace) {
  sigset_t set = watched_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  thread_ = std::thread([this] { watch(); });
}

signal_watcher::~signal_watcher() {
  closing_ = true;
  pthread_kill(thread_.native_handle(), SIGUSR2);
  thread_.join();
}

namespace {

// The next watched signal; 0 once deadline has passed (none: wait forever).
int next_signal(const sigset_t& set,
                const std::optional<std::chrono::steady_clock::time_point>& deadline) {
  if (!deadline) {
    int sig = 0;
    return sigwait(&set, &sig) == 0 ? sig : -1;
  }
  const auto left = *deadline - std::chrono::steady_clock::now();
  if (left <= std::chrono::steady_clock::duration::zero()) return 0;
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
  timespec wait{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
  const int sig = sigtimedwait(&set, nullptr, &wait);
  if (sig > 0) return sig;
  return errno == EAGAIN ? 0 : -1;
}

}  // namespace

void signal_watcher::watch() {
  const sigset_t set = watched_signals();
  std::optional<std::chrono::steady_clock::time_point> deadline;
  for (;;) {
    const int sig = next_signal(set, deadline);
    if (sig < 0) continue;
    if (sig == 0) {
      char grace[32];
      std::snprintf(grace, sizeof grace, "%g", static_cast<double>(grace_.count()) / 1000.0);
      log_.warn(std::string("the stop did not end this node within --stop-grace=") + grace +
                " s (a peer it waits for may be gone): exiting; the newest "
                "checkpoint saved is whole and the same command resumes from it");
      std::_Exit(exit_stopped);
    }
    if (sig == SIGUSR2) {
      if (closing_) return;
      continue;
    }
    const std::string name = sig == SIGTERM ? "SIGTERM" : "SIGINT";
    if (deadline) {
      log_.warn(name + " again while stopping: exiting at once; the checkpoints saved before "
                       "are intact");
      std::_Exit(128 + sig);
    }
    deadline = std::chrono::steady_clock::now() + grace_;
    if (!target_.trigger(name)) {
      log_.info(name + " received before training started: exiting, nothing to save");
      std::_Exit(exit_stopped);
    }
  }
}

}  // namespace downpour
