// The chaos run: the original async job (2 ps, 2 workers) as processes on
// loopback, while nodes are killed with -9 and started again with the same
// task. Victims come in rounds of all four nodes, each round shuffled by the
// seed. A kill waits for training progress in the logs (progress lines of both
// workers since the last restart), never for a fixed time, and none happens in
// the last fifth of the job. It passes when the job ends at exactly
// --last-step with at least the accuracy floor and the last instance of every
// node exits 0. Used by test_chaos (a short run in ctest) and downpour_chaos
// (scripts/chaos).
#pragma once

#include <algorithm>
#include <array>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "cluster_procs.hpp"

namespace downpour::testing {

struct chaos_options {
  std::int64_t last_step = 20000;
  int kills = 6;
  unsigned seed = 1;
  double min_accuracy = 0.84;
  std::string logdir;                    // logs, and checkpoints in logdir/ckpt; must exist
  std::string binary = DOWNPOUR_BINARY;  // the downpour to run
  // 2: every shard has a backup; only ps are killed, each kill must fail
  // over (no rollback) and the ps started again must catch up first.
  std::size_t ps_replicas = 1;
};

struct chaos_outcome {
  std::vector<std::string> victims;   // "ps 1", "worker 0", ... in kill order
  std::vector<std::string> failures;  // empty: passed
  std::int64_t lost = 0;              // the final line's updates lost
  std::int64_t applied = 0;           // the final line's updates applied
  std::int64_t final_step = -1;
  double ema_test_accuracy = 0;
};

class chaos_run {
 public:
  chaos_run(chaos_options opts, std::ostream& report)
      : opts_(std::move(opts)),
        report_(report),
        rng_(opts_.seed),
        cluster_(make_cluster(2, 2, opts_.logdir + "/ckpt", common_args(opts_))) {}

  chaos_outcome run() {
    report_ << "chaos: 2 ps + 2 workers at " << cluster_.ps << " " << cluster_.workers
            << ", last step " << opts_.last_step << ", " << opts_.kills << " kills, seed "
            << opts_.seed << ", logs in " << opts_.logdir << std::endl;
    for (std::size_t s = 0; s < 4; ++s) start(s);
    for (int i = 0; i < opts_.kills && out_.failures.empty(); ++i)
      if (!kill_one(i)) break;
    finish();
    return out_;
  }

 private:
  static constexpr std::int64_t log_every = 50;
  static constexpr std::size_t chief = 2;  // slots: ps 0, ps 1, worker 0, worker 1

  static std::vector<std::string> common_args(const chaos_options& o) {
    const auto save_every = std::max<std::int64_t>(100, o.last_step / 20);
    return {"--last-step=" + std::to_string(o.last_step),
            "--log-every=" + std::to_string(log_every),
            "--save-checkpoint-steps=" + std::to_string(save_every), "--save-checkpoint-secs=0",
            "--connect-timeout=60", "--ps-replicas=" + std::to_string(o.ps_replicas)};
  }
  bool replicated() const { return opts_.ps_replicas > 1; }
  static std::string role(std::size_t slot) { return slot < 2 ? "ps" : "worker"; }
  static int task(std::size_t slot) { return static_cast<int>(slot % 2); }
  static std::string name(std::size_t slot) { return role(slot) + " " + std::to_string(task(slot)); }

  void start(std::size_t slot) {
    auto args = cluster_.node(role(slot), task(slot));
    args[0] = opts_.binary;
    const std::string log = opts_.logdir + "/" + role(slot) + std::to_string(task(slot)) + "-" +
                            std::to_string(++starts_[slot]) + ".log";
    node_[slot] = std::make_unique<process>(args, log);
  }

  // Until each worker's current instance has logged its share of needed
  // progress lines since the baseline taken at the last kill.
  bool wait_progress(std::size_t needed) {
    for (std::size_t w : {chief, chief + 1}) {
      const std::size_t want = baseline_[w] + (needed + 1) / 2;
      const bool progressed = node_[w]->wait_until(
          [&](const std::string& out) { return progress_lines(out) >= want; },
          std::chrono::seconds(300));
      if (!progressed) {
        out_.failures.push_back("no training progress from " + name(w) + " within " +
                                std::to_string(scaled(std::chrono::seconds(300)).count()) + " s");
        return false;
      }
    }
    return true;
  }

  // Rounds of every node (with replicas: of both ps), shuffled by the seed.
  std::size_t next_victim(int i) {
    const int n = replicated() ? 2 : 4;
    if (i % n == 0) {
      round_.clear();
      for (int s = 0; s < n; ++s) round_.push_back(static_cast<std::size_t>(s));
      std::shuffle(round_.begin(), round_.end(), rng_);
    }
    return round_[static_cast<std::size_t>(i % n)];
  }

  // With replicas the chief must fail the lost ps over before it is started
  // again (a ps started earlier would wait for an init), and the new one
  // must catch up before the next kill.
  bool failed_over(std::size_t failovers_before) {
    const auto want = failovers_before + 1;
    if (node_[chief]->wait_until(
            [&](const std::string& out) { return failover_lines(out).size() >= want; },
            std::chrono::seconds(60)))
      return true;
    out_.failures.push_back("the chief did not fail over within 60 s");
    return false;
  }

  bool caught_up(std::size_t victim) {
    if (node_[victim]->wait_for_output("catches up on shard", std::chrono::seconds(60)))
      return true;
    out_.failures.push_back(name(victim) + " started again did not catch up within 60 s");
    return false;
  }

  // False when the job is too near its end for more kills.
  bool kill_one(int i) {
    // Spread over the first four fifths, leaving room for the steps redone after rollbacks.
    const auto needed = std::max<std::int64_t>(4, opts_.last_step / (opts_.kills + 3) / log_every);
    if (!wait_progress(static_cast<std::size_t>(needed))) return false;
    const auto step = newest_progress_step(node_[chief]->output());
    if (step >= opts_.last_step * 4 / 5) {
      report_ << "chaos: at global step " << step << ", too near the end for kill " << i + 1
              << "; no more kills" << std::endl;
      return false;
    }
    const std::size_t victim = next_victim(i);
    report_ << "chaos: kill " << i + 1 << " at global step ~" << step << ": " << name(victim)
            << std::endl;
    out_.victims.push_back(name(victim));
    const auto failovers = failover_lines(node_[chief]->output()).size();
    // Only a ps serving a shard fails over; one serving none (started again,
    // caught up) costs its backups only. Its shards move to the other ps.
    const bool serving = serves_[victim] > 0;
    node_[victim]->kill(SIGKILL);
    node_[victim]->wait(std::chrono::seconds(30));
    killed_.push_back(std::move(node_[victim]));
    const bool moved = !replicated() || !serving || failed_over(failovers);
    if (replicated() && serving) {
      serves_[1 - victim] += serves_[victim];
      serves_[victim] = 0;
      ++failovers_expected_;
    }
    start(victim);
    if (!moved || (replicated() && !caught_up(victim))) return false;
    for (std::size_t s = 0; s < 4; ++s)
      baseline_[s] = s == victim ? 0 : progress_lines(node_[s]->output());
    return true;
  }

  void finish() {
    for (std::size_t s = 0; s < 4; ++s) {
      const int code = node_[s]->wait(std::chrono::seconds(600));
      report_ << "chaos: " << name(s) << " (start " << starts_[s] << ") exited " << code
              << std::endl;
      if (code != 0)
        out_.failures.push_back(name(s) + " (start " + std::to_string(starts_[s]) +
                                ") exited " + std::to_string(code));
    }
    const auto final = final_of(node_[chief]->output());
    if (final) {
      out_.final_step = final->global_step;
      out_.ema_test_accuracy = final->ema_test_accuracy;
      out_.lost = final->updates_lost;
      out_.applied = final->updates_applied;
    }
    report_ << "chaos: final global step " << out_.final_step << ", ema_test_accuracy "
            << out_.ema_test_accuracy << std::endl;
    if (out_.final_step != opts_.last_step)
      out_.failures.push_back("the job did not end at global step " +
                              std::to_string(opts_.last_step));
    if (replicated()) check_failovers(node_[chief]->output());
    if (out_.ema_test_accuracy < opts_.min_accuracy)
      out_.failures.push_back("ema_test_accuracy " + std::to_string(out_.ema_test_accuracy) +
                              " is below " + std::to_string(opts_.min_accuracy));
  }

  // Every kill failed over, none rolled back, no update lost (the owed ones
  // sent again and taken), and every step's update counted applied.
  void check_failovers(const std::string& out) {
    const auto lines = failover_lines(out);
    std::int64_t owed = 0;
    for (const auto& l : lines) owed += l.owed;
    report_ << "chaos: " << lines.size() << " failovers owed " << owed << " update(s); "
            << out_.lost << " lost in the end" << std::endl;
    if (out_.lost != 0) out_.failures.push_back(std::to_string(out_.lost) + " update(s) lost");
    if (out_.applied != opts_.last_step)
      out_.failures.push_back(std::to_string(out_.applied) + " updates applied, not " +
                              std::to_string(opts_.last_step));
    if (lines.size() != failovers_expected_)
      out_.failures.push_back(std::to_string(failovers_expected_) + " kills of a serving ps but " +
                              std::to_string(lines.size()) + " failovers");
    if (out.find("rolls back to the newest checkpoint") != std::string::npos)
      out_.failures.push_back("a kill rolled the shards back instead of failing over");
  }

  chaos_options opts_;
  std::ostream& report_;
  std::mt19937 rng_;
  cluster_args cluster_;
  std::array<std::unique_ptr<process>, 4> node_;
  std::vector<std::unique_ptr<process>> killed_;  // kept until their readers are done
  std::array<std::size_t, 4> baseline_{};
  std::array<int, 4> starts_{};
  std::vector<std::size_t> round_;
  std::array<std::size_t, 2> serves_{1, 1};  // shards each ps serves (--ps-replicas 2)
  std::size_t failovers_expected_ = 0;
  chaos_outcome out_;
};

}  // namespace downpour::testing
