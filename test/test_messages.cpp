#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "actors/messages.hpp"
#include "caf/binary_deserializer.hpp"
#include "caf/binary_serializer.hpp"

using namespace downpour;

namespace {

std::vector<float> special_values() {
  return {1.0f,
          -0.0f,
          std::numeric_limits<float>::quiet_NaN(),
          std::numeric_limits<float>::infinity(),
          -std::numeric_limits<float>::infinity(),
          std::numeric_limits<float>::denorm_min(),
          3.1415926f};
}

}  // namespace

TEST_CASE("a push message survives serialization bit for bit, NaN and inf included") {
  caf::actor_system_config cfg;
  cfg.add_message_types<caf::id_block::downpour>();
  caf::actor_system sys{cfg};
  push_msg out{42, 3, tensor{special_values()}};
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  REQUIRE(!sink(out));
  // Raw blob: header plus exactly the float bytes, not one record per float.
  CHECK(buf.size() < out.grad.values.size() * sizeof(float) + 32);
  push_msg in;
  caf::binary_deserializer source{sys, buf};
  REQUIRE(!source(in));
  CHECK(in.step == 42);
  CHECK(in.worker == 3);
  REQUIRE(in.grad.values.size() == out.grad.values.size());
  CHECK(std::memcmp(in.grad.values.data(), out.grad.values.data(),
                    out.grad.values.size() * sizeof(float)) == 0);
}

TEST_CASE("a full-size tensor serializes as one blob of its bytes") {
  caf::actor_system_config cfg;
  cfg.add_message_types<caf::id_block::downpour>();
  caf::actor_system sys{cfg};
  pull_reply out{7, tensor{std::vector<float>(397510, 0.25f)}};
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  REQUIRE(!sink(out));
  CHECK(buf.size() <= 397510 * sizeof(float) + 16);
  pull_reply in;
  caf::binary_deserializer source{sys, buf};
  REQUIRE(!source(in));
  CHECK(in.params.values == out.params.values);
}
