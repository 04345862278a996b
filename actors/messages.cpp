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
  }
  return "unknown";
}

}  // namespace downpour
