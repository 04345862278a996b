// Checkpoints: one file per save, model.ckpt-STEP, in the checkpoint dir, plus
// TensorFlow's text index "checkpoint" naming the kept ones (newest last).
//
// File layout (cereal PortableBinaryArchive, little-endian on disk):
//   "DOWNPOUR-CKPT"                       13 raw bytes, so `head -c13` identifies it
//   archive: u32 format version, u64 payload bytes, u32 CRC-32 (zlib) of the payload
//   payload, its own archive: the model's kind and spec, its variables (name,
//     offset, rows, cols, regularized), i64 global step, mode, f64 wall time,
//     u64 counts, then the parameters and the EMA shadows as
//     cereal::binary_data (bit-exact, NaNs kept); format 3 and 4 add one
//     row variable's rows, format 4 the workers' read positions last, format
//     5 any number of row variables, each with its update rule (the rows
//     of all of them by key, each key's slots next to its values)
// Format 1 (before models other than the MLP) opened the payload with the
// MLP's u64 input, hidden and classes instead of kind and spec; it is read
// as the MLP it names.
// The length comes before the payload so that a truncated file is named as
// such without parsing it, and the CRC catches any other damage.
//
// Saving is crash-safe: each file is written to a hidden temporary in the same
// directory, fsynced, renamed and the directory fsynced; the index follows the
// same way, and pruned files are deleted only after the new index is in place.
// A kill at any moment leaves the old set or the new set, never a partial file
// under a checkpoint name. The moments that matter are the save_stage values
// below; test_checkpoint_crash kills a saving process at each of them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/checkpoint_data.hpp"
#include "model/layout.hpp"

namespace downpour {

// Thrown for any unreadable, damaged or mismatched checkpoint, and for a save
// that fails; what() is one line naming the file and what is wrong.
struct checkpoint_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Format 3 adds a sparse variable and its rows; format 4 the workers' read
// positions of streamed input (and a flag for whether there is a sparse
// variable); format 5 several row variables and their rules; format 6 the
// dense variables' rules and slots (model/dense_rules.hpp). A checkpoint
// without positions, of at most one row variable updated by SGD or AdaGrad,
// is still written as format 2 (dense) or 3 (sparse), byte for byte as
// before; one without dense slots as format 5; the rest as format 6. Format
// 4 is read only.
inline constexpr std::uint32_t checkpoint_format_version = 6;
inline constexpr std::uint32_t rows_checkpoint_format_version = 5;
inline constexpr std::uint32_t sparse_checkpoint_format_version = 3;
inline constexpr std::uint32_t dense_checkpoint_format_version = 2;
inline constexpr std::uint32_t oldest_checkpoint_format_version = 1;  // still read

// What `downpour inspect` shows: the file's metadata, read even when the
// checksum does not match (the header may then be wrong too).
struct checkpoint_info {
  std::string path;
  std::uint32_t format_version = 0;
  std::string kind;                      // "mlp"
  std::string spec;                      // "784-500-10"
  std::vector<variable_info> variables;  // as stored in the file
  // Format 3 and 4: at most one; format 5: any number, each with its rule.
  std::vector<row_variable_info> row_variables;
  std::uint64_t rows_held = 0;                    // their rows stored
  std::uint64_t positions = 0;                    // format 4: the workers' read positions
  std::uint64_t dense_slots = 0;                  // format 6: floats of the dense slots
  std::int64_t global_step = 0;
  std::string mode;
  double wall_time = 0.0;
  std::uint64_t file_bytes = 0;
  std::uint64_t payload_bytes = 0;
  std::uint32_t stored_checksum = 0;
  std::uint32_t computed_checksum = 0;
  bool checksum_ok() const { return stored_checksum == computed_checksum; }
};

// A checkpoint and the file it came from.
struct found_checkpoint {
  std::string path;
  checkpoint data;
};

// The bytes of a checkpoint file (see the layout above).
std::string encode_checkpoint(const checkpoint& c);

// "model.ckpt-STEP".
std::string checkpoint_name(std::int64_t global_step);

// The steps of a save that change what is on disk, in the order they happen.
// Files are written in chunks (runtime/durable_write.hpp), so that a crash can
// also stop a save between two write() calls of one file.
enum class save_stage {
  file_chunk_written,      // one more chunk of model.ckpt-STEP's temporary written
  file_synced,             // that temporary fsynced and closed
  file_renamed,            // the temporary renamed to model.ckpt-STEP
  file_directory_synced,   // the directory fsynced: the rename is durable
  index_chunk_written,     // one more chunk of the index's temporary written
  index_synced,            // that temporary fsynced and closed
  index_renamed,           // the new index in place of the old one
  index_directory_synced,  // the directory fsynced again
  pruned,                  // one checkpoint beyond `keep` deleted (once per file dropped)
  pruning_synced,          // the directory fsynced after deletions (only if there were any)
};

// Called after each step of a save, on the saving thread; for tests that stop a
// save at a chosen step (an empty one observes nothing).
using save_observer = std::function<void(save_stage)>;

// Writes dir/model.ckpt-STEP and the index, then deletes all but the newest
// `keep` checkpoints (0 keeps all, as TensorFlow's max_to_keep=None); creates
// dir. Saving a step again replaces that file and makes it the newest.
// Returns the path written. Throws checkpoint_error.
std::string save_checkpoint(const std::string& dir, const checkpoint& c, std::size_t keep,
                            const save_observer& observe = {});

// Reads and fully validates one file: magic, format version, length, checksum,
// the variables and array sizes.
checkpoint read_checkpoint(const std::string& path);

// Reads the metadata and checks the checksum without throwing on a mismatch;
// throws checkpoint_error when the file is not a checkpoint or is truncated.
checkpoint_info inspect_checkpoint(const std::string& path);

// The newest checkpoint in dir that reads back valid: by the index, with any
// complete file saved after the index was last written (a crash in between)
// counted as newer; by scanning model.ckpt-* when the index is missing or
// malformed. Writes one warning line per newer file skipped, e.g.
// "checkpoint: DIR/model.ckpt-300: checksum mismatch ...; using model.ckpt-200".
// nullopt when there is none (including when dir does not exist).
std::optional<found_checkpoint> find_newest_checkpoint(const std::string& dir,
                                                       std::ostream& warnings);

// The paths of every model.ckpt-* entry of dir (readable or not), oldest
// first, as find_newest_checkpoint orders them; empty when there is none.
std::vector<std::string> checkpoint_files(const std::string& dir);

// Refuses a checkpoint of another model: "checkpoint: FILE holds mlp
// 784-300-10, this job trains softmax 784-10" (with the variables when
// kind and spec agree).
void check_layout(const checkpoint& c, const model_layout& expected, const std::string& path);

// The variable's TensorFlow shape: biases are 1-D ([500]), weights 2-D ([784, 500]).
std::vector<std::size_t> tf_shape(const variable_info& v);

}  // namespace downpour
