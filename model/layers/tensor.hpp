// What the layers pass each other: row-major matrix views over memory someone
// else owns (a batch's features, a layer's buffer, the model's flat parameter
// and gradient buffers), and the buffers a layer owns, sized once for the
// largest batch so that a training step allocates nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace downpour::layers {

// rows x cols values, row-major, at data. A view: copying it copies no values.
template <class T>
struct tensor {
  T* data = nullptr;
  std::size_t rows = 0;
  std::size_t cols = 0;

  tensor() = default;
  tensor(T* values, std::size_t row_count, std::size_t col_count)
      : data(values), rows(row_count), cols(col_count) {}
  // A writable view reads as a read-only one.
  template <class U, class = std::enable_if_t<std::is_same_v<const U, T>>>
  tensor(const tensor<U>& other)  // implicit, as T* converts to const T*
      : data(other.data), rows(other.rows), cols(other.cols) {}

  std::size_t size() const { return rows * cols; }
  T* row(std::size_t i) const { return data + i * cols; }
};

template <class T>
using const_tensor = tensor<const T>;

// Whether a forward pass trains (dropout drops) or evaluates (it does not).
enum class phase { training, evaluation };

// What a forward pass is for: dropout's mask is a function of its seed and
// the step, so a step can be recomputed exactly (a retried push, a test).
struct pass {
  phase mode = phase::training;
  std::uint64_t step = 0;
};

// 64-byte aligned storage: what an Eigen matrix of the same values would get,
// so a product into a layer's buffer runs the kernels it runs for the
// built-in models' matrices.
template <class T>
struct aligned_allocator {
  using value_type = T;
  static constexpr std::align_val_t alignment{64};
  aligned_allocator() = default;
  template <class U>
  explicit aligned_allocator(const aligned_allocator<U>&) {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), alignment)); }
  void deallocate(T* p, std::size_t) { ::operator delete(p, alignment); }
  friend bool operator==(const aligned_allocator&, const aligned_allocator&) { return true; }
  friend bool operator!=(const aligned_allocator&, const aligned_allocator&) { return false; }
};

// A layer's own rows x width values for up to the reserved number of rows.
template <class T>
class batch_buffer {
 public:
  batch_buffer() = default;
  explicit batch_buffer(std::size_t width) : width_(width) {}

  void reserve(std::size_t max_rows) {
    values_.assign(max_rows * width_, T(0));
    capacity_ = max_rows;
  }
  std::size_t width() const { return width_; }

  // The first n rows. Throws std::length_error naming who for more rows than
  // reserved: a buffer never grows inside a step.
  tensor<T> rows(std::size_t n, const char* who) {
    if (n > capacity_)
      throw std::length_error(std::string(who) + ": a batch of " + std::to_string(n) +
                              " rows, more than the " + std::to_string(capacity_) +
                              " reserved (reserve(max_batch) first)");
    return tensor<T>(values_.data(), n, width_);
  }

 private:
  std::size_t width_ = 0;
  std::size_t capacity_ = 0;
  std::vector<T, aligned_allocator<T>> values_;
};

}  // namespace downpour::layers
