// doctest for tests of LibTorch code: LibTorch's headers bring glog, whose
// CHECK macros abort the process instead of reporting a failed check. This
// header includes LibTorch first, drops glog's macros, then doctest; the
// torch tests include it before anything else.
#pragma once

#include <torch/torch.h>

#undef CHECK
#undef CHECK_EQ
#undef CHECK_NE
#undef CHECK_LT
#undef CHECK_LE
#undef CHECK_GT
#undef CHECK_GE

#include <doctest/doctest.h>
