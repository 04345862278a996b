// Which lines of the training files each worker reads: every example goes
// to exactly one worker per pass, as tf.data's shard() does. With at least
// as many files as workers, worker k of W reads files k, k + W, ...; with
// fewer, the files are cut into blocks and worker k reads blocks k, k + W,
// ... A line belongs to the block its first byte lies in, so no line is
// read twice or missed, however the cuts fall.
//
// Small data (at most small_data_bytes in all) is counted at the start:
// blocks are runs of whole lines, and a worker that would get no example
// is refused then, naming the counts. Larger data is cut blind into blocks
// of 64 KiB to 1 MiB, without reading it first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "data/dataset.hpp"

namespace downpour {

inline constexpr std::uint64_t small_data_bytes = std::uint64_t{32} << 20;

struct data_file {
  std::string path;
  std::uint64_t size = 0;  // bytes on disk when the job started
  bool gzip = false;
};

// The files a --train-file or --test-file value names: comma-separated
// paths and glob patterns (train-*.libsvm.gz), each pattern's matches in
// name order. Throws data_error for a pattern that matches nothing, a file
// that cannot be opened, one named twice, or an empty list.
std::vector<data_file> list_data_files(const std::string& spec);

// A piece of one file: the lines whose first byte lies in [begin, end) of
// its (uncompressed) bytes; with stride > 1 only those in the blocks of
// `block` bytes whose index is residue modulo stride (a gzip file shared by
// several workers: it cannot be entered in the middle).
struct read_unit {
  std::uint32_t file = 0;
  std::uint64_t begin = 0;
  std::uint64_t end = 0;  // to_end: up to the end of the data
  std::uint64_t block = 0;
  std::uint32_t stride = 1;
  std::uint32_t residue = 0;
  static constexpr std::uint64_t to_end = ~std::uint64_t{0};
  bool holds(std::uint64_t offset) const {
    return offset >= begin && offset < end &&
           (stride <= 1 || (offset / block) % stride == residue);
  }
};

// One worker's share of the files.
struct shard_plan {
  std::vector<data_file> files;
  std::vector<read_unit> units;  // in file order
  std::uint64_t fingerprint = 0;  // of the files, the workers and the cuts
  std::optional<std::uint64_t> lines;  // small data: the example lines counted
};

struct shard_request {
  std::vector<data_file> files;
  std::size_t workers = 1;
  // The first byte of file 0 to train on: the examples before it are
  // held out (--validation-size).
  std::uint64_t first_byte = 0;
  // What the files are called in messages ("the training files").
  std::string what = "the training files";
  // Data up to this size in all is counted at the start (small_data_bytes;
  // tests lower it to cut small files blind).
  std::uint64_t counted_up_to = small_data_bytes;
  // Blocks of blind cuts at least this long (tests lower it).
  std::uint64_t min_block = std::uint64_t{64} << 10;
};

// Every worker's plan, the same on every node given the same files.
// Throws data_error when a worker would get nothing to read.
std::vector<shard_plan> plan_shards(const shard_request& request);

// How a pass orders a worker's units.
enum class unit_order {
  shuffled,  // files and blocks in an order drawn from the seed and the pass
  in_files,  // as in the files (test files, evaluation)
};

// The order of plan.units in a pass. A gzip file's units stay together in
// file order: it is read front to back.
std::vector<std::size_t> pass_order(const shard_plan& plan, unit_order order,
                                    std::uint64_t seed);

// Uniform in [0, bound) from a 64-bit generator by rejection (unbiased, the
// same on every toolchain, unlike the standard distributions).
template <class Rng>
std::uint64_t draw_below(Rng& rng, std::uint64_t bound) {
  const std::uint64_t threshold = (0 - bound) % bound;
  for (;;) {
    const std::uint64_t r = rng();
    if (r >= threshold) return r % bound;
  }
}

// A well-mixed 64-bit value of a and b (splitmix64's finaliser).
std::uint64_t mix_seed(std::uint64_t a, std::uint64_t b);

}  // namespace downpour
