// A sparse variable's storage, as a parameter shard holds it: N rows of d
// floats keyed by a 64-bit key in [0, N), of which only the rows pushed to
// exist. Memory grows with those rows (an open-addressing hash from key to
// a row of a chunked arena), never with N. Updates follow the variable's
// rule (model/row_update.hpp) with its slots kept next to the row; a push
// that is out of range,
// unsorted, duplicated, mis-sized or not finite is refused whole, counted and
// never applied.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "model/huge_pages.hpp"
#include "model/layout.hpp"
#include "model/row_update.hpp"

namespace downpour {

struct sparse_table_spec {
  std::uint64_t rows = 0;  // N: keys are first_key .. first_key + N - 1
  std::size_t dim = 1;     // floats per row
  // zeros, or tf.truncated_normal_initializer(stddev) drawn from a hash of
  // (init_seed, key, column): a row starts the same whichever shard holds it
  // and whenever it is first pushed.
  initializer init;
  std::uint64_t init_seed = 0;
  update_spec update;  // the variable's rule
  regularizer reg;
  std::uint64_t first_key = 0;  // the variable's first key in the model's key space
  std::uint64_t end_key() const { return first_key + rows; }
  std::size_t slots() const { return slots_of(update.rule) * dim; }  // floats per row
};

// The job's schedule where an update happens: its learning rate and the
// global step the update makes (only Adam's bias correction reads it; a
// learning rate alone is step 0).
struct update_moment {
  update_moment(float lr, std::int64_t at = 0) : learning_rate(lr), step(at) {}  // NOLINT
  float learning_rate;
  std::int64_t step;
};

// Rows by key, keys strictly ascending, dim floats each (keys.size() * dim
// values): a pull's answer, a push's gradient.
struct keyed_rows {
  std::vector<std::uint64_t> keys;
  std::vector<float> values;
};

// Every row a table holds, keys ascending: what a checkpoint keeps of a
// shard's sparse variable. accumulators: the rule's slots (spec.slots() per
// row, slot by slot: AdaGrad's accumulators, FTRL's n then z...); empty for
// SGD, or to start every row's slots at their initial values.
struct row_dump {
  std::vector<std::uint64_t> keys;
  std::vector<float> values;
  std::vector<float> accumulators;
};

// Where a held row lies in a table's arena, or kNoRow for a key it does not
// hold: what a pull found, so that the push of the same keys writes through
// it instead of hashing every key again. A row keeps its place until the
// table is loaded anew.
using row_ref = std::uint32_t;
inline constexpr row_ref kNoRow = 0xffffffffu;

// Why a pull or push was refused; one value per distinct fault.
enum class sparse_refusal {
  key_out_of_range,    // a key outside [first_key, first_key + N)
  keys_not_ascending,  // a key below the one before it
  duplicate_key,       // a key twice
  value_count,         // values.size() != keys.size() * dim
  not_finite,          // a NaN or inf value
};
inline constexpr std::size_t kSparseRefusals = 5;

// "key_out_of_range" etc.
const char* to_string(sparse_refusal why);

class sparse_table {
 public:
  // Throws std::invalid_argument for N or d of 0, or keys past 2^63.
  explicit sparse_table(const sparse_table_spec& spec);

  const sparse_table_spec& spec() const { return spec_; }
  std::size_t rows_held() const { return rows_held_; }
  // The hash slots and arena chunks allocated.
  std::size_t bytes_used() const;
  // Floats stored per row: the dim values, then the rule's slots.
  std::size_t row_stride() const { return stride_; }

  // Why keys cannot be pulled, or nothing.
  std::optional<sparse_refusal> check_keys(const std::vector<std::uint64_t>& keys) const;

  // The values of the rows keys (which check_keys must accept; throws
  // std::invalid_argument otherwise), dim floats each. A row never pushed
  // reads as its initial value and is not created.
  std::vector<float> pull(const std::vector<std::uint64_t>& keys) const;

  // pull's values of the n keys at keys, written to into (n * dim floats),
  // and where each key's row is. The keys must be ones check_keys accepts.
  std::vector<row_ref> read(const std::uint64_t* keys, std::size_t n, float* into) const;

  // One step of the rule for each of the n keys, dim gradient floats each,
  // through the rows read found (refs; nullptr: every key looked up). A
  // key held by no row then is looked up again, and its row created if it
  // is still missing. The caller has checked the keys, sizes and values.
  void apply(const std::uint64_t* keys, const row_ref* refs, std::size_t n, const float* gradient,
             update_moment at);

  // Applies one step of the rule to every row of gradient, creating the
  // rows first touched; or refuses the whole push, counts the refusal and
  // changes nothing.
  std::optional<sparse_refusal> push(const keyed_rows& gradient, update_moment at);

  std::uint64_t refused(sparse_refusal why) const;

  // A held row's row_stride() floats, or nullptr if key was never pushed.
  const float* find(std::uint64_t key) const;

  // The rows held with keys in [first, last), keys ascending.
  row_dump dump(std::uint64_t first, std::uint64_t last) const;
  // Replaces everything held by rows (a restore); refusal counts stay.
  // Throws std::invalid_argument for keys not ascending or >= N, or
  // sizes that do not fit dim (accumulators: none, or the rule's slots of
  // every row).
  void load(const row_dump& rows);

 private:
  // A key and the arena index of its row: one cache line holds both.
  struct slot {
    std::uint64_t key;
    std::uint32_t row;
  };
  std::size_t slot_of(std::uint64_t key) const;  // its slot, or the empty one it would take
  // A key's slot as slot_of found it, and how many slots there were then.
  struct found_slot {
    std::size_t at;
    std::size_t slots;
  };
  class lookahead;  // the slots of the keys ahead of the one at hand, each found once
  // The row key i of a push updates: its ref's, found, or created.
  float* row_for_update(const std::uint64_t* keys, const row_ref* refs, std::size_t n,
                        std::size_t i);
  // The row of key, found at f before this push created rows, or created.
  float* row_found(std::uint64_t key, found_slot f);
  float* row(std::size_t index) const;
  float* create(std::uint64_t key, std::size_t at);
  void grow_slots();
  void fill_initial(std::uint64_t key, float* values) const;
  void check_dump(const row_dump& rows) const;  // load's refusals

  sparse_table_spec spec_;
  std::size_t stride_;
  unsigned chunk_bits_;  // an arena chunk holds 2^chunk_bits_ rows
  std::vector<slot, huge_page_allocator<slot>> slots_;
  std::vector<std::unique_ptr<float[]>> chunks_;
  std::size_t rows_held_ = 0;
  std::array<std::uint64_t, kSparseRefusals> refused_{};
};

// TensorFlow's SparseConditionalAccumulator rule for a sync round: the union
// of the gradients' keys, each row the mean over the gradients that hold it
// (a row pushed by one worker of two keeps its full value). Each gradient
// must be one a table would accept (ascending keys, dim values per key).
keyed_rows mean_per_row(const std::vector<keyed_rows>& gradients, std::size_t dim);

}  // namespace downpour
