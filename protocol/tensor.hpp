// The float payloads of messages: tensor (owned) and shared_tensor (shared
// read-only within a node), both sent between nodes as a dtype byte, a
// length and raw blobs, never through CAF's element-wise float serializer
// (slow, corrupts NaN, hangs on +inf: shared notes, caf-0.17). Also the
// update arithmetic a shard does over a shared gradient's parts.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "protocol/floats.hpp"
#include "protocol/placement.hpp"
#include "caf/all.hpp"
#include "config/wire_dtype.hpp"

namespace downpour {

// A float buffer serialized as a dtype byte, a length and raw blobs: fp32 is
// bit-exact; bf16 halves the bytes (config/wire_dtype.hpp). The dtype only
// matters on the wire: a message between local actors is never serialized.
struct tensor {
  floats values;
  wire_dtype wire = wire_dtype::fp32;

  tensor() = default;
  tensor(floats v, wire_dtype w = wire_dtype::fp32) : values(std::move(v)), wire(w) {}
  tensor(const std::vector<float>& v, wire_dtype w = wire_dtype::fp32)
      : values(v.begin(), v.end()), wire(w) {}
};

// A float buffer, or parts of one, passed between the actors of one node
// without a copy. Who may write is fixed by the message: a worker's
// gradient buffer goes to every shard and each shard owns its own parts of
// it (it writes its new parameters there); a shard's parameters go to every
// puller read-only (they are never written again: the next update goes into
// the next gradient's buffer). Between nodes only the parts travel,
// concatenated, encoded as a tensor's values, and arrive as one buffer.
struct shared_tensor {
  std::shared_ptr<floats> buffer;
  std::vector<param_range> parts;  // empty: the whole buffer
  wire_dtype wire = wire_dtype::fp32;

  shared_tensor() = default;
  shared_tensor(std::shared_ptr<floats> b, std::vector<param_range> p = {},
                wire_dtype w = wire_dtype::fp32)
      : buffer(std::move(b)), parts(std::move(p)), wire(w) {}
  shared_tensor(floats v, wire_dtype w = wire_dtype::fp32)
      : buffer(std::make_shared<floats>(std::move(v))), wire(w) {}
  shared_tensor(const std::vector<float>& v, wire_dtype w = wire_dtype::fp32)
      : shared_tensor(floats(v.begin(), v.end()), w) {}

  // Floats in all parts.
  std::size_t size() const {
    if (!buffer) return 0;
    if (parts.empty()) return buffer->size();
    std::size_t n = 0;
    for (const auto& p : parts) n += p.size;
    return n;
  }

  // f(data, n, at) for each part, `at` being where it starts in the
  // concatenation.
  template <class F>
  void for_each_part(F&& f) const {
    if (!buffer) return;
    if (parts.empty()) return f(buffer->data(), buffer->size(), std::size_t{0});
    std::size_t at = 0;
    for (const auto& p : parts) {
      f(buffer->data() + p.offset, p.size, at);
      at += p.size;
    }
  }

  // The parts in one piece without a copy, or nullptr if there are several.
  const float* contiguous() const {
    if (!buffer) return nullptr;
    if (parts.empty()) return buffer->data();
    return parts.size() == 1 ? buffer->data() + parts[0].offset : nullptr;
  }

  // The parts concatenated, copied.
  floats values() const {
    floats out(size());
    for_each_part([&](const float* p, std::size_t n, std::size_t at) {
      std::copy(p, p + n, out.begin() + static_cast<std::ptrdiff_t>(at));
    });
    return out;
  }
};

namespace wire_detail {

// bf16 goes through a small stack buffer, chunk by chunk: no allocation.
constexpr std::size_t chunk = 4096;

template <class Serializer>
caf::error save_values(Serializer& f, wire_dtype wire, const float* v, std::size_t size) {
  // CAF 0.17's apply_raw takes void* on both sides; a serializer only reads.
  if (wire == wire_dtype::fp32)
    return size > 0 ? f.apply_raw(size * sizeof(float), const_cast<float*>(v)) : caf::none;
  std::uint16_t buf[chunk];
  for (std::size_t at = 0; at < size; at += chunk) {
    const std::size_t n = std::min(chunk, size - at);
    for (std::size_t i = 0; i < n; ++i) buf[i] = to_bf16(v[at + i]);
    if (auto err = f.apply_raw(n * sizeof(std::uint16_t), buf)) return err;
  }
  return caf::none;
}

template <class Deserializer>
caf::error load_values(Deserializer& f, wire_dtype wire, floats& v) {
  if (wire == wire_dtype::fp32) return v.empty() ? caf::none : f.apply_raw(v.size() * 4, v.data());
  std::uint16_t buf[chunk];
  for (std::size_t at = 0; at < v.size(); at += chunk) {
    const std::size_t n = std::min(chunk, v.size() - at);
    if (auto err = f.apply_raw(n * sizeof(std::uint16_t), buf)) return err;
    for (std::size_t i = 0; i < n; ++i) v[at + i] = from_bf16(buf[i]);
  }
  return caf::none;
}

// The encoding of tensor and shared_tensor: a dtype byte, the length, the
// values as raw blobs.
template <class Deserializer>
caf::error load_tensor(Deserializer& f, wire_dtype& wire, floats& values) {
  std::uint8_t dtype = 0;
  std::size_t n = 0;
  if (auto err = f(dtype)) return err;
  if (dtype > static_cast<std::uint8_t>(wire_dtype::bf16))
    return caf::make_error(caf::sec::invalid_argument,
                           "tensor with unknown wire dtype " + std::to_string(dtype));
  wire = static_cast<wire_dtype>(dtype);
  if (auto err = f.begin_sequence(n)) return err;
  // A hostile length must fail here, not as a huge allocation.
  if (auto* bytes = dynamic_cast<caf::binary_deserializer*>(&f)) {
    const std::size_t width = wire == wire_dtype::bf16 ? 2 : 4;
    if (n > bytes->remaining() / width)
      return caf::make_error(caf::sec::invalid_argument,
                             "tensor of " + std::to_string(n) + " values longer than its message");
  }
  values.resize(n);  // uninitialised: every value is read below
  if (auto err = load_values(f, wire, values)) return err;
  return f.end_sequence();
}

template <class Serializer, class Parts>
caf::error save_tensor(Serializer& f, wire_dtype wire, std::size_t n, const Parts& for_each_part) {
  auto dtype = static_cast<std::uint8_t>(wire);
  if (auto err = f(dtype)) return err;
  if (auto err = f.begin_sequence(n)) return err;
  caf::error failure;
  for_each_part([&](const float* p, std::size_t size, std::size_t) {
    if (!failure) failure = save_values(f, wire, p, size);
  });
  if (failure) return failure;
  return f.end_sequence();
}

}  // namespace wire_detail

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, tensor& x) {
  if constexpr (std::is_base_of<caf::serializer, Inspector>::value) {
    return wire_detail::save_tensor(f, x.wire, x.values.size(), [&](auto&& part) {
      part(x.values.data(), x.values.size(), std::size_t{0});
    });
  } else if constexpr (std::is_base_of<caf::deserializer, Inspector>::value) {
    return wire_detail::load_tensor(f, x.wire, x.values);
  } else {
    return f(caf::meta::type_name("tensor"), static_cast<std::uint64_t>(x.values.size()));
  }
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, shared_tensor& x) {
  if constexpr (std::is_base_of<caf::serializer, Inspector>::value) {
    return wire_detail::save_tensor(f, x.wire, x.size(),
                                    [&](auto&& part) { x.for_each_part(part); });
  } else if constexpr (std::is_base_of<caf::deserializer, Inspector>::value) {
    floats values;
    if (auto err = wire_detail::load_tensor(f, x.wire, values)) return err;
    x.buffer = std::make_shared<floats>(std::move(values));
    x.parts.clear();
    return caf::none;
  } else {
    return f(caf::meta::type_name("shared_tensor"), static_cast<std::uint64_t>(x.size()));
  }
}

// The shard's updates over the parts a shard owns, through the kernels of
// model/update.hpp: each walks the two tensors' parts side by side, so they
// need not be cut alike. Each writes into its first argument.

// grad = params - lr * grad: the new parameters over the pushed gradient
// (checked_sgd_into); false if any gradient was NaN or inf (grad then holds
// garbage).
bool sgd_into_grad(shared_tensor& grad, const shared_tensor& params, float lr);

// sum = params - lr * (sum / count): the new parameters over the sum of the
// step's gradients (mean_sgd_into).
void mean_sgd_into_sum(shared_tensor& sum, const shared_tensor& params, float lr,
                       std::size_t count);

// sum += grad.
void add_into_sum(shared_tensor& sum, const shared_tensor& grad);

// ema -= (1 - decay) * (ema - params) (update_ema).
void ema_toward(float* ema, const shared_tensor& params, float decay);

// True if no value in any part is NaN or inf.
bool all_finite_parts(const shared_tensor& t);

// The values [from, from + n) of t's parts concatenated, copied into out;
// and the same values of t overwritten from in.
void read_range(const shared_tensor& t, std::size_t from, std::size_t n, float* out);
void write_range(shared_tensor& t, std::size_t from, std::size_t n, const float* in);

}  // namespace downpour
