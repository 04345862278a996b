// The cryptography of a hello's proof, apart from CAF: HMAC-SHA256 over the
// claims of a hello and a nonce, and the nonces a receiver issued. What a
// hello is and how it crosses the wire is protocol/hello.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>

namespace downpour {

// HMAC-SHA256(key, text) as 64 lowercase hex digits.
std::string hmac_sha256_hex(const std::string& key, const std::string& text);

// What a hello's proof covers; each part is length-prefixed in the proven
// text, so no two hellos share one (a fingerprint ending in digits cannot
// pass for a shard index).
struct hello_claims {
  std::string nonce;        // issued by the receiver to this node
  std::string fingerprint;  // the sender's settings
  std::uint32_t shard = 0;  // the receiver it means
  std::uint32_t worker = 0;  // the sender's worker index
  std::string node;         // the sender's CAF node id, as text
};

std::string proof_of(const std::string& secret, const hello_claims& claims);

// Whether a given proof equals the expected one, in time independent of
// where they differ.
bool same_proof(const std::string& expected, const std::string& given);

// Nonces issued to remote nodes (by node id text), one per node, each good
// for one hello. The book is bounded: a stranger asking from many nodes
// pushes out the oldest nonces (whose holders ask again), never grows the
// receiver's memory.
class nonce_book {
 public:
  static constexpr std::size_t capacity = 1024;

  // A fresh random nonce (32 hex digits) for this node, replacing one it had.
  std::string issue(const std::string& node);
  // The nonce issued to this node, removed: a nonce proves one hello only.
  std::optional<std::string> take(const std::string& node);
  std::size_t size() const { return entries_.size(); }

 private:
  struct entry {
    std::string node;
    std::string nonce;
  };
  std::deque<entry> entries_;
};

}  // namespace downpour
