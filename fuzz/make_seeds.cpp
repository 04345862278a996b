// Writes the committed seed corpora, fuzz/corpus/<target>/, and the option-name
// dictionary fuzz/fuzz_config.dict: valid inputs made with the project's own
// writers (encode_checkpoint, the option table) plus a few near misses.
// Regenerate with `scripts/run-fuzzers --make-seeds` after a format change.
#include <zlib.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "config/option_table.hpp"
#include "model/mlp_spec.hpp"
#include "runtime/files/checkpoint.hpp"

namespace fs = std::filesystem;
using bytes = std::string;

namespace {

void put(const fs::path& file, const bytes& b) {
  fs::create_directories(file.parent_path());
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(b.data(), static_cast<std::streamsize>(b.size()));
  if (!out) throw std::runtime_error("cannot write " + file.string());
}

void be32(bytes& b, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) b.push_back(static_cast<char>((v >> shift) & 0xff));
}

bytes idx_images(std::uint32_t count, std::uint32_t rows, std::uint32_t cols) {
  bytes b;
  be32(b, 2051);
  be32(b, count);
  be32(b, rows);
  be32(b, cols);
  for (std::uint32_t i = 0; i < count * rows * cols; ++i) b.push_back(static_cast<char>(i * 37));
  return b;
}

bytes idx_labels(std::uint32_t count, std::uint32_t classes) {
  bytes b;
  be32(b, 2049);
  be32(b, count);
  for (std::uint32_t i = 0; i < count; ++i) b.push_back(static_cast<char>(i % classes));
  return b;
}

bytes gzip(const bytes& in) {
  z_stream z{};
  if (deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("deflateInit2");
  bytes out(deflateBound(&z, in.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) throw std::runtime_error("deflate");
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// The fuzz_idx layout: u16 LE image length, flags, validation size, images, labels.
bytes idx_input(const bytes& images, const bytes& labels, std::uint8_t flags,
                std::uint8_t validation) {
  bytes b;
  b.push_back(static_cast<char>(images.size() & 0xff));
  b.push_back(static_cast<char>(images.size() >> 8));
  b.push_back(static_cast<char>(flags));
  b.push_back(static_cast<char>(validation));
  return b + images + labels;
}

void idx_seeds(const fs::path& dir) {
  const bytes images = idx_images(3, 2, 2), labels = idx_labels(3, 3);
  put(dir / "pair-3x2x2-mnist", idx_input(images, labels, 1, 1));
  put(dir / "pair-3x2x2-gz-mnist-gz", idx_input(gzip(images), gzip(labels), 3, 0));
  put(dir / "pair-1x28x28", idx_input(idx_images(1, 28, 28), idx_labels(1, 10), 0, 0));
  put(dir / "pair-10x4x3-mnist", idx_input(idx_images(10, 4, 3), idx_labels(10, 10), 1, 9));
  put(dir / "bad-swapped", idx_input(labels, images, 0, 0));
  put(dir / "bad-truncated", idx_input(images.substr(0, images.size() - 1), labels, 0, 0));
  put(dir / "bad-count-mismatch", idx_input(images, idx_labels(2, 3), 0, 0));
}

downpour::checkpoint make_checkpoint(const downpour::model_layout& layout, std::int64_t step,
                                     const char* mode, float scale) {
  downpour::checkpoint c;
  c.layout = layout;
  c.global_step = step;
  c.mode = mode;
  c.wall_time = 1.7e9 + step;
  for (std::size_t i = 0; i < layout.size(); ++i) {
    c.params.push_back(scale * static_cast<float>(i) - 1.0f);
    c.ema.push_back(scale * static_cast<float>(i) * 0.5f);
  }
  return c;
}

// The format-1 seeds (format1-*, before models had names) were written by
// an earlier build and stay as they are: this build writes formats 2 to 4.
void checkpoint_seeds(const fs::path& dir) {
  using downpour::mlp_spec;
  const bytes tiny =
      downpour::encode_checkpoint(make_checkpoint(mlp_spec{2, {3}, 2}.layout("mlp"), 7, "async",
                                                  0.25f));
  put(dir / "valid-mlp-2-3-2-async", tiny);
  put(dir / "valid-mlp-3-2-2-4-ssp", downpour::encode_checkpoint(make_checkpoint(
                                         mlp_spec{3, {2, 2}, 4}.layout("mlp"), 1, "ssp", 2)));
  const downpour::model_layout custom("custom", "", {{"w", 2, 1, {}, true}, {"b", 1, 1, {}, false}});
  downpour::checkpoint special = make_checkpoint(custom, 600, "sync", 1);
  special.params[0] = std::numeric_limits<float>::quiet_NaN();
  special.params[1] = std::numeric_limits<float>::infinity();
  special.ema[2] = -0.0f;
  put(dir / "valid-custom-sync-nan-inf", downpour::encode_checkpoint(special));
  // Format 4: a streamed job's read positions after the arrays.
  downpour::checkpoint streamed = make_checkpoint(mlp_spec{2, {3}, 2}.layout("mlp"), 9, "async", 1);
  streamed.positions = {{0, {7, 1, 3, 4096, 12, 900, 40}}, {1, {7, 0, 2, ~0ull, 0, 850, 0}}};
  put(dir / "valid-mlp-positions", downpour::encode_checkpoint(streamed));
  put(dir / "bad-truncated", tiny.substr(0, tiny.size() - 5));
  bytes damaged = tiny;
  damaged[damaged.size() / 2] ^= 0x40;
  put(dir / "bad-checksum", damaged);
  put(dir / "bad-magic-only", "DOWNPOUR-CKPT");
}

// '\n' (even) starts an INI input, '!' (odd) an argv input split on NUL.
bytes argv_input(const std::vector<std::string>& args) {
  bytes b = "!";
  for (std::size_t i = 0; i < args.size(); ++i) b += (i ? bytes(1, '\0') : bytes()) + args[i];
  return b;
}

void config_seeds(const fs::path& dir, const fs::path& source) {
  for (const char* name : {"cluster_async", "cluster_sync", "cluster_ssp", "cluster_backup"}) {
    std::ifstream in(source / "examples" / (std::string(name) + ".ini"), std::ios::binary);
    if (!in) continue;
    put(dir / (std::string("ini-") + name), "\n" + bytes(std::istreambuf_iterator<char>(in), {}));
  }
  put(dir / "ini-section-aliases",
      "\n[downpour]\njob_name = worker\ntask_id = 1\nps_hosts = a:1\n"
      "worker_hosts = b:2, [::1]:3\nmode = sync\nreplicas-to-aggregate = 2\n");
  put(dir / "ini-numbers",
      "\nlearning-rate = 1e-3\nlr-decay-rate = 1\nema-decay = 0\nl2 = 0\nseed = "
      "18446744073709551615\nlr-staircase = yes\nquiet = off\nscheduler-threads = 256\n"
      "heartbeat-interval = 0\nnode-timeout = 0.5\n");
  put(dir / "ini-bad-line", "\nbatch-size\n= 3\n[other]\nx=1\n");
  put(dir / "argv-config-override",
      argv_input({"--config", "@ini", "--role=worker", "--task", "1", "--batch-size=50"}));
  put(dir / "argv-command-eval", argv_input({"eval", "--checkpoint", "model.ckpt-10", "--quiet"}));
  put(dir / "argv-conflict", argv_input({"--ps_hosts=a:1", "--ps-hosts", "b:2", "--job_name=ps"}));
  put(dir / "argv-help", argv_input({"--help"}));
  put(dir / "argv-version", argv_input({"inspect", "--version"}));
  put(dir / "argv-tls", argv_input({"--tls-ca=x", "--tls-cert=y", "--tls-passphrase", "p"}));
}

// Every option and alias name, for -dict: the fuzzer need not guess them.
void config_dictionary(const fs::path& file) {
  std::string dict = "# Generated by fuzz/make_seeds.cpp from the option table.\n";
  auto add = [&dict](const std::string& word) { dict += "\"" + word + "\"\n"; };
  for (const auto& spec : downpour::config_detail::option_specs()) {
    add("--" + spec.name);
    add(spec.name + " = ");
  }
  for (const auto& alias : downpour::config_detail::alias_specs()) {
    add("--" + alias.name);
    add(alias.name + " = ");
  }
  for (const char* word : {"@ini", "[downpour]", "\\x00", "=", ":", ",", "true", "false", "train",
                           "eval", "inspect", "export", "status", "plot", "ps", "worker", "local",
                           "reference", "async", "sync", "ssp", "round-robin", "tcp", "1e308",
                           "nan", "inf", "-1", "18446744073709551616", "[::1]:65535"})
    add(word);
  put(file, dict);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s SOURCE_DIR  (writes SOURCE_DIR/fuzz/corpus/*)\n", argv[0]);
    return 2;
  }
  const fs::path source = argv[1];
  const fs::path corpus = source / "fuzz" / "corpus";
  try {
    idx_seeds(corpus / "fuzz_idx");
    checkpoint_seeds(corpus / "fuzz_checkpoint");
    config_seeds(corpus / "fuzz_config", source);
    config_dictionary(source / "fuzz" / "fuzz_config.dict");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_seeds: %s\n", e.what());
    return 1;
  }
  return 0;
}
