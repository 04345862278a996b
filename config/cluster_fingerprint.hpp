// The cluster fingerprint: the settings every node of one job must share, so
// nodes started with different configs refuse to work together.
#pragma once

#include <optional>
#include <string>

#include "config/options.hpp"

namespace downpour {

// "key=value;key=value;..." over the shared settings (version, cluster name,
// host lists, mode, schedule, last step, batch size, placement); the runtime
// adds the model (runtime/node/job.hpp).
std::string cluster_fingerprint(const options& opts);

// The first setting that differs, as "last-step=100 here but 20000 at <peer>",
// or nullopt when both fingerprints agree.
std::optional<std::string> fingerprint_difference(const std::string& mine,
                                                  const std::string& theirs,
                                                  const std::string& peer);

}  // namespace downpour
