// The convolution block's loops that are not matrix products: im2col and
// its adjoint, and 2x2 max pooling with bias and ReLU, forward and back.
// Instantiated for float (training) and double (the gradient check).
#pragma once

#include <cstddef>
#include <cstdint>

namespace downpour::cnn_kernels {

// One convolution block on images of h x w x in (NHWC), SAME padding,
// stride 1, out filters.
struct conv_block {
  std::size_t h, w, in, out, k;
  std::size_t pixels() const { return h * w; }
  std::size_t patch() const { return k * k * in; }
  std::size_t pooled() const { return (h / 2) * (w / 2); }
};

// The patches of count images at in: one row of patch() values per output
// pixel, in HWIO order (kernel row, column, input channel), zeros off the edge.
template <class T>
void im2col(const conv_block& g, const T* in, std::size_t count, T* cols);

// The same patches column-major: one plane per kernel entry, each holding
// that entry for every output pixel. For an input of one channel each plane
// row is a shifted image row, copied in one run where row-major patches
// copy kernel-width runs (5 floats); for many channels the row-major
// im2col copies longer runs and is the faster one.
template <class T>
void im2col_planes(const conv_block& g, const T* in, std::size_t count, T* cols);

// din += the patches' gradients dcols (row-major as im2col's), each summed
// into the input it came from.
template <class T>
void col2im_add(const conv_block& g, const T* dcols, std::size_t count, T* din);

// act = ReLU(2x2 max of conv + bias) per channel, NHWC; arg records where
// each window's maximum lies in conv. conv holds one plane per channel (the
// count images' pixels, column-major [pixels, out]): Eigen's product fills a
// matrix with few columns two times faster that way than row-major.
template <class T>
void pool_forward(const conv_block& g, const T* conv, std::size_t count, const T* bias, T* act,
                  std::int32_t* arg);

// dconv (planes like pool_forward's conv): each pooled gradient at its
// window's maximum where ReLU passed it, zero elsewhere; dbias += the same
// gradients summed per channel.
template <class T>
void pool_backward(const conv_block& g, const T* act, const std::int32_t* arg, const T* dact,
                   std::size_t count, T* dconv, T* dbias);

}  // namespace downpour::cnn_kernels
