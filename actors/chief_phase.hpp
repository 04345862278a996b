// The chief's lifecycle, one phase at a time. run_chief
// (runtime/node/chief.cpp) walks the phases before training and after it;
// the stop supervisor (actors/stop_supervisor.hpp) those in between: it is
// spawned in training and its walk ends where it tells the end, in
// stopping_nodes (or failed), from where run_chief goes on. Status requests
// reach the supervisor, so its phase is the job's for them.
//
// The arrows ({...}: what moves it on):
//
//          starting
//              | {every ps answered the hello}
//              v
//     initialising_shards
//              | {every shard restored or initialised}
//              v
//          training <----------------{every shard restored}---+
//           |     |                                           |
//           |     | {told to stop}                       recovering
//           |     v                                           ^
//           |  stopping <--------{restored, told to stop}-----+
//           |     |    ^                                      |
//           |     |    | {sync: told to stop}                 |
//           |     v    |                              {a ps is lost, from
//           +--> draining                             training, stopping,
//   {every ticket   |    \                            draining or saving}
//    out and every  |     \ {nothing to save: the job
//    worker done}   |      |  started at its last step}
//                   v      |
//     saving_last_checkpoint
//                   |      |
//                   | {saved}
//                   v      v
//              stopping_nodes <------- failed <--- {from any phase before
//                   |                    |          stopping_nodes: diverged,
//                   v                    |          a save or a part failed}
//                 done <-----------------+ {failed before anything started}
//
//  draining:  every push is out; each shard confirms it applied them. In
//             sync the shards run the rounds to the last step by themselves,
//             so the supervisor drains from the chief's first end request on.
//  saving:    the checkpoint of the final step (the last step, or the step a
//             stop reached), written before the end is told.
//  stopping_nodes: the end is told; run_chief collects the model and ends the
//             shards, its helpers and its workers.
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
