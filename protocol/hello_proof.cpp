#include "protocol/hello_proof.hpp"

#include <openssl/crypto.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <algorithm>
#include <array>
#include <stdexcept>

namespace downpour {
namespace {

std::string hex(const unsigned char* bytes, std::size_t n) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out(2 * n, '0');
  for (std::size_t i = 0; i < n; ++i) {
    out[2 * i] = digits[bytes[i] >> 4];
    out[2 * i + 1] = digits[bytes[i] & 15];
  }
  return out;
}

}  // namespace

std::string hmac_sha256_hex(const std::string& key, const std::string& text) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
  unsigned int n = 0;
  if (!HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
            reinterpret_cast<const unsigned char*>(text.data()), text.size(), mac.data(), &n))
    throw std::runtime_error("HMAC-SHA256 failed in OpenSSL");
  return hex(mac.data(), n);
}

std::string proof_of(const std::string& secret, const hello_claims& c) {
  std::string text;
  for (const std::string& part : {c.nonce, c.fingerprint, std::to_string(c.shard),
                                  std::to_string(c.worker), c.node})
    text += std::to_string(part.size()) + ":" + part + ";";
  return hmac_sha256_hex(secret, text);
}

bool same_proof(const std::string& expected, const std::string& given) {
  return expected.size() == given.size() &&
         CRYPTO_memcmp(expected.data(), given.data(), expected.size()) == 0;
}

std::string nonce_book::issue(const std::string& node) {
  std::array<unsigned char, 16> bytes{};
  if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1)
    throw std::runtime_error("no random bytes from OpenSSL for a hello nonce");
  take(node);
  if (entries_.size() >= capacity) entries_.pop_front();
  entries_.push_back({node, hex(bytes.data(), bytes.size())});
  return entries_.back().nonce;
}

std::optional<std::string> nonce_book::take(const std::string& node) {
  auto it = std::find_if(entries_.begin(), entries_.end(),
                         [&](const entry& e) { return e.node == node; });
  if (it == entries_.end()) return std::nullopt;
  auto nonce = std::move(it->nonce);
  entries_.erase(it);
  return nonce;
}

}  // namespace downpour
