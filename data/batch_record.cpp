#include "data/batch_record.hpp"

#include <cstdlib>
#include <filesystem>

#include <unistd.h>

#include "data/idx.hpp"

namespace downpour {

batch_record::batch_record(const std::string& dir, std::uint32_t worker)
    : worker_(worker), path_(dir + "/batches-" + std::to_string(worker) + ".txt") {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  out_.open(path_, std::ios::app);
  if (!out_) throw data_error(std::string(record_batches_env) + ": cannot write " + path_);
}

bool batch_record::write(std::int64_t stamp, const batch& b) {
  out_ << worker_ << ' ' << stamp;
  // A streamed batch names its examples by file and byte: "F:OFFSET".
  for (auto example : b.examples) out_ << ' ' << example;
  for (auto origin : b.origins) out_ << ' ' << (origin >> 40) << ':' << (origin & ((std::uint64_t{1} << 40) - 1));
  out_ << '\n' << std::flush;
  return static_cast<bool>(out_);
}

void check_batch_record_environment() {
  const char* dir = std::getenv(record_batches_env);
  if (!dir || !*dir) return;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (!std::filesystem::is_directory(dir) || ::access(dir, W_OK) != 0)
    throw data_error(std::string(record_batches_env) + "=" + dir +
                     " is not a writable directory (expected one for the batch records)");
}

std::unique_ptr<batch_record> batch_record_from_environment(std::uint32_t worker) {
  const char* dir = std::getenv(record_batches_env);
  if (!dir || !*dir) return nullptr;
  return std::make_unique<batch_record>(dir, worker);
}

}  // namespace downpour
