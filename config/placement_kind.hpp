// How parameters are placed on the parameter shards (--placement), apart from
// the options struct so that the key slicer and the protocol need no options.
#pragma once

namespace downpour {

// balanced: near-equal contiguous ranges; round_robin: whole variables, one
// shard after another (protocol/placement.hpp).
enum class placement_kind { balanced, round_robin };

}  // namespace downpour
