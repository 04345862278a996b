// A parameter shard: owns ranges of the flat parameter buffer and their EMA
// shadows, serves pulls and applies pushed gradients.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "protocol/messages.hpp"
#include "actors/shard_config.hpp"
#include "model/sparse_table.hpp"

namespace downpour {

shard_actor spawn_parameter_shard(caf::actor_system& sys, shard_config cfg);

// The table of the model's sparse variable (none for a dense model), its
// rows drawn from seed as its initializer says, updated by optimizer.
std::optional<sparse_table_spec> row_table_spec(const model_layout& layout, std::uint64_t seed,
                                                sparse_optimizer optimizer);

}  // namespace downpour
