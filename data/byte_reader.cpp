#include "data/byte_reader.hpp"

#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

namespace downpour {
namespace {

constexpr std::size_t kCompressedChunk = std::size_t{1} << 18;
constexpr std::size_t kSkipChunk = std::size_t{1} << 16;

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw data_error("data: " + path + ": " + what);
}

[[noreturn]] void fail_at(const std::string& path, std::uint64_t byte, const std::string& what) {
  fail(path, "byte " + std::to_string(byte) + ": " + what);
}

std::string shrank(std::uint64_t expected) {
  return "the file ends here but held " + std::to_string(expected) +
         " bytes when the job started (it shrank or was replaced)";
}

// read(2) until n bytes, the end, or an error (-1, errno set).
ssize_t read_some(int fd, char* out, std::size_t n) {
  for (;;) {
    const ssize_t got = ::read(fd, out, n);
    if (got >= 0 || errno != EINTR) return got;
  }
}

}  // namespace

input_file open_data_file(const std::string& path) {
  try {
    return input_file(path);
  } catch (const input_error& e) {
    fail(path, e.reason());
  }
}

std::uint64_t data_file_size(const std::string& path) { return open_data_file(path).size(); }

bool is_gzip_file(const std::string& path) {
  const input_file file = open_data_file(path);
  try {
    return file.size() >= 2 && file.read_at(0, 2) == "\x1f\x8b";
  } catch (const input_error& e) {
    fail(path, e.reason());
  }
}

// zlib's inflate over the file, member after member.
class byte_reader::inflater {
 public:
  inflater(const std::string& path, int fd, std::optional<std::uint64_t> expected)
      : path_(path), fd_(fd), expected_(expected), input_(kCompressedChunk) {
    if (inflateInit2(&z_, 16 + MAX_WBITS) != Z_OK) fail(path_, "cannot start zlib");
  }
  ~inflater() { inflateEnd(&z_); }
  inflater(const inflater&) = delete;
  inflater& operator=(const inflater&) = delete;

  std::size_t read(char* out, std::size_t n) {
    for (;;) {
      if (z_.avail_in == 0 && !refill()) {
        if (member_ended_) return 0;
        fail_at(path_, consumed(), "the gzip stream is truncated (it ends inside a member)");
      }
      if (member_ended_) next_member();
      z_.next_out = reinterpret_cast<Bytef*>(out);
      z_.avail_out = static_cast<uInt>(n);
      const int r = inflate(&z_, Z_NO_FLUSH);
      if (r == Z_STREAM_END) member_ended_ = true;
      if (r != Z_OK && r != Z_STREAM_END && r != Z_BUF_ERROR)
        fail_at(path_, consumed(),
                std::string("corrupt gzip data (") + (z_.msg ? z_.msg : "zlib error") + ")");
      const std::size_t produced = n - z_.avail_out;
      if (produced > 0) return produced;
    }
  }

 private:
  std::uint64_t consumed() const { return read_ - z_.avail_in; }

  bool refill() {
    const ssize_t got = read_some(fd_, input_.data(), input_.size());
    if (got < 0) fail_at(path_, read_, std::string("read error: ") + std::strerror(errno));
    if (got == 0 && expected_ && read_ < *expected_) fail_at(path_, read_, shrank(*expected_));
    read_ += static_cast<std::uint64_t>(got);
    z_.next_in = reinterpret_cast<Bytef*>(input_.data());
    z_.avail_in = static_cast<uInt>(got);
    return got > 0;
  }

  // Concatenated members (gzip -c a b > ab) read as one stream.
  void next_member() {
    if (*z_.next_in != 0x1f)
      fail_at(path_, consumed(), "bytes after the last gzip member are not gzip data");
    if (inflateReset(&z_) != Z_OK) fail(path_, "cannot restart zlib");
    member_ended_ = false;
  }

  const std::string& path_;
  int fd_;
  std::optional<std::uint64_t> expected_;
  std::vector<char> input_;
  z_stream z_{};
  std::uint64_t read_ = 0;  // compressed bytes read from the file
  bool member_ended_ = false;
};

byte_reader::byte_reader(std::string path, std::optional<std::uint64_t> expected_size)
    : path_(std::move(path)), expected_size_(expected_size) {
  open();
}

byte_reader::~byte_reader() = default;

void byte_reader::open() {
  gzip_.reset();
  file_.reset();
  file_.emplace(open_data_file(path_));
  offset_ = 0;
  unsigned char magic[2] = {0, 0};
  const ssize_t got = read_some(file_->fd(), reinterpret_cast<char*>(magic), 2);
  if (::lseek(file_->fd(), 0, SEEK_SET) != 0)
    fail(path_, std::string("cannot seek: ") + std::strerror(errno));
  if (got == 2 && magic[0] == 0x1f && magic[1] == 0x8b)
    gzip_ = std::make_unique<inflater>(path_, file_->fd(), expected_size_);
}

std::size_t byte_reader::read_plain(char* out, std::size_t n) {
  const ssize_t got = read_some(file_->fd(), out, n);
  if (got < 0) fail_at(path_, offset_, std::string("read error: ") + std::strerror(errno));
  if (got == 0 && expected_size_ && offset_ < *expected_size_)
    fail_at(path_, offset_, shrank(*expected_size_));
  return static_cast<std::size_t>(got);
}

std::size_t byte_reader::read(char* out, std::size_t n) {
  const std::size_t got = gzip_ ? gzip_->read(out, n) : read_plain(out, n);
  offset_ += got;
  return got;
}

void byte_reader::seek(std::uint64_t offset) {
  if (!gzip_) {
    if (::lseek(file_->fd(), static_cast<off_t>(offset), SEEK_SET) < 0)
      fail_at(path_, offset, std::string("cannot seek: ") + std::strerror(errno));
    offset_ = offset;
    return;
  }
  if (offset < offset_) open();
  std::vector<char> scratch(kSkipChunk);
  while (offset_ < offset) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(kSkipChunk, offset - offset_));
    if (read(scratch.data(), want) == 0)
      fail_at(path_, offset_,
              "the data ends before uncompressed byte " + std::to_string(offset) +
                  " (the file changed since the job started)");
  }
}

}  // namespace downpour
