#include "actors/chief_phase.hpp"

#include <algorithm>
#include <iterator>
#include <stdexcept>

namespace downpour {
namespace {

using phase = chief_phase;

struct arrow {
  phase from;
  phase to;
};

// The diagram of chief_phase.hpp, arrow by arrow.
constexpr arrow arrows[] = {
    {phase::starting, phase::initialising_shards},
    {phase::initialising_shards, phase::training},
    {phase::training, phase::stopping},
    {phase::training, phase::draining},
    {phase::training, phase::recovering},
    {phase::recovering, phase::training},
    {phase::recovering, phase::stopping},
    {phase::stopping, phase::draining},
    {phase::stopping, phase::saving_last_checkpoint},  // sync: the shards stop by themselves
    {phase::stopping, phase::recovering},
    {phase::draining, phase::stopping},  // sync: the shards drain from the first end request
    {phase::draining, phase::saving_last_checkpoint},
    {phase::draining, phase::stopping_nodes},  // nothing to save: the job began at its end
    {phase::draining, phase::recovering},
    {phase::saving_last_checkpoint, phase::stopping_nodes},
    {phase::saving_last_checkpoint, phase::stopping},  // sync: the shards passed the step
    {phase::saving_last_checkpoint, phase::recovering},
    {phase::stopping_nodes, phase::done},
    {phase::failed, phase::stopping_nodes},
    {phase::failed, phase::done},
};

// Every phase before stopping_nodes may fail.
bool may_fail(phase p) {
  return p != phase::stopping_nodes && p != phase::done && p != phase::failed;
}

constexpr const char* names[] = {
    "starting", "initialising_shards",    "training",       "recovering", "stopping",
    "draining", "saving_last_checkpoint", "stopping_nodes", "done",       "failed"};

static_assert(std::size(names) == static_cast<std::size_t>(phase::failed) + 1,
              "a name for every phase");

}  // namespace

std::string to_string(chief_phase p) {
  const auto i = static_cast<std::size_t>(p);
  return i < std::size(names) ? names[i] : "unknown";
}

bool allowed_transition(chief_phase from, chief_phase to) {
  if (to == phase::failed) return may_fail(from);
  return std::any_of(std::begin(arrows), std::end(arrows),
                     [&](const arrow& a) { return a.from == from && a.to == to; });
}

void chief_lifecycle::enter(chief_phase next) {
  if (!allowed_transition(phase_, next))
    throw std::logic_error("the chief cannot go from " + to_string(phase_) + " to " +
                           to_string(next));
  phase_ = next;
}

}  // namespace downpour
