// The keys of a sparse variable's rows in a message: a length and one raw
// blob of little-endian uint64 values, like a tensor's floats (never one
// element at a time through CAF's serializer), and a length that claims more
// than its message carries fails before anything is allocated.
#pragma once

#include <cstdint>
#include <vector>

#include "caf/all.hpp"

namespace downpour {

struct key_list {
  std::vector<std::uint64_t> keys;

  key_list() = default;
  key_list(std::vector<std::uint64_t> k) : keys(std::move(k)) {}
  std::size_t size() const { return keys.size(); }
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, key_list& x) {
  if constexpr (std::is_base_of<caf::serializer, Inspector>::value) {
    std::size_t n = x.keys.size();
    if (auto err = f.begin_sequence(n)) return err;
    if (n > 0)
      if (auto err = f.apply_raw(n * sizeof(std::uint64_t), x.keys.data())) return err;
    return f.end_sequence();
  } else if constexpr (std::is_base_of<caf::deserializer, Inspector>::value) {
    std::size_t n = 0;
    if (auto err = f.begin_sequence(n)) return err;
    if (auto* bytes = dynamic_cast<caf::binary_deserializer*>(&f))
      if (n > bytes->remaining() / sizeof(std::uint64_t))
        return caf::make_error(caf::sec::invalid_argument, "key list of " + std::to_string(n) +
                                                               " keys longer than its message");
    x.keys.resize(n);
    if (n > 0)
      if (auto err = f.apply_raw(n * sizeof(std::uint64_t), x.keys.data())) return err;
    return f.end_sequence();
  } else {
    return f(caf::meta::type_name("key_list"), static_cast<std::uint64_t>(x.keys.size()));
  }
}

}  // namespace downpour
