// A checkpoint's row variables as `downpour export` writes them and
// `downpour inspect` names them: each variable by its name, its rows held
// by their row index within it (key - first_key), their values and each
// slot of its update rule under the slot's TensorFlow name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <ostream>
#include <vector>

#include "runtime/files/checkpoint.hpp"
#include "runtime/files/npz.hpp"

namespace downpour {

// NAME/keys (uint64 row indices), NAME/values ([held, cols]) and, if the
// checkpoint holds slots, NAME/SLOT ([held, cols]) per slot of the rule:
// momentum, accumulators (AdaGrad), m and v (Adam), accumulators and linear
// (FTRL). The arrays point into storage, kept with them.
struct row_arrays {
  std::list<std::vector<std::uint64_t>> keys;
  std::list<std::vector<float>> floats;
  std::vector<npy_array> arrays;
};
row_arrays row_arrays_of(const checkpoint& c);

// One line per row variable: its shape, rule and rows held; then how
// `ps` parameter servers would split the key space, and the rows of each.
void inspect_row_variables(const checkpoint_info& info, std::size_t ps, std::ostream& out);

}  // namespace downpour
