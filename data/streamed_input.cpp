#include "data/streamed_input.hpp"

#include <algorithm>
#include <optional>

#include "data/background_batches.hpp"
#include "data/example_stream.hpp"
#include "data/line_reader.hpp"

namespace downpour {
namespace {

// Batches a background reader keeps ready.
constexpr std::size_t kReadyBatches = 8;

class batch_set final : public dataset {
 public:
  explicit batch_set(batch b) : b_(std::move(b)) {}
  std::size_t size() const override { return b_.size; }
  std::size_t features() const override { return b_.input_size; }
  void copy_features(std::size_t i, float* out) const override {
    std::copy_n(b_.x.data() + i * b_.input_size, b_.input_size, out);
  }
  std::int32_t label(std::size_t i) const override { return b_.y[i]; }
  bool sparse() const override { return !b_.offsets.empty(); }
  sparse_row sparse_features(std::size_t i) const override {
    const auto first = b_.offsets[i];
    return {b_.keys.data() + first, b_.values.data() + first,
            static_cast<std::size_t>(b_.offsets[i + 1] - first)};
  }

 private:
  batch b_;
};

// Calls seen(line, file) for each line of the files in order, until it
// returns false; faults become the reader's errors.
template <class Seen>
void for_each_line(const std::vector<data_file>& files, const text_spec& spec, Seen seen) {
  for (std::uint32_t f = 0; f < files.size(); ++f) {
    byte_reader bytes(files[f].path, files[f].size);
    line_reader lines(bytes, spec.max_line_bytes);
    while (const auto line = lines.next()) {
      try {
        if (!seen(*line, f)) return;
      } catch (const line_fault& fault) {
        throw lines.fault(*line, fault);
      }
    }
  }
}

// The first `count` examples of file 0 into out; returns the byte after them.
std::uint64_t read_held_out(const data_file& file, const example_parser& parser,
                            std::size_t count, batch& out) {
  clear_batch(out, parser);
  std::uint64_t end = 0;
  if (count == 0) return end;
  for_each_line({file}, parser.spec(), [&](const line_reader::line& line, std::uint32_t) {
    if (parser.parse(line.text, 0, line.offset, out)) end = line.next;
    return out.size < count;
  });
  if (out.size < count)
    throw data_error("data: " + file.path + ": --validation-size " + std::to_string(count) +
                     " exceeds its " + std::to_string(out.size) +
                     " examples (the held-out examples come from the first training file)");
  return end;
}

// CSV: one more than the largest label of the files.
std::size_t classes_of(const std::vector<data_file>& files, const example_parser& parser) {
  std::int32_t most = 0;
  batch scratch;
  for_each_line(files, parser.spec(), [&](const line_reader::line& line, std::uint32_t f) {
    clear_batch(scratch, parser);
    if (parser.parse(line.text, f, line.offset, scratch)) most = std::max(most, scratch.y[0]);
    return true;
  });
  return static_cast<std::size_t>(most) + 1;
}

}  // namespace

streamed_input open_input(const input_request& r) {
  streamed_input in;
  in.text = r.text;
  in.shuffle_buffer = std::max<std::size_t>(1, r.shuffle_buffer);
  in.passes = r.passes;
  std::vector<data_file> train;
  if (!r.train_files.empty()) train = list_data_files(r.train_files);
  if (!r.test_files.empty()) in.test = list_data_files(r.test_files);
  if (r.text.format == text_format::csv) {
    const auto& first = train.empty() ? in.test : train;
    if (!first.empty()) in.csv_fields = csv_fields_of(first[0].path, r.text);
  }
  const example_parser parser(in.text, in.csv_fields);
  if (r.text.format == text_format::csv && !in.test.empty()) in.classes = classes_of(in.test, parser);
  if (train.empty()) return in;
  shard_request plan{train, r.workers};
  plan.first_byte = read_held_out(train[0], parser, r.validation_size, in.validation);
  plan.counted_up_to = r.counted_up_to;
  in.train = plan_shards(plan);
  return in;
}

std::unique_ptr<batch_source> training_batches(const streamed_input& input, std::size_t worker,
                                               std::size_t batch_size, std::uint64_t seed,
                                               const read_position& start) {
  stream_config c;
  c.text = input.text;
  c.csv_fields = input.csv_fields;
  c.csv_classes = input.classes;
  c.batch_size = batch_size;
  c.shuffle_buffer = input.shuffle_buffer;
  c.passes = input.passes;
  c.seed = seed;
  c.who = "worker " + std::to_string(worker);
  auto stream = std::make_unique<example_stream>(input.train.at(worker), c, start);
  return std::make_unique<background_batches>(std::move(stream), kReadyBatches);
}

std::unique_ptr<batch_source> in_order_batches(const streamed_input& input, std::size_t chunk,
                                               const std::string& who) {
  shard_request r{input.test, 1};
  r.what = "the test files";
  r.counted_up_to = 0;  // one reader: no need to count
  stream_config c;
  c.text = input.text;
  c.csv_fields = input.csv_fields;
  c.csv_classes = input.classes;
  c.batch_size = chunk;
  c.shuffle_buffer = chunk;
  c.passes = 1;
  c.order = unit_order::in_files;
  c.who = who;
  auto stream = std::make_unique<example_stream>(plan_shards(r)[0], c, read_position{});
  return std::make_unique<background_batches>(std::move(stream), kReadyBatches);
}

std::shared_ptr<const dataset> batch_dataset(batch examples) {
  return std::make_shared<batch_set>(std::move(examples));
}

}  // namespace downpour
