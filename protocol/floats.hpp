// The float buffer of every tensor and hot-path buffer. Its allocator leaves
// new elements uninitialised: a tensor decoded from the wire, or a buffer
// about to be overwritten, would otherwise be zero-filled first, a whole
// extra pass over 1.6 MB per message on the network thread.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace downpour {

template <class T>
struct uninit_allocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = uninit_allocator<U>;
  };
  uninit_allocator() = default;
  template <class U>
  uninit_allocator(const uninit_allocator<U>&) noexcept {}
  // Default construction (resize) leaves trivial types uninitialised.
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible<U>::value) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

using floats = std::vector<float, uninit_allocator<float>>;

inline floats to_floats(const std::vector<float>& v) {
  return floats(v.begin(), v.end());
}
inline std::vector<float> to_vector(const floats& v) {
  return std::vector<float>(v.begin(), v.end());
}

// The bits of a float, to compare or send it exactly.
inline std::uint32_t float_bits(float x) {
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
}

}  // namespace downpour
