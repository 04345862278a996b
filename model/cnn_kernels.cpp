#include "model/cnn_kernels.hpp"

#include <algorithm>

namespace downpour::cnn_kernels {
namespace {

// For each output pixel of count images, the runs of its patch row:
// copy(col, src, n) where n patch entries from col on take the input entries
// from src on, zero(col, n) where they lie off the image. One walk for
// im2col and its adjoint, so the two cannot disagree on the layout.
template <class Copy, class Zero>
void walk_patches(const conv_block& g, std::size_t count, Copy copy, Zero zero) {
  const std::ptrdiff_t h = g.h, w = g.w, k = g.k, pad = g.k / 2, c = g.in;
  std::size_t col = 0;
  for (std::size_t img = 0; img < count; ++img) {
    const std::size_t image = img * g.pixels() * g.in;
    for (std::ptrdiff_t y = 0; y < h; ++y)
      for (std::ptrdiff_t x = 0; x < w; ++x)
        for (std::ptrdiff_t ky = 0; ky < k; ++ky, col += k * c) {
          const std::ptrdiff_t sy = y + ky - pad;
          if (sy < 0 || sy >= h) {
            zero(col, k * c);
            continue;
          }
          // Kernel columns x0..x1 fall on the image: in NHWC one contiguous run.
          const std::ptrdiff_t x0 = std::max<std::ptrdiff_t>(0, pad - x);
          const std::ptrdiff_t x1 = std::min<std::ptrdiff_t>(k, w - x + pad);
          if (x0 > 0) zero(col, x0 * c);
          copy(col + x0 * c, image + (sy * w + x - pad + x0) * c, (x1 - x0) * c);
          if (x1 < k) zero(col + x1 * c, (k - x1) * c);
        }
  }
}

}  // namespace

template <class T>
void im2col(const conv_block& g, const T* in, std::size_t count, T* cols) {
  walk_patches(
      g, count,
      [&](std::size_t col, std::size_t src, std::size_t n) {
        std::copy_n(in + src, n, cols + col);
      },
      [&](std::size_t col, std::size_t n) { std::fill_n(cols + col, n, T(0)); });
}

template <class T>
void im2col_planes(const conv_block& g, const T* in, std::size_t count, T* cols) {
  const std::ptrdiff_t h = g.h, w = g.w, k = g.k, pad = g.k / 2, c = g.in;
  T* out = cols;
  for (std::ptrdiff_t ky = 0; ky < k; ++ky)
    for (std::ptrdiff_t kx = 0; kx < k; ++kx)
      for (std::ptrdiff_t ci = 0; ci < c; ++ci) {
        // Output columns x0..x1 read the image; the others lie off its edge.
        const std::ptrdiff_t x0 = std::max<std::ptrdiff_t>(0, pad - kx);
        const std::ptrdiff_t x1 = std::min<std::ptrdiff_t>(w, w + pad - kx);
        for (std::size_t img = 0; img < count; ++img)
          for (std::ptrdiff_t y = 0; y < h; ++y, out += w) {
            const std::ptrdiff_t sy = y + ky - pad;
            if (sy < 0 || sy >= h) {
              std::fill_n(out, w, T(0));
              continue;
            }
            const T* src = in + ((img * h + sy) * w + kx - pad) * c + ci;
            std::fill_n(out, x0, T(0));
            for (std::ptrdiff_t x = x0; x < x1; ++x) out[x] = src[x * c];
            std::fill_n(out + x1, w - x1, T(0));
          }
      }
}

template <class T>
void col2im_add(const conv_block& g, const T* dcols, std::size_t count, T* din) {
  walk_patches(
      g, count,
      [&](std::size_t col, std::size_t src, std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) din[src + i] += dcols[col + i];
      },
      [](std::size_t, std::size_t) {});
}

// The max commutes with a per-channel bias and with ReLU, so pooling first
// leaves both a quarter of the values to act on.
template <class T>
void pool_forward(const conv_block& g, const T* conv, std::size_t count, const T* bias, T* act,
                  std::int32_t* arg) {
  const std::size_t plane = count * g.pixels();
  for (std::size_t img = 0; img < count; ++img)
    for (std::size_t py = 0; py < g.h / 2; ++py)
      for (std::size_t px = 0; px < g.w / 2; ++px) {
        const std::size_t top_left = (img * g.h + 2 * py) * g.w + 2 * px;
        const std::size_t window[4] = {top_left, top_left + 1, top_left + g.w,
                                       top_left + g.w + 1};
        for (std::size_t c = 0; c < g.out; ++c, ++act, ++arg) {
          const T* channel = conv + c * plane;
          std::size_t best = window[0];
          for (int q = 1; q < 4; ++q)
            if (channel[window[q]] > channel[best]) best = window[q];
          *act = std::max(channel[best] + bias[c], T(0));
          *arg = static_cast<std::int32_t>(c * plane + best);
        }
      }
}

template <class T>
void pool_backward(const conv_block& g, const T* act, const std::int32_t* arg, const T* dact,
                   std::size_t count, T* dconv, T* dbias) {
  std::fill_n(dconv, count * g.pixels() * g.out, T(0));
  for (std::size_t p = 0; p < count * g.pooled(); ++p)
    for (std::size_t c = 0; c < g.out; ++c, ++act, ++arg, ++dact)
      if (*act > T(0)) {
        dconv[*arg] = *dact;
        dbias[c] += *dact;
      }
}

#define DOWNPOUR_CNN_KERNELS(T)                                                               \
  template void im2col<T>(const conv_block&, const T*, std::size_t, T*);                    \
  template void im2col_planes<T>(const conv_block&, const T*, std::size_t, T*);             \
  template void col2im_add<T>(const conv_block&, const T*, std::size_t, T*);                \
  template void pool_forward<T>(const conv_block&, const T*, std::size_t, const T*, T*,     \
                                std::int32_t*);                                             \
  template void pool_backward<T>(const conv_block&, const T*, const std::int32_t*, const T*, \
                                 std::size_t, T*, T*);
DOWNPOUR_CNN_KERNELS(float)
DOWNPOUR_CNN_KERNELS(double)
#undef DOWNPOUR_CNN_KERNELS

}  // namespace downpour::cnn_kernels
