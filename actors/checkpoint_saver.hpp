// The checkpoint saver on the chief. It pulls a snapshot of every shard taken
// right after the same global step (so no shared file system is needed and a
// checkpoint is the model after exactly that step) and writes it atomically.
// It saves when asked (at start and at the last step), every
// save_checkpoint_secs and every save_checkpoint_steps. It is not detached:
// a detached actor's thread waits until the actor object is freed, and a
// saver killed with a save in flight was, at times, never freed (its
// pending save holds a response promise, i.e. a strong reference to itself;
// CAF 0.17.6, measured in gdb: ~actor_system waited on the saver's thread
// forever). A write with fsync holds one scheduler thread for 20-60 ms.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/checkpoint_data.hpp"
#include "reporting/log.hpp"
#include "protocol/messages.hpp"
#include "model/layout.hpp"

namespace downpour {

struct saver_config {
  std::vector<shard_actor> shards;
  model_layout layout;
  std::string mode;  // "async", "sync" or "ssp"
  checkpoint_writer write;  // the file format and the directory live in runtime/files
  double every_secs = 0.0;       // 0: no timed checkpoints
  std::int64_t every_steps = 0;  // 0: no step-count checkpoints
  std::int64_t start_step = 0;
  std::int64_t last_step = 0;
  logger log;  // the chief
};

saver_actor spawn_checkpoint_saver(caf::actor_system& sys, saver_config cfg);

}  // namespace downpour
