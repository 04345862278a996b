// Fuzzes the checkpoint reader (runtime/files/checkpoint_format.cpp): the input is a
// checkpoint file, read with inspect_checkpoint and read_checkpoint.
//
// A random change almost always breaks the CRC, which read_checkpoint checks
// before it parses the payload. So each input is read twice: as it is, and
// (when it starts with the magic and holds a whole preamble) with the payload
// length and CRC in the preamble recomputed for the bytes that follow, in the
// byte order the preamble's own endianness byte declares. The second read
// reaches the payload parser with whatever the fuzzer wrote there.
//
// A checkpoint_error is the reader's answer to a bad file and is fine. Any
// other exception, a crash, a sanitizer report, a leak, or a checkpoint that
// reads back valid but breaks the promises the rest of Downpour relies on
// (arrays sized to the layout, every variable inside them, encode/read
// round-trips bit-exactly) is a bug.
#include <zlib.h>

#include <cstring>

#include "fuzz/fuzz_common.hpp"
#include "runtime/files/checkpoint.hpp"

namespace {

using downpour::checkpoint;
using downpour::checkpoint_error;

constexpr const char* target = "fuzz_checkpoint";
constexpr char magic[] = "DOWNPOUR-CKPT";
constexpr std::size_t magic_size = sizeof(magic) - 1;
// magic, endianness byte, u32 version, u64 payload bytes, u32 CRC.
constexpr std::size_t endian_at = magic_size;
constexpr std::size_t length_at = endian_at + 1 + 4;
constexpr std::size_t crc_at = length_at + 8;
constexpr std::size_t preamble_size = crc_at + 4;

bool mul_fits(std::size_t a, std::size_t b, std::size_t& out) {
  return !__builtin_mul_overflow(a, b, &out);
}

void check_valid(const checkpoint& c) {
  // The sizes must be computable without wrapping around, or a consumer that
  // multiplies rows by cols (evaluate, export, the shards) reads out of bounds.
  std::size_t total = 0;
  for (const auto& v : c.layout.variables()) {
    std::size_t n = 0, end = 0;
    if (!mul_fits(v.rows, v.cols, n) || __builtin_add_overflow(v.offset, n, &end) ||
        end > c.params.size() || v.offset != total)
      fuzz::broken(target, "read_checkpoint accepted " + c.layout.to_string() +
                               " whose variable " + v.name + " does not fit its " +
                               std::to_string(c.params.size()) + " parameters");
    total = end;
  }
  if (total != c.params.size() || c.ema.size() != c.params.size() ||
      c.layout.size() != c.params.size())
    fuzz::broken(target, "read_checkpoint returned arrays not sized to the layout");
  if (c.mode != "async" && c.mode != "sync" && c.mode != "ssp")
    fuzz::broken(target, "read_checkpoint accepted mode '" + c.mode + "'");
}

bool same(const checkpoint& a, const checkpoint& b) {
  auto bits_equal = [](const std::vector<float>& x, const std::vector<float>& y) {
    return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
  };
  return a.layout == b.layout && a.global_step == b.global_step && a.mode == b.mode &&
         std::memcmp(&a.wall_time, &b.wall_time, sizeof(double)) == 0 &&
         bits_equal(a.params, b.params) && bits_equal(a.ema, b.ema);
}

void read_file(const std::string& path) {
  try {
    downpour::checkpoint_info info = downpour::inspect_checkpoint(path);
    if (info.path != path) fuzz::broken(target, "inspect_checkpoint lost the path");
  } catch (const checkpoint_error&) {
  } catch (const std::exception& e) {
    fuzz::broken(target, std::string("inspect_checkpoint threw a non-checkpoint_error: ") + e.what());
  }
  checkpoint c;
  try {
    c = downpour::read_checkpoint(path);
  } catch (const checkpoint_error&) {
    return;
  } catch (const std::exception& e) {
    fuzz::broken(target, std::string("read_checkpoint threw a non-checkpoint_error: ") + e.what());
  }
  check_valid(c);
  // What was read must write and read back bit for bit.
  static const std::string again = fuzz::scratch_path("again.ckpt");
  try {
    fuzz::write_file(again, downpour::encode_checkpoint(c));
    if (!same(c, downpour::read_checkpoint(again)))
      fuzz::broken(target, "encode_checkpoint/read_checkpoint does not round-trip");
  } catch (const std::exception& e) {
    fuzz::broken(target, std::string("a checkpoint that read back valid does not re-read: ") +
                             e.what());
  }
}

template <class T>
void put(std::string& bytes, std::size_t at, T value, bool little) {
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    const auto byte = static_cast<char>((value >> (8 * i)) & 0xff);
    bytes[at + (little ? i : sizeof(T) - 1 - i)] = byte;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = fuzz::scratch_path("model.ckpt-1");
  std::string bytes(reinterpret_cast<const char*>(data), size);
  fuzz::write_file(path, bytes);
  read_file(path);

  if (size >= preamble_size && bytes.compare(0, magic_size, magic) == 0) {
    // cereal's portable archive: byte 1 means little-endian, anything else is swapped.
    const bool little = bytes[endian_at] == 1;
    const std::size_t payload = size - preamble_size;
    const auto crc = static_cast<std::uint32_t>(
        crc32_z(crc32_z(0, nullptr, 0), data + preamble_size, payload));
    std::string fixed = bytes;
    put<std::uint64_t>(fixed, length_at, payload, little);
    put<std::uint32_t>(fixed, crc_at, crc, little);
    if (fixed != bytes) {
      fuzz::write_file(path, fixed);
      read_file(path);
    }
  }
  return 0;
}
