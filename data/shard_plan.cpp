#include "data/shard_plan.hpp"

#include <glob.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <set>

#include "data/byte_reader.hpp"

namespace downpour {
namespace {

// About this many blocks per worker and pass: enough for the block order
// to matter, few enough that each is a long sequential read.
constexpr std::uint64_t kBlocksPerWorker = 64;
constexpr std::uint64_t kMaxBlock = std::uint64_t{1} << 20;
constexpr std::uint64_t kPlanVersion = 1;

std::string trimmed(const std::string& s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

std::vector<std::string> glob_matches(const std::string& pattern) {
  glob_t g{};
  const int r = ::glob(pattern.c_str(), 0, nullptr, &g);
  std::vector<std::string> out;
  if (r == 0)
    for (std::size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  ::globfree(&g);
  if (out.empty()) throw data_error("data: '" + pattern + "' matches no file");
  std::sort(out.begin(), out.end());
  return out;
}

std::uint64_t fnv(std::uint64_t h, const std::string& text) {
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

std::string base_name(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::uint64_t fingerprint_of(const shard_request& r) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  h = fnv(h, std::to_string(kPlanVersion) + ";" + std::to_string(r.workers) + ";" +
                 std::to_string(r.first_byte));
  for (const auto& f : r.files)
    h = fnv(h, ";" + base_name(f.path) + ":" + std::to_string(f.size) + (f.gzip ? "z" : ""));
  return h;
}

std::uint64_t first_byte_of(const shard_request& r, std::size_t file) {
  return file == 0 ? r.first_byte : 0;
}

// Calls seen(offset) for each line that may hold an example (not blank, not
// only a comment) from first on.
template <class Seen>
void for_each_example_line(const data_file& file, std::uint64_t first, Seen seen) {
  byte_reader in(file.path, file.size);
  in.seek(first);
  std::vector<char> chunk(std::size_t{1} << 20);
  std::uint64_t start = first;
  enum { blank, example, comment } state = blank;
  for (;;) {
    const std::uint64_t base = in.offset();
    const std::size_t got = in.read(chunk.data(), chunk.size());
    if (got == 0) break;
    for (std::size_t i = 0; i < got; ++i) {
      const char c = chunk[i];
      if (c == '\n') {
        if (state == example) seen(start);
        state = blank;
        start = base + i + 1;
      } else if (state == blank && c != ' ' && c != '\t' && c != '\r') {
        state = c == '#' ? comment : example;
      }
    }
  }
  if (state == example) seen(start);
}

// Small data: runs of `group` example lines; run r of the whole goes to
// owner(file, r).
template <class Owner>
std::vector<shard_plan> counted_plans(const shard_request& r, Owner owner) {
  std::vector<std::uint64_t> counts(r.files.size(), 0);
  for (std::size_t f = 0; f < r.files.size(); ++f)
    for_each_example_line(r.files[f], first_byte_of(r, f), [&](std::uint64_t) { ++counts[f]; });
  const std::uint64_t total = std::accumulate(counts.begin(), counts.end(), std::uint64_t{0});
  const std::uint64_t group = std::max<std::uint64_t>(1, total / (r.workers * kBlocksPerWorker));
  std::vector<shard_plan> plans(r.workers);
  std::uint64_t run = 0;
  for (std::size_t f = 0; f < r.files.size(); ++f) {
    std::uint64_t in_run = 0;
    read_unit* open = nullptr;
    for_each_example_line(r.files[f], first_byte_of(r, f), [&](std::uint64_t offset) {
      if (in_run == 0) {
        if (open) open->end = offset;
        auto& plan = plans[owner(f, run++)];
        plan.units.push_back(read_unit{static_cast<std::uint32_t>(f), offset, read_unit::to_end});
        open = &plan.units.back();
        plan.lines = plan.lines.value_or(0);
      }
      ++*plans[owner(f, run - 1)].lines;
      in_run = (in_run + 1) % group;
    });
  }
  for (auto& plan : plans) plan.lines = plan.lines.value_or(0);
  return plans;
}

// Larger data: blocks of `block` bytes, cut without reading; a gzip file
// is one unit per reader, with a stride when workers share it.
template <class Owner>
std::vector<shard_plan> blind_plans(const shard_request& r, std::uint64_t block, Owner owner) {
  std::vector<shard_plan> plans(r.workers);
  std::uint64_t run = 0;
  const bool by_file = r.files.size() >= r.workers;
  for (std::size_t f = 0; f < r.files.size(); ++f) {
    const auto& file = r.files[f];
    const auto index = static_cast<std::uint32_t>(f);
    const std::uint64_t first = first_byte_of(r, f);
    if (file.gzip && by_file) {
      plans[owner(f, 0)].units.push_back({index, first, read_unit::to_end});
    } else if (file.gzip) {
      const auto w = static_cast<std::uint32_t>(r.workers);
      for (std::uint32_t k = 0; k < w; ++k)
        plans[k].units.push_back(
            {index, first, read_unit::to_end, block, w, (k + w - index % w) % w});
    } else {
      for (std::uint64_t at = first; at < file.size; at += block)
        plans[owner(f, run++)].units.push_back({index, at, std::min(at + block, file.size)});
    }
  }
  return plans;
}

void check_counted(const shard_request& r, const std::vector<shard_plan>& plans) {
  std::uint64_t total = 0;
  for (const auto& p : plans) total += *p.lines;
  for (std::size_t k = 0; k < plans.size(); ++k) {
    if (*plans[k].lines > 0) continue;
    const std::string who = "worker " + std::to_string(k) + " of " + std::to_string(r.workers);
    if (total < r.workers)
      throw data_error("data: " + r.what + " hold " + std::to_string(total) +
                       " example lines, fewer than the " + std::to_string(r.workers) +
                       " workers: " + who + " would train on none (use at most " +
                       std::to_string(total) + " workers, or more data)");
    throw data_error("data: " + who + " would train on none of the " + std::to_string(total) +
                     " example lines of " + r.what + ": its files hold none");
  }
}

void check_blind(const shard_request& r, const std::vector<shard_plan>& plans) {
  for (std::size_t k = 0; k < plans.size(); ++k)
    if (plans[k].units.empty())
      throw data_error("data: worker " + std::to_string(k) + " of " + std::to_string(r.workers) +
                       " would read none of " + r.what + " (more workers than blocks)");
}

}  // namespace

std::uint64_t mix_seed(std::uint64_t a, std::uint64_t b) {
  std::uint64_t z = a + 0x9E3779B97F4A7C15ull * (b + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::vector<data_file> list_data_files(const std::string& spec) {
  std::vector<data_file> files;
  std::set<std::string> seen;
  std::size_t pos = 0;
  for (;;) {
    const auto comma = spec.find(',', pos);
    const std::string item = trimmed(spec.substr(pos, comma == std::string::npos ? comma : comma - pos));
    if (!item.empty()) {
      const bool pattern = item.find_first_of("*?[") != std::string::npos;
      for (const auto& path : pattern ? glob_matches(item) : std::vector<std::string>{item}) {
        if (!seen.insert(path).second)
          throw data_error("data: " + path + " is named twice in '" + spec + "'");
        files.push_back({path, data_file_size(path), is_gzip_file(path)});
      }
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  if (files.empty()) throw data_error("data: '" + spec + "' names no file");
  return files;
}

std::vector<shard_plan> plan_shards(const shard_request& r) {
  if (r.workers == 0) throw data_error("data: no workers to read " + r.what);
  const std::uint64_t total = std::accumulate(
      r.files.begin(), r.files.end(), std::uint64_t{0},
      [](std::uint64_t sum, const data_file& f) { return sum + f.size; });
  const bool by_file = r.files.size() >= r.workers;
  auto owner = [&](std::size_t file, std::uint64_t run) {
    return static_cast<std::size_t>(by_file ? file % r.workers : run % r.workers);
  };
  std::vector<shard_plan> plans;
  if (total <= r.counted_up_to) {
    plans = counted_plans(r, owner);
    check_counted(r, plans);
  } else {
    const std::uint64_t block = std::clamp(total / (r.workers * kBlocksPerWorker), std::clamp<std::uint64_t>(r.min_block, 1, kMaxBlock), kMaxBlock);
    plans = blind_plans(r, block, owner);
    check_blind(r, plans);
  }
  const std::uint64_t fp = fingerprint_of(r);
  for (auto& p : plans) {
    p.files = r.files;
    p.fingerprint = fp;
  }
  return plans;
}

std::vector<std::size_t> pass_order(const shard_plan& plan, unit_order order, std::uint64_t seed) {
  // Groups: a plain file's unit alone, a gzip file's units together.
  std::vector<std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < plan.units.size(); ++i) {
    const bool joins = i > 0 && plan.files[plan.units[i].file].gzip &&
                       plan.units[i].file == plan.units[i - 1].file;
    if (joins)
      groups.back().push_back(i);
    else
      groups.push_back({i});
  }
  if (order == unit_order::shuffled) {
    std::mt19937_64 rng(seed);
    for (std::size_t i = groups.size(); i > 1; --i) std::swap(groups[i - 1], groups[draw_below(rng, i)]);
  }
  std::vector<std::size_t> out;
  out.reserve(plan.units.size());
  for (const auto& g : groups) out.insert(out.end(), g.begin(), g.end());
  return out;
}

}  // namespace downpour
