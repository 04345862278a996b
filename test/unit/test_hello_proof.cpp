// The proof of a hello (protocol/hello_proof.hpp): HMAC-SHA256 as RFC 4231
// defines it, over every claim of the hello, and nonces good for one hello.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "protocol/hello_proof.hpp"

namespace downpour::test_hello_proof {
namespace {

TEST_CASE("HMAC-SHA256 gives the answers of RFC 4231's test cases 1 and 2") {
  CHECK(hmac_sha256_hex(std::string(20, '\x0b'), "Hi There") ==
        "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  CHECK(hmac_sha256_hex("Jefe", "what do ya want for nothing?") ==
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST_CASE("a proof changes with the secret and with every claim it covers") {
  const hello_claims base{"00112233445566778899aabbccddeeff", "version=1;cluster-name=a", 1, 2,
                          "node-a"};
  const auto proof = proof_of("a secret of twenty bytes", base);
  CHECK(proof.size() == 64);
  CHECK(proof_of("a secret of twenty bytes", base) == proof);
  CHECK(proof_of("another secret entirely", base) != proof);
  auto changed = [&](auto edit) {
    hello_claims c = base;
    edit(c);
    return proof_of("a secret of twenty bytes", c) != proof;
  };
  CHECK(changed([](hello_claims& c) { c.nonce[0] = '1'; }));
  CHECK(changed([](hello_claims& c) { c.fingerprint += "x"; }));
  CHECK(changed([](hello_claims& c) { c.shard = 0; }));
  CHECK(changed([](hello_claims& c) { c.worker = 3; }));
  CHECK(changed([](hello_claims& c) { c.node = "node-b"; }));
  // Length prefixes: moving a digit from the fingerprint into the shard index
  // gives another text.
  hello_claims a{"n", "fp1", 23, 0, "x"}, b{"n", "fp12", 3, 0, "x"};
  CHECK(proof_of("k", a) != proof_of("k", b));
}

TEST_CASE("only the exact expected proof is the same proof") {
  const auto p = proof_of("secret", hello_claims{"n", "f", 0, 1, "x"});
  CHECK(same_proof(p, p));
  CHECK_FALSE(same_proof(p, p.substr(0, 63)));
  CHECK_FALSE(same_proof(p, ""));
  std::string flipped = p;
  flipped[63] = flipped[63] == '0' ? '1' : '0';
  CHECK_FALSE(same_proof(p, flipped));
}

TEST_CASE("a nonce is fresh, belongs to the node it was issued to and proves one hello only") {
  nonce_book book;
  const auto first = book.issue("node-a");
  CHECK(first.size() == 32);
  CHECK(!book.take("node-b"));
  const auto again = book.issue("node-a");  // replaces the first
  CHECK(again != first);
  CHECK(book.size() == 1);
  CHECK(book.take("node-a") == again);
  CHECK(!book.take("node-a"));  // spent
}

TEST_CASE("the nonce book never holds more than its capacity and forgets the oldest first") {
  nonce_book book;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < nonce_book::capacity + 10; ++i)
    seen.insert(book.issue("node-" + std::to_string(i)));
  CHECK(seen.size() == nonce_book::capacity + 10);
  CHECK(book.size() == nonce_book::capacity);
  CHECK(!book.take("node-0"));
  CHECK(!book.take("node-9"));
  CHECK(book.take("node-10"));
  CHECK(book.take("node-" + std::to_string(nonce_book::capacity + 9)));
}

}  // namespace
}  // namespace downpour::test_hello_proof
