// What a worker is spawned with (actors/worker.hpp draws what it does).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "reporting/log.hpp"
#include "protocol/messages.hpp"
#include "protocol/placement.hpp"
#include "config/options.hpp"
#include "data/batch_source.hpp"
#include "data/dataset.hpp"
#include "data/streamed_input.hpp"
#include "model/model.hpp"
#include "model/schedule.hpp"

namespace downpour {

struct worker_config {
  std::uint32_t index = 0;
  std::shared_ptr<const model> net;  // the worker makes one workspace of it
  std::size_t model_size = 0;         // floats in the model's layout
  std::size_t batch_size = 100;
  std::int64_t log_every = 10;  // local steps between progress lines
  std::uint64_t batch_seed = 0;
  std::shared_ptr<const dataset> train;  // in memory, or:
  // streamed: the worker reads its share of the files on a thread of its
  // own, from where the shards say its last push left off.
  std::shared_ptr<const streamed_input> stream;
  // The shards, or with several trainers in the process their exchanges.
  std::vector<shard_link> shards;
  std::vector<shard_layout> layouts;  // one per shard
  supervisor_actor supervisor;
  coordinator_actor coordinator;
  train_mode mode = train_mode::async;
  std::int64_t last_step = 0;
  std::size_t gradients_per_step = 1;  // sync: pushes per global step (TF counts gradients)
  // async: pull the next step's parameters while computing this step's
  // gradient, so the shards' update and the transfer overlap the compute. The
  // pulled parameters then lack the worker's own last gradient (one step more
  // staleness), so a one-worker job no longer matches the reference. With a
  // row variable, the next batch's rows likewise, in ssp (async sends each
  // push with the next pull in one message instead).
  bool pipeline = false;
  std::int64_t staleness = 0;  // ssp: steps a worker may run ahead of the slowest
  // async, ssp: tickets asked for at a time (--ticket-lease); 1 asks for each
  // step with ticket_atom and settles each push on its own, as before leases.
  std::int64_t ticket_lease = 1;
  wire_dtype wire = wire_dtype::fp32;  // pushes between nodes
  // The shards' learning-rate schedule: between nodes a worker applies its
  // own update to its copy and pulls only what others changed (replay_offer),
  // when every dense variable is plain SGD (model/dense_rules.hpp): a rule of
  // its own is the shard's alone.
  lr_schedule schedule;
  bool dense_sgd_only = true;
  // A model with row variables: the first key each shard owns, then the
  // keys in all (protocol/placement.hpp row_boundaries), and the key space
  // (each key's floats). Empty for a dense model. Such a worker pulls the
  // rows of each batch, so it never replays its own update; pipelined in
  // ssp, it pulls the next batch's while computing on the one in hand.
  std::vector<std::uint64_t> row_bounds;
  row_space row_keys;
  logger log;  // this worker's node
  // --ps-replicas 2 across processes: where the pushes no
  // shard answered go when a ps is lost (none: they end with the worker).
  push_keeper_actor keeper;
  // Batches in memory shared with the trainers of this seat started before
  // and after this one (none: the worker makes its own, from the start).
  std::shared_ptr<seat_batches> batches;
};

}  // namespace downpour
