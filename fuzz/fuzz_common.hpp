// Shared by the fuzz targets: a private scratch directory for the files each
// input is written to (the readers under test take paths, not memory), and the
// one way a target reports a broken promise.
#pragma once

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <string>

namespace fuzz {

// $DOWNPOUR_FUZZ_TMP (scripts/run-fuzzers points it at a tmpfs directory it
// removes afterwards), else /dev/shm, else $TMPDIR, else /tmp. Each process
// makes its own directory there and removes it at exit.
inline const std::string& scratch_dir() {
  static const std::string dir = [] {
    std::string base;
    const char* candidates[] = {std::getenv("DOWNPOUR_FUZZ_TMP"), "/dev/shm", std::getenv("TMPDIR"),
                                "/tmp"};
    for (const char* candidate : candidates) {
      if (candidate && *candidate && access(candidate, W_OK | X_OK) == 0) {
        base = candidate;
        break;
      }
    }
    std::string pattern = base + "/downpour-fuzz-XXXXXX";
    if (!mkdtemp(pattern.data())) {
      std::perror(("fuzz: mkdtemp " + pattern).c_str());
      std::abort();
    }
    static std::string made = pattern;
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(made, ec);
    });
    return pattern;
  }();
  return dir;
}

inline std::string scratch_path(const char* name) {
  return scratch_dir() + "/" + name;
}

// Replaces path with exactly these bytes; aborts if that fails (not an input problem).
inline void write_file(const std::string& path, const void* data, std::size_t size) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    std::perror(("fuzz: open " + path).c_str());
    std::abort();
  }
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = write(fd, p, size);
    if (n <= 0) {
      std::perror(("fuzz: write " + path).c_str());
      std::abort();
    }
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  close(fd);
}

inline void write_file(const std::string& path, const std::string& bytes) {
  write_file(path, bytes.data(), bytes.size());
}

// A reader broke its contract (threw something other than its own error type,
// or returned data that violates its invariants): crash so libFuzzer keeps the input.
[[noreturn]] inline void broken(const char* target, const std::string& what) {
  std::fprintf(stderr, "\n%s: CONTRACT VIOLATION: %s\n", target, what.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace fuzz
