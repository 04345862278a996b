#include "actors/messages.hpp"

namespace downpour {

std::string to_string(errc x) {
  switch (x) {
    case errc::config_mismatch:
      return "config_mismatch";
    case errc::shape_mismatch:
      return "shape_mismatch";
    case errc::not_finite:
      return "not_finite";
    case errc::stopped:
      return "stopped";
    case errc::unreachable:
      return "unreachable";
    case errc::recovering:
      return "recovering";
    case errc::failed:
      return "failed";
    case errc::unauthorized:
      return "unauthorized";
    case errc::interrupted:
      return "interrupted";
    case errc::diverged:
      return "diverged";
    case errc::not_initialised:
      return "not_initialised";
    case errc::future_step:
      return "future_step";
    case errc::unoffered_replay:
      return "unoffered_replay";
    case errc::save_failed:
      return "save_failed";
    case errc::restored:
      return "restored";
    case errc::step_passed:
      return "step_passed";
  }
  return "unknown";
}

const char* explain(errc x) {
  switch (x) {
    case errc::config_mismatch:
      return "a peer was started with a different cluster configuration";
    case errc::shape_mismatch:
      return "the sizes of the tensors do not fit the shard";
    case errc::not_finite:
      return "a gradient holds NaN or inf";
    case errc::stopped:
      return "the job is over";
    case errc::unreachable:
      return "a peer could not be reached";
    case errc::recovering:
      return "a ps is down; the cluster is recovering";
    case errc::failed:
      return "an actor failed";
    case errc::unauthorized:
      return "a message from a node that is not part of the cluster";
    case errc::interrupted:
      return "the job was stopped";
    case errc::diverged:
      return "the training diverged";
    case errc::not_initialised:
      return "a push before the shard was initialised";
    case errc::future_step:
      return "a push stamped with a step the shard has not reached";
    case errc::unoffered_replay:
      return "a replay that was not offered";
    case errc::save_failed:
      return "a checkpoint could not be written";
    case errc::restored:
      return "the shard was restored";
    case errc::step_passed:
      return "the shard is past the step asked for";
  }
  return "an unknown error";
}

}  // namespace downpour
