#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "protocol/messages.hpp"
#include "protocol/metered_config.hpp"
#include "caf/binary_deserializer.hpp"
#include "caf/binary_serializer.hpp"

namespace test_messages {

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
  push_msg out{42, 3, shared_tensor{special_values()}};
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  REQUIRE(!sink(out));
  // Raw blob: header plus exactly the float bytes, not one record per float.
  CHECK(buf.size() < out.grad.size() * sizeof(float) + 32);
  push_msg in;
  caf::binary_deserializer source{sys, buf};
  REQUIRE(!source(in));
  CHECK(in.step == 42);
  CHECK(in.worker == 3);
  REQUIRE(in.grad.size() == out.grad.size());
  CHECK(std::memcmp(in.grad.contiguous(), out.grad.contiguous(), out.grad.size() * sizeof(float)) ==
        0);
}

TEST_CASE("a push of parts of a shared gradient carries exactly those parts, in order") {
  caf::actor_system_config cfg;
  cfg.add_message_types<caf::id_block::downpour>();
  caf::actor_system sys{cfg};
  auto whole = std::make_shared<floats>(floats{0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f});
  for (auto wire : {wire_dtype::fp32, wire_dtype::bf16}) {
    push_msg out{9, 1, shared_tensor{whole, {{4, 2}, {0, 1}}, wire}};
    CHECK(out.grad.size() == 3);
    CHECK(out.grad.contiguous() == nullptr);
    std::vector<char> buf;
    caf::binary_serializer sink{sys, buf};
    REQUIRE(!sink(out));
    push_msg in;
    caf::binary_deserializer source{sys, buf};
    REQUIRE(!source(in));
    CHECK(in.grad.parts.empty());
    CHECK(to_vector(in.grad.values()) == std::vector<float>{4.5f, 5.5f, 0.5f});
  }
}

TEST_CASE("a full-size tensor serializes as one blob of its bytes") {
  caf::actor_system_config cfg;
  cfg.add_message_types<caf::id_block::downpour>();
  caf::actor_system sys{cfg};
  pull_reply out{7, shared_tensor{std::vector<float>(397510, 0.25f)}};
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  REQUIRE(!sink(out));
  CHECK(buf.size() <= 397510 * sizeof(float) + 16);
  pull_reply in;
  caf::binary_deserializer source{sys, buf};
  REQUIRE(!source(in));
  CHECK(in.params.values() == out.params.values());
}

TEST_CASE("bf16 keeps the upper half of a float rounded to nearest even, NaN and inf kept") {
  CHECK(from_bf16(to_bf16(1.0f)) == 1.0f);
  CHECK(from_bf16(to_bf16(-2.5f)) == -2.5f);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties go to the even mantissa (1).
  CHECK(from_bf16(to_bf16(1.0f + std::ldexp(1.0f, -8))) == 1.0f);
  CHECK(from_bf16(to_bf16(1.0f + 3 * std::ldexp(1.0f, -8))) == 1.0f + std::ldexp(1.0f, -6));
  CHECK(std::isnan(from_bf16(to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  CHECK(std::isnan(from_bf16(to_bf16(-std::numeric_limits<float>::quiet_NaN()))));
  // A NaN whose payload sits only in the dropped half stays NaN, not inf.
  std::uint32_t low_nan = 0x7f800001u;
  float x;
  std::memcpy(&x, &low_nan, sizeof x);
  CHECK(std::isnan(from_bf16(to_bf16(x))));
  CHECK(from_bf16(to_bf16(std::numeric_limits<float>::infinity())) ==
        std::numeric_limits<float>::infinity());
  CHECK(from_bf16(to_bf16(-std::numeric_limits<float>::infinity())) ==
        -std::numeric_limits<float>::infinity());
  for (float v : {0.1f, -0.0371f, 123.456f, 1e-20f})
    CHECK(std::fabs(from_bf16(to_bf16(v)) - v) <= std::fabs(v) * std::ldexp(1.0f, -8));
}

TEST_CASE("a bf16 tensor travels in half the bytes and arrives rounded") {
  caf::actor_system_config cfg;
  cfg.add_message_types<caf::id_block::downpour>();
  caf::actor_system sys{cfg};
  std::vector<float> values(10000);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = std::sin(0.001f * i);
  push_msg out{5, 1, shared_tensor{values, wire_dtype::bf16}};
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  REQUIRE(!sink(out));
  CHECK(buf.size() <= values.size() * 2 + 32);
  push_msg in;
  caf::binary_deserializer source{sys, buf};
  REQUIRE(!source(in));
  CHECK(in.grad.wire == wire_dtype::bf16);
  const auto got = in.grad.values();
  REQUIRE(got.size() == values.size());
  for (std::size_t i = 0; i < values.size(); ++i) REQUIRE(got[i] == from_bf16(to_bf16(values[i])));
}

TEST_CASE("a tensor with a hostile length or an unknown dtype fails to decode without allocating") {
  caf::actor_system_config cfg;
  cfg.add_message_types<caf::id_block::downpour>();
  caf::actor_system sys{cfg};
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  std::uint8_t dtype = 0;
  std::size_t claimed = std::size_t{1} << 30;  // 4 GiB of floats in a 5-byte message
  REQUIRE(!sink(dtype));
  REQUIRE(!sink.begin_sequence(claimed));
  tensor in;
  caf::binary_deserializer source{sys, buf};
  CHECK(source(in));
  CHECK(in.values.empty());
  std::vector<char> unknown{7, 0};
  tensor in2;
  caf::binary_deserializer source2{sys, unknown};
  CHECK(source2(in2));
}

TEST_CASE("a message with tensors or rows counts the bytes it takes on the wire once, by the kind "
          "of node at the other end") {
  metered_config cfg;
  cfg.add_message_types<caf::id_block::downpour>();
  caf::actor_system sys{cfg};
  auto& wire = cfg.meters->wire();
  const auto at = [](peer_kind k) { return static_cast<std::size_t>(k); };
  // On a worker: a push goes to a ps; its answer comes from one.
  push_msg push{5, 1, shared_tensor{std::vector<float>(1000, 0.5f)}, key_list{{1, 2, 3}},
                tensor{std::vector<float>{0.1f, 0.2f, 0.3f}}};
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  REQUIRE(!sink(push));
  CHECK(buf.size() > 1000 * sizeof(float) + 3 * sizeof(std::uint64_t));
  CHECK(wire.sent[at(peer_kind::ps)] == buf.size());
  // A snapshot nests a page of rows: its bytes count once, in the snapshot's.
  shard_snapshot snap;
  snap.params = tensor{std::vector<float>(10, 1.0f)};
  snap.rows = row_part{0, 8, key_list{{4, 6}}, tensor{std::vector<float>{1, 2}}, tensor{}};
  std::vector<char> snap_buf;
  caf::binary_serializer snap_sink{sys, snap_buf};
  REQUIRE(!snap_sink(snap));
  shard_snapshot snap_in;
  caf::binary_deserializer snap_source{sys, snap_buf};
  REQUIRE(!snap_source(snap_in));
  CHECK(snap_in.rows.keys.keys == std::vector<std::uint64_t>{4, 6});
  CHECK(wire.received[at(peer_kind::ps)] == snap_buf.size());
  // On a ps (a node with a shard): the same push comes from a worker.
  cfg.meters->shard(0);
  push_msg in;
  caf::binary_deserializer source{sys, buf};
  REQUIRE(!source(in));
  CHECK(in.keys.keys == std::vector<std::uint64_t>{1, 2, 3});
  CHECK(wire.received[at(peer_kind::worker)] == buf.size());
  CHECK(wire.received[at(peer_kind::chief)] == 0);
  CHECK(wire.sent[at(peer_kind::worker)] == 0);
  // A page of rows alone is between the chief and a ps.
  std::vector<char> page_buf;
  caf::binary_serializer page_sink{sys, page_buf};
  REQUIRE(!page_sink(snap.rows));
  CHECK(wire.sent[at(peer_kind::chief)] == page_buf.size());
  CHECK(wire.sent[at(peer_kind::ps)] == buf.size() + snap_buf.size());  // unchanged
}

}  // namespace test_messages
