// The one way a result file is written (checkpoints and their index, .npz,
// summary.json, plots): a temporary in the same directory, the bytes, fsync,
// rename over the target, fsync of the directory. A reader or a crash at any
// moment sees the old file or the whole new one, never part of one, and once
// the call returns the new file survives a power loss (LevelDB's util/env
// does the same for its manifest).
#pragma once

#include <functional>
#include <stdexcept>
#include <string>

namespace downpour {

// A write that did not happen; what() is "PATH: cannot ...: REASON". The
// target is then untouched and the temporary removed.
struct durable_write_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The steps of a durable write that change what is on disk, in order; tests
// stop a writing process at each (test_checkpoint_crash).
enum class write_stage {
  chunk_written,     // one more chunk of the temporary written (write_durably only)
  synced,            // the temporary fsynced and closed
  renamed,           // the temporary renamed over the target
  directory_synced,  // the directory fsynced: the rename is durable
};
using write_observer = std::function<void(write_stage)>;

// Bytes go out in chunks of this size, so that a crash can also stop a write
// between two write() calls.
inline constexpr std::size_t write_chunk_bytes = std::size_t{1} << 20;

// Replaces path with bytes; creates the directory if needed. Throws
// durable_write_error.
void write_durably(const std::string& path, const std::string& bytes,
                   const write_observer& observe = {});

// The same with the content written by fill into the temporary's descriptor
// (opened for reading and writing, e.g. a child process's stdout). An
// exception from fill abandons the write and propagates unchanged.
void write_durably_from(const std::string& path, const std::function<void(int fd)>& fill,
                        const write_observer& observe = {});

// fsyncs the directory dir, so that renames and deletions in it survive a
// power loss. Throws durable_write_error naming dir.
void sync_directory(const std::string& dir);

// Temporaries are named ".NAME.tmp.PID.RANDOM": hidden, and the PID tells
// whether their writer can still be alive. Removes those in dir whose writer
// is gone and whose NAME ours(NAME) accepts (what a writer killed mid-write
// left behind); a live writer's are kept.
void remove_dead_temporaries(const std::string& dir,
                             const std::function<bool(const std::string&)>& ours);

}  // namespace downpour
