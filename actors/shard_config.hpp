// What a parameter shard is spawned with (actors/parameter_shard.hpp).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "reporting/log.hpp"
#include "config/options.hpp"
#include "model/schedule.hpp"
#include "model/layout.hpp"
#include "model/row_tables.hpp"
#include "caf/actor.hpp"

namespace downpour {

struct shard_config {
  std::uint32_t index = 0;
  std::string fingerprint;  // cluster_fingerprint() of the node's options
  std::string secret;       // --cluster-secret-file's contents; empty: none
  lr_schedule schedule;
  float ema_decay = 0.99f;
  std::int64_t last_step = 0;
  train_mode mode = train_mode::async;
  std::size_t required = 1;            // sync: fresh gradients per round until told otherwise
  std::size_t trainers = 1;            // workers per worker node (--trainers)
  wire_dtype wire = wire_dtype::fp32;  // pull replies between nodes
  logger log;                          // this ps node
  // The model's row variables' tables (rows, cols, initializer, rule),
  // none for a dense model; the keys this shard owns come with the init.
  row_tables_spec rows;
  // The model's dense variables: each one's rule and regularizer, applied to
  // the part of it this shard owns (model/dense_rules.hpp).
  std::vector<variable_info> dense;
  // --ps-replicas: the copies of each shard; a ps's backups of other shards
  // (by index), which the shard names to members that ask (a failover).
  std::size_t replicas = 1;
  std::map<std::uint32_t, caf::actor> hosted;
};

}  // namespace downpour
