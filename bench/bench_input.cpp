// Streamed input, side by side with its floors: parsing plain libsvm and
// Criteo TSV on one core next to `wc -l` on the same file, a gzip file next
// to `zcat > /dev/null`, the sparse job's steps/s with the background reader
// next to batches prepared in memory, and a logreg worker's peak RSS with
// 4M and with 40M training examples (docs/input.md).
//
//   gen_libsvm --out DIR                     4M + 500k planted examples
//   gen_criteo --out CDIR                    (optional) Criteo-format lines
//   bench_input --data DIR [--criteo CDIR] [--mb 256] [--repeats 3]
//               [--steps 20000] [--json FILE] [--binary=PATH]
//
// The parse rows read the first --mb MiB of each training file (copied,
// and gzipped, into a temporary directory first, so that every reader
// reads the same bytes from the page cache). The 40M set is the 4M file
// listed ten times (symlinks): a worker reads ten times as many examples.
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "bench/bench_process.hpp"
#include "data/example_stream.hpp"

using namespace downpour;
using namespace downpour::bench;
namespace fs = std::filesystem;

namespace {

struct settings {
  std::string data, criteo, binary;
  std::size_t mb = 256;
  int repeats = 3;
  long steps = 20000;
};

[[noreturn]] void usage_error(const std::string& what) {
  std::cerr << "bench_input: " << what << " (see the comment at the top of bench_input.cpp)\n";
  std::exit(2);
}

settings parse(const cli& args) {
  settings s;
  s.binary = find_binary(args.rest);
  if (args.repeats > 0) s.repeats = args.repeats;
  if (args.steps > 0) s.steps = args.steps;
  for (const auto& a : args.rest) {
    const auto eq = a.find('=');
    const std::string key = a.substr(0, eq), value = eq == std::string::npos ? "" : a.substr(eq + 1);
    if (key == "--data") s.data = value;
    else if (key == "--criteo") s.criteo = value;
    else if (key == "--mb") s.mb = std::stoul(value);
    else if (key != "--binary") usage_error("unknown argument " + a + " (write --key=value)");
  }
  if (s.data.empty()) usage_error("--data=DIR is required");
  if (s.binary.empty()) usage_error("no downpour binary found");
  return s;
}

// The first `bytes` of from, cut after a line end, into to (and gzipped into gz).
void copy_head(const std::string& from, std::size_t bytes, const std::string& to,
               const std::string& gz) {
  std::ifstream in(from, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + from);
  std::string text(bytes, '\0');
  in.read(text.data(), static_cast<std::streamsize>(bytes));
  text.resize(static_cast<std::size_t>(in.gcount()));
  text.resize(text.rfind('\n') + 1);
  std::ofstream(to, std::ios::binary) << text;
  if (gz.empty()) return;
  gzFile f = gzopen(gz.c_str(), "wb6");
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
}

double file_mb(const std::string& path) { return static_cast<double>(fs::file_size(path)) / 1e6; }

// Seconds of a shell command, run to its end.
double shell_s(const std::string& command) {
  testing::temp_dir dir("bench-input-sh");
  return time_s([&] {
    testing::process p({"/bin/sh", "-c", command}, dir / "out.log");
    wait_ok(p, command);
  });
}

// Seconds to read every example of path as a worker's stream does (one
// reader, in file order, no shuffle), on this thread.
double stream_s(const std::string& path, text_format format, std::size_t* examples) {
  shard_request r{list_data_files(path), 1};
  r.counted_up_to = 0;
  stream_config c;
  c.text.format = format;
  c.batch_size = 1000;
  c.shuffle_buffer = 1000;
  c.passes = 1;
  c.order = unit_order::in_files;
  return time_s([&] {
    example_stream s(plan_shards(r)[0], c, read_position{});
    batch b;
    std::size_t n = 0;
    while (s.next(b)) n += b.size;
    *examples = n;
  });
}

void parse_rows(report& r, const std::string& name, const std::string& path, text_format format,
                int repeats) {
  std::vector<double> ours, wc;
  std::size_t examples = 0;
  const double mb = file_mb(path);
  for (int i = 0; i < repeats; ++i) {
    wc.push_back(mb / shell_s("wc -l '" + path + "' > /dev/null"));
    ours.push_back(mb / stream_s(path, format, &examples));
  }
  r.note(name + " sample", fixed(mb, 1) + " MB, " + std::to_string(examples) + " examples");
  r.limit(name + " parsed, one core", ours, "MB/s", 300, false);
  r.value(name + " wc -l (the floor)", wc, "MB/s");
  r.value(name + " parsed / wc -l", ratios(ours, wc), "ratio");
}

void gzip_rows(report& r, const std::string& plain, const std::string& gz, int repeats) {
  std::vector<double> ours, zcat;
  std::size_t examples = 0;
  const double mb = file_mb(plain);  // uncompressed bytes per second, both
  for (int i = 0; i < repeats; ++i) {
    zcat.push_back(mb / shell_s("zcat '" + gz + "' > /dev/null"));
    ours.push_back(mb / stream_s(gz, text_format::libsvm, &examples));
  }
  r.value("libsvm.gz parsed, one core", ours, "MB/s");
  r.value("zcat > /dev/null", zcat, "MB/s");
  r.ratio("libsvm.gz parsed / zcat", ratios(ours, zcat), 0.8, false);
}

std::vector<std::string> job_args(const std::string& train, const std::string& test, long steps) {
  return {"--model=logreg",         "--data-format=libsvm", "--train-file=" + train,
          "--test-file=" + test,    "--sparse-rows=16777216", "--sparse-optimizer=adagrad",
          "--learning-rate=0.3",    "--lr-decay-rate=1",    "--validation-size=0",
          "--last-step=" + std::to_string(steps), "--save-checkpoint-secs=0", "--log-level=warn",
          "--quiet"};
}

// steps/s of the 2 ps + 2 worker job, streamed and in memory: in one
// process (every core busy training: the reader's parsing shows) and as 4
// processes (examples/cluster_sparse.ini's shape).
void job_rows(report& r, const settings& s, const std::string& train, const std::string& test) {
  for (const bool processes : {false, true}) {
    std::vector<double> streamed, memory;
    for (int i = 0; i < s.repeats; ++i)
      for (const char* input : {"stream", "memory"}) {
        testing::temp_dir dir("bench-input-job");
        auto args = job_args(train, test, s.steps);
        args.push_back(std::string("--input=") + input);
        if (processes)
          run_cluster(s.binary, 2, 2, args, dir);
        else
          run_child(s.binary, args, dir, input);
        const auto sum = read_summary(dir);
        (input[0] == 's' ? streamed : memory).push_back(sum.steps / sum.wall_s);
      }
    const std::string shape = processes ? " (4 processes)" : " (one process)";
    r.value("job steps/s, background reader" + shape, streamed, "steps/s");
    r.value("job steps/s, batches in memory" + shape, memory, "steps/s");
    r.ratio("job steps/s background / memory" + shape, ratios(streamed, memory), 0.95, false);
  }
}

// Worker 1's peak RSS in a cluster of 2 ps + 2 worker processes, on the 4M
// file and on it listed ten times.
void rss_rows(report& r, const settings& s, const testing::temp_dir& tmp) {
  const std::string train = s.data + "/train.libsvm";
  std::string ten;
  for (int i = 0; i < 10; ++i) {
    const auto link = tmp / ("copy-" + std::to_string(i) + ".libsvm");
    fs::create_symlink(fs::absolute(train), link);
    ten += (i ? "," : "") + link;
  }
  std::vector<double> small, large;
  for (int i = 0; i < s.repeats; ++i) {
    for (auto* into : {&small, &large}) {
      testing::temp_dir dir("bench-input-rss");
      const auto& files = into == &small ? train : ten;
      const auto c = run_cluster(s.binary, 2, 2, job_args(files, s.data + "/test.libsvm", s.steps), dir);
      into->push_back(c.worker_rss_mb[1]);
    }
  }
  r.limit("worker 1 peak RSS, 4M examples", small, "MiB", 150, true);
  r.limit("worker 1 peak RSS, 40M examples", large, "MiB", 150, true);
  r.ratio("peak RSS 40M / 4M", ratios(large, small), 1.1, true);
}

}  // namespace

int main(int argc, char** argv) {
  cli args(argc, argv, "bench/input.json");
  try {
    const settings s = parse(args);
    testing::temp_dir tmp("bench-input");
    report r("bench_input");
    r.note("load", loadavg() + ", " + cores_note());
    const std::size_t bytes = s.mb << 20;
    copy_head(s.data + "/train.libsvm", bytes, tmp / "libsvm.txt", tmp / "libsvm.gz");
    parse_rows(r, "libsvm", tmp / "libsvm.txt", text_format::libsvm, s.repeats);
    if (!s.criteo.empty()) {
      copy_head(s.criteo + "/train.tsv", bytes, tmp / "criteo.tsv", "");
      parse_rows(r, "criteo", tmp / "criteo.tsv", text_format::criteo, s.repeats);
    }
    gzip_rows(r, tmp / "libsvm.txt", tmp / "libsvm.gz", s.repeats);
    r.note("job", "logreg 2^24 rows, 2 ps + 2 workers, " + std::to_string(s.steps) +
                      " steps of 100 on the libsvm sample");
    job_rows(r, s, tmp / "libsvm.txt", s.data + "/test.libsvm");
    rss_rows(r, s, tmp);
    r.print(std::cout);
    r.write_json(args.json);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "bench_input: " << e.what() << "\n";
    return 1;
  }
}
