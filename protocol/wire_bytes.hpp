// The bytes of the messages with tensors or rows that cross CAF's network
// layer, counted where they are encoded and decoded. CAF 0.17.6 tells a node
// no message's size (its BASP broker has no hooks), so a message counts the
// bytes its own inspect() writes into, or reads from, BASP's binary buffers:
// the whole struct with its blobs, but not BASP's 32-byte header, the type
// names and atoms around it, nor TLS. A message between the actors of one
// node is never serialized and counts nothing; neither does one encoded
// anywhere else (a test's or a bench's serializer on a system without meters).
#pragma once

#include <type_traits>

#include "caf/all.hpp"
#include "protocol/metered_config.hpp"

namespace downpour {

namespace wire_detail {

enum class direction { sent, received };

inline void count_bytes(caf::execution_unit* ctx, peer_kind other_end, direction d,
                        std::size_t bytes) {
  if (ctx == nullptr) return;
  auto* meters = meters_of(ctx->system());
  if (meters == nullptr) return;
  // Every such message has a shard at one end: at its ps the peer is the
  // other end, anywhere else it is the ps.
  const auto peer = static_cast<std::size_t>(meters->holds_shards() ? other_end : peer_kind::ps);
  auto& counts = d == direction::sent ? meters->wire().sent : meters->wire().received;
  counts[peer].fetch_add(bytes, std::memory_order_relaxed);
}

}  // namespace wire_detail

// inspect() of a message between a shard and other_end (a worker or the
// chief): fields() inspects its fields, and the bytes it takes on the wire
// are counted on the node's wire meter (reporting/meters.hpp).
template <class Inspector, class Fields>
typename Inspector::result_type metered(Inspector& f, peer_kind other_end, Fields fields) {
  using wire_detail::direction;
  if constexpr (std::is_base_of<caf::serializer, Inspector>::value) {
    auto* sink = dynamic_cast<caf::binary_serializer*>(&f);
    const std::size_t before = sink ? sink->write_pos() : 0;
    auto err = fields();
    if (sink && !err)
      wire_detail::count_bytes(f.context(), other_end, direction::sent,
                               sink->write_pos() - before);
    return err;
  } else if constexpr (std::is_base_of<caf::deserializer, Inspector>::value) {
    auto* source = dynamic_cast<caf::binary_deserializer*>(&f);
    const std::size_t before = source ? source->remaining() : 0;
    auto err = fields();
    if (source && !err)
      wire_detail::count_bytes(f.context(), other_end, direction::received,
                               before - source->remaining());
    return err;
  } else {
    return fields();
  }
}

}  // namespace downpour
