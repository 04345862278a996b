// The chief's lifecycle, one phase at a time. run_chief
// (runtime/node/chief.cpp) walks the phases before training and after it;
// the stop supervisor (actors/stop_supervisor.hpp) those in between: it is
// spawned in training and its walk ends where it tells the end, in
// stopping_nodes (or failed), from where run_chief goes on.
//
// The arrows ({...}: what moves it on):
//
//          starting
//              | {every ps answered the hello}
//              v
//     initialising_shards
//              | {every shard restored or initialised}
//              v
//          training --------------+
//              |                  | {told to stop}
//              | {the end asked,  v
//              |  the last     stopping
//              |  ticket's        | {every push out}
//              |  push out}       |
//              v                  v
//          draining <-------------+
//              | {every shard applied every push}
//              v
//    saving_last_checkpoint
//              | {saved: the end is told}
//              v
//        stopping_nodes
//              | {every node ended}
//              v
//            done
//
// and besides:
//  - training, stopping, draining, saving_last_checkpoint -> recovering
//    {a ps is lost}; recovering -> training, or stopping if told to stop
//    before {every shard restored}.
//  - draining -> stopping_nodes {nothing to save: the job began at its last
//    step}.
//  - sync, where the shards run the rounds to the last step by themselves,
//    so the supervisor drains from the chief's first end request on:
//    draining -> stopping {told to stop}; stopping -> saving_last_checkpoint
//    {shard 0 said where it stands: the checkpoint a few rounds ahead};
//    saving_last_checkpoint -> stopping {the shards had passed that step}.
//  - streamed input whose passes (--passes) every worker finished before
//    the last step: training -> draining as for the last ticket, toward
//    the step reached; sync, already draining, drains on toward the last
//    round pushed for instead.
//  - every phase before stopping_nodes -> failed {diverged, or a save or a
//    part failed}; failed -> stopping_nodes, or -> done when nothing was
//    started yet.
//
//  draining:  every push is out; each shard confirms it applied them.
//  saving_last_checkpoint: the checkpoint of the final step (the last step,
//             the step a stop reached, or where the passes ended), written
//             before the end is told.
//  stopping_nodes: the end is told; run_chief collects the model and ends the
//             shards, its helpers and its workers.
//
// A chief started again on a job that completed before walks none of these:
// it reports that job and answers the workers' hellos (runtime/node/finished.hpp).
#pragma once

#include <string>

namespace downpour {

enum class chief_phase {
  starting,
  initialising_shards,
  training,
  recovering,
  stopping,
  draining,
  saving_last_checkpoint,
  stopping_nodes,
  done,
  failed,
};

// "saving_last_checkpoint".
std::string to_string(chief_phase p);

// Whether the diagram has an arrow from `from` to `to`.
bool allowed_transition(chief_phase from, chief_phase to);

// Where the chief is in its lifecycle; it moves only along the arrows.
class chief_lifecycle {
 public:
  // Where its walk begins: starting for run_chief, training for the
  // supervisor, stopping_nodes or failed for run_chief after the end.
  explicit chief_lifecycle(chief_phase at = chief_phase::starting) : phase_(at) {}

  chief_phase phase() const { return phase_; }
  bool is(chief_phase p) const { return phase_ == p; }

  // Moves to `next`. Any move the diagram lacks is a bug in the chief: it
  // throws std::logic_error naming both phases (in an actor, that ends the
  // actor with the message: protocol/failure.hpp).
  void enter(chief_phase next);

 private:
  chief_phase phase_;
};

}  // namespace downpour
