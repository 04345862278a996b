#include "data/idx.hpp"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <utility>

#include "io/input_file.hpp"

namespace downpour {
namespace {

constexpr std::uint32_t kImageMagic = 2051;  // 0x00000803: unsigned bytes, 3 dimensions
constexpr std::uint32_t kLabelMagic = 2049;  // 0x00000801: unsigned bytes, 1 dimension
constexpr std::uint64_t kMaxImageBytes = std::uint64_t{1} << 20;
// gzread takes an unsigned length and returns an int, so large reads go in chunks.
constexpr std::size_t kReadChunk = std::size_t{1} << 24;
// A corrupt header can claim billions of images; reserve no more than this up front
// so such a file fails as "truncated" instead of as an allocation failure.
constexpr std::size_t kMaxUpfrontReserve = std::size_t{1} << 28;
constexpr unsigned kGzBufferBytes = 1u << 18;

struct gz_closer {
  void operator()(gzFile_s* file) const { gzclose(file); }
};

// A gzip (or, transparently, plain) input file whose errors name the file.
// Opened through io/input_file.hpp (regular files only, never blocking);
// for a plain file its size is known before anything is read, so a header's
// claim can be checked against it at once.
class gz_input {
 public:
  explicit gz_input(std::string path) : path_(std::move(path)) {
    try {
      input_file file(path_);
      size_ = file.size();
      compressed_ = file.size() >= 2 && file.read_at(0, 2) == "\x1f\x8b";
      errno = 0;
      file_.reset(gzdopen(file.fd(), "rb"));
      if (file_) file.release();
    } catch (const input_error& e) {
      fail(e.reason());
    }
    if (!file_) fail(std::string("cannot open: ") + (errno ? std::strerror(errno) : "out of memory"));
    gzbuffer(file_.get(), kGzBufferBytes);
  }

  // The bytes left after a header of header_bytes, for an uncompressed
  // file; nullopt for a gzipped one (its length is known only by reading it).
  std::optional<std::uint64_t> plain_bytes_after(std::uint64_t header_bytes) const {
    if (compressed_) return std::nullopt;
    return size_ - std::min(size_, header_bytes);
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw data_error("data: " + path_ + ": " + what);
  }

  // Returns max_bytes bytes, or fewer only if the file ends first.
  std::vector<std::uint8_t> read_up_to(std::size_t max_bytes) {
    std::vector<std::uint8_t> out;
    out.reserve(std::min(max_bytes, kMaxUpfrontReserve));
    while (out.size() < max_bytes) {
      const std::size_t old_size = out.size();
      const std::size_t want = std::min(max_bytes - old_size, kReadChunk);
      out.resize(old_size + want);
      const std::size_t got = read_chunk(out.data() + old_size, want);
      out.resize(old_size + got);
      if (got < want) break;
    }
    return out;
  }

  // Counts (and discards) whatever is left, so a trailing-data error can say how much.
  std::size_t count_remaining() {
    std::vector<std::uint8_t> sink(kGzBufferBytes);
    std::size_t total = 0;
    for (;;) {
      const std::size_t got = read_chunk(sink.data(), sink.size());
      total += got;
      if (got < sink.size()) return total;
    }
  }

 private:
  std::size_t read_chunk(std::uint8_t* dst, std::size_t n) {
    const int got = gzread(file_.get(), dst, static_cast<unsigned>(n));
    if (got < 0) {
      int code = Z_OK;
      const char* message = gzerror(file_.get(), &code);
      fail(std::string("read error: ") + (code == Z_ERRNO ? std::strerror(errno)
                                          : message       ? message
                                                          : "unknown zlib error"));
    }
    return static_cast<std::size_t>(got);
  }

  std::string path_;
  std::unique_ptr<gzFile_s, gz_closer> file_;
  std::uint64_t size_ = 0;
  bool compressed_ = false;
};

std::uint32_t big_endian(const std::uint8_t* b) {
  return (std::uint32_t{b[0]} << 24) | (std::uint32_t{b[1]} << 16) | (std::uint32_t{b[2]} << 8) |
         std::uint32_t{b[3]};
}

// Returns the dimension sizes after checking the magic number. The magic is
// checked before the rest is required, so a label file passed as an image file
// says "bad magic number", not "truncated header".
std::vector<std::uint32_t> read_header(gz_input& in, std::uint32_t expected_magic, const char* kind,
                                       std::size_t dims) {
  const auto fail_truncated = [&in, dims](std::size_t got) {
    in.fail("truncated header: expected " + std::to_string(4 * (1 + dims)) + " bytes, got " +
            std::to_string(got));
  };
  const std::vector<std::uint8_t> magic = in.read_up_to(4);
  if (magic.size() < 4) fail_truncated(magic.size());
  if (big_endian(magic.data()) != expected_magic) {
    in.fail("bad magic number " + std::to_string(big_endian(magic.data())) + " (expected " +
            std::to_string(expected_magic) + " for an IDX " + kind + " file)");
  }
  const std::vector<std::uint8_t> rest = in.read_up_to(4 * dims);
  if (rest.size() < 4 * dims) fail_truncated(4 + rest.size());
  std::vector<std::uint32_t> sizes(dims);
  for (std::size_t i = 0; i < dims; ++i) sizes[i] = big_endian(rest.data() + 4 * i);
  return sizes;
}

// The payload must be exactly as long as the header says: a short file is a
// partial download, a long one is probably not the file the header describes.
// An uncompressed file's size says so before anything is allocated.
std::vector<std::uint8_t> read_payload(gz_input& in, std::uint64_t header_bytes,
                                       std::uint64_t expected, const char* what) {
  const auto fail_short = [&](std::uint64_t got) {
    in.fail("truncated: expected " + std::to_string(expected) + " bytes of " + what +
            " after the header, got " + std::to_string(got));
  };
  const auto fail_long = [&](std::uint64_t extra) {
    in.fail(std::to_string(extra) + " unexpected trailing bytes after the " +
            std::to_string(expected) + " bytes of " + what);
  };
  if (const auto plain = in.plain_bytes_after(header_bytes)) {
    if (*plain < expected) fail_short(*plain);
    if (*plain > expected) fail_long(*plain - expected);
  }
  std::vector<std::uint8_t> data = in.read_up_to(static_cast<std::size_t>(expected));
  if (data.size() < expected) fail_short(data.size());
  const std::size_t extra = in.count_remaining();
  if (extra != 0) fail_long(extra);
  return data;
}

// An image file's payload and dimensions.
struct image_file {
  std::size_t count = 0;
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::vector<std::uint8_t> pixels;
};

// The dimensions (count, rows, cols), checked; the payload is read by the caller.
std::vector<std::uint32_t> read_image_header(gz_input& in) {
  std::vector<std::uint32_t> h = read_header(in, kImageMagic, "image", 3);
  const std::uint64_t rows = h[1];
  const std::uint64_t cols = h[2];
  if (h[0] == 0) in.fail("contains no images");
  if (rows == 0 || cols == 0 || rows * cols > kMaxImageBytes) {
    in.fail("implausible image size " + std::to_string(rows) + "x" + std::to_string(cols) +
            " (each side must be nonzero and rows*cols at most " + std::to_string(kMaxImageBytes) +
            ")");
  }
  return h;
}

image_file read_images(const std::string& path) {
  gz_input in(path);
  const std::vector<std::uint32_t> h = read_image_header(in);
  image_file set;
  set.count = h[0];
  set.rows = h[1];
  set.cols = h[2];
  set.pixels = read_payload(in, 16, std::uint64_t{h[0]} * h[1] * h[2], "pixel data");
  return set;
}

std::vector<std::uint8_t> read_labels(const std::string& path) {
  gz_input in(path);
  const std::vector<std::uint32_t> h = read_header(in, kLabelMagic, "label", 1);
  if (h[0] == 0) in.fail("contains no labels");
  return read_payload(in, 8, h[0], "labels");
}

void check_directory(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    throw data_error("data: " + dir + ": not found or not a directory");
  }
}

// Tries NAME, then NAME.gz, as TF's and most mirrors' layouts differ on
// compression. Whatever is there is taken: opening it refuses anything but a
// regular file, naming it, rather than passing over it in silence.
std::string find_file(const std::filesystem::path& dir, const std::string& name) {
  const std::filesystem::path plain = dir / name;
  const std::filesystem::path gz = dir / (name + ".gz");
  std::error_code ec;
  if (std::filesystem::exists(plain, ec)) return plain.string();
  if (std::filesystem::exists(gz, ec)) return gz.string();
  throw data_error("data: " + plain.string() + ": not found (nor " + gz.string() + ")");
}

// A label file alone, for class_count: a ps reads no images.
class label_file final : public dataset {
 public:
  explicit label_file(std::vector<std::uint8_t> labels) : labels_(std::move(labels)) {}
  std::size_t size() const override { return labels_.size(); }
  std::size_t features() const override { return 0; }
  void copy_features(std::size_t /*i*/, float* /*out*/) const override {}
  std::int32_t label(std::size_t i) const override { return labels_[i]; }

 private:
  std::vector<std::uint8_t> labels_;
};

}  // namespace

idx_images::idx_images(std::size_t rows, std::size_t cols, std::vector<std::uint8_t> pixels,
                       std::vector<std::uint8_t> labels)
    : rows_(rows), cols_(cols), pixels_(std::move(pixels)), labels_(std::move(labels)) {}

void idx_images::copy_features(std::size_t i, float* out) const {
  const std::size_t n = features();
  const std::uint8_t* src = image(i);
  // Same rounding as TF's astype(float32) followed by multiply(images, 1.0 / 255.0).
  for (std::size_t k = 0; k < n; ++k) out[k] = static_cast<float>(src[k]) * (1.0f / 255.0f);
}

std::shared_ptr<const idx_images> load_idx_pair(const std::string& images_path,
                                                const std::string& labels_path) {
  image_file images = read_images(images_path);
  std::vector<std::uint8_t> labels = read_labels(labels_path);
  if (labels.size() != images.count) {
    throw data_error("data: " + images_path + ": holds " + std::to_string(images.count) +
                     " images but " + labels_path + " holds " + std::to_string(labels.size()) +
                     " labels");
  }
  return std::make_shared<idx_images>(images.rows, images.cols, std::move(images.pixels),
                                      std::move(labels));
}

data_summary summarize_mnist(const std::string& dir) {
  check_directory(dir);
  gz_input in(find_file(dir, "train-images-idx3-ubyte"));
  const std::vector<std::uint32_t> h = read_image_header(in);
  const std::string train = find_file(dir, "train-labels-idx1-ubyte");
  const std::string test = find_file(dir, "t10k-labels-idx1-ubyte");
  const std::size_t classes =
      class_count({train, std::make_shared<label_file>(read_labels(train))},
                  {test, std::make_shared<label_file>(read_labels(test))});
  return {data_shape{{h[1], h[2], 1}}, classes};
}

data_splits load_mnist(const std::string& dir, std::size_t validation_size) {
  check_directory(dir);
  const std::string train_images = find_file(dir, "train-images-idx3-ubyte");
  const std::string train_labels = find_file(dir, "train-labels-idx1-ubyte");
  auto train = load_idx_pair(train_images, train_labels);
  const std::string test_images = find_file(dir, "t10k-images-idx3-ubyte");
  const std::string test_labels = find_file(dir, "t10k-labels-idx1-ubyte");
  auto test = load_idx_pair(test_images, test_labels);
  if (test->rows() != train->rows() || test->cols() != train->cols()) {
    throw data_error("data: " + test_images + ": images are " + std::to_string(test->rows()) +
                     "x" + std::to_string(test->cols()) + " but those in " + train_images +
                     " are " + std::to_string(train->rows()) + "x" +
                     std::to_string(train->cols()));
  }
  data_shape shape{{train->rows(), train->cols(), 1}};
  // Named by their label files: the sizes agree with the images (checked
  // above), and what split_data may still refuse is a label or a count.
  return split_data({train_labels, train}, {test_labels, test}, std::move(shape),
                    validation_size);
}

}  // namespace downpour
