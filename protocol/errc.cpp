#include "protocol/errc.hpp"

#include <iterator>

namespace downpour {
namespace {

struct errc_text {
  const char* name;
  const char* meaning;
};

// Indexed by the value; errc starts at 1, so entry 0 stands for any unknown one.
constexpr errc_text errc_texts[] = {
    {"unknown", "an unknown error"},
    {"config_mismatch", "a peer was started with a different cluster configuration"},
    {"shape_mismatch", "the sizes of the tensors do not fit the shard"},
    {"not_finite", "a gradient holds NaN or inf"},
    {"stopped", "the job is over"},
    {"unreachable", "a peer could not be reached"},
    {"recovering", "a ps is down; the cluster is recovering"},
    {"failed", "an actor failed"},
    {"unauthorized", "a message from a node that is not part of the cluster"},
    {"interrupted", "the job was stopped"},
    {"diverged", "the training diverged"},
    {"not_initialised", "a push before the shard was initialised"},
    {"future_step", "a push stamped with a step the shard has not reached"},
    {"unoffered_replay", "a replay that was not offered"},
    {"save_failed", "a checkpoint could not be written"},
    {"restored", "the shard was restored"},
    {"step_passed", "the shard is past the step asked for"},
    {"bad_keys", "row keys out of range, not ascending or duplicated"},
    {"unpulled_rows", "a push of rows the worker did not pull"},
    {"join_refused", "the chief refused this node's --join"},
    {"fenced", "a push from a worker of the epoch before a failover"},
    {"no_copy", "the ps keeps no copy of that shard"},
};
static_assert(std::size(errc_texts) == static_cast<std::size_t>(errc::no_copy) + 1,
              "every errc value has its name and meaning here");

const errc_text& text_of(errc x) {
  const auto i = static_cast<std::size_t>(x);
  return i < std::size(errc_texts) ? errc_texts[i] : errc_texts[0];
}

}  // namespace

std::string to_string(errc x) {
  return text_of(x).name;
}

const char* explain(errc x) {
  return text_of(x).meaning;
}

}  // namespace downpour
