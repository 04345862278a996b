#include "data/example_stream.hpp"

#include <limits>
#include <numeric>
#include <random>
#include <utility>

namespace downpour {
namespace {

constexpr std::size_t kAllLines = std::numeric_limits<std::size_t>::max();

}  // namespace

// Examples of the pass's units from (unit, offset) on, handed out in
// `order`, a permutation drawn once the window is complete.
struct example_stream::window {
  batch examples;
  std::vector<std::uint32_t> order;
  std::size_t taken = 0;
  std::uint64_t unit = 0;
  std::uint64_t offset = read_position::unit_start;
  bool complete = false;
  bool ends_pass = false;  // the pass's units are read to their end
  // Where the next window begins: after the line of the last example.
  std::uint64_t next_unit = 0;
  std::uint64_t next_offset = read_position::unit_start;

  bool exhausted() const { return complete && taken == examples.size; }
  void reset(const example_parser& parser, std::uint64_t at_unit, std::uint64_t at_offset) {
    clear_batch(examples, parser);
    order.clear();
    taken = 0;
    unit = next_unit = at_unit;
    offset = next_offset = at_offset;
    complete = ends_pass = false;
  }
};

example_stream::example_stream(shard_plan plan, stream_config cfg, const read_position& start)
    : plan_(std::move(plan)),
      cfg_(std::move(cfg)),
      parser_(cfg_.text, cfg_.csv_fields, cfg_.csv_classes),
      cursor_(std::make_unique<unit_cursor>(plan_, cfg_.text.max_line_bytes)),
      current_(std::make_unique<window>()),
      ahead_(std::make_unique<window>()) {
  if (cfg_.batch_size == 0) throw data_error("data: batch size must be at least 1");
  if (cfg_.shuffle_buffer == 0) cfg_.shuffle_buffer = 1;
  resumed_ = start.plan != 0 && start.plan == plan_.fingerprint;
  batches_ = start.batches;
  if (cfg_.passes > 0 && start.pass >= cfg_.passes) {
    pass_ = start.pass;
    done_ = true;
    return;
  }
  if (!resumed_) {
    start_pass(start.pass, 0, read_position::unit_start);
    return;
  }
  start_pass(start.pass, start.unit, start.offset);
  current_->taken = static_cast<std::size_t>(std::min<std::uint64_t>(start.taken, current_->examples.size));
  pass_examples_ = start.examples;
}

example_stream::~example_stream() = default;

void example_stream::start_pass(std::uint64_t pass, std::uint64_t unit, std::uint64_t offset) {
  pass_ = pass;
  pass_examples_ = 0;
  cursor_->start(pass_order(plan_, cfg_.order, mix_seed(cfg_.seed, pass)), unit, offset);
  current_->reset(parser_, unit, offset);
  fill(*current_, kAllLines);
  if (!current_->ends_pass) ahead_->reset(parser_, current_->next_unit, current_->next_offset);
}

bool example_stream::fill(window& w, std::size_t lines) {
  for (std::size_t n = 0; n < lines && !w.complete; ++n) {
    auto it = w.examples.size < cfg_.shuffle_buffer ? cursor_->next() : std::nullopt;
    if (!it) {
      w.ends_pass = w.examples.size < cfg_.shuffle_buffer;
      w.complete = true;
      break;
    }
    try {
      if (parser_.parse(it->line.text, it->file, it->line.offset, w.examples)) {
        w.next_unit = it->at;
        w.next_offset = it->line.next;
      }
    } catch (const line_fault& f) {
      throw cursor_->fault(*it, f);
    }
  }
  if (!w.complete) return false;
  w.order.resize(w.examples.size);
  std::iota(w.order.begin(), w.order.end(), std::uint32_t{0});
  if (cfg_.order == unit_order::shuffled && w.order.size() > 1) {
    std::mt19937_64 rng(mix_seed(mix_seed(cfg_.seed, pass_), mix_seed(w.unit, w.offset)));
    for (std::size_t i = w.order.size(); i > 1; --i)
      std::swap(w.order[i - 1], w.order[draw_below(rng, i)]);
  }
  return true;
}

bool example_stream::read_ahead(std::size_t lines) {
  if (done_ || current_->ends_pass || ahead_->complete) return false;
  return !fill(*ahead_, lines);
}

// The window read ahead becomes the one handed out.
void example_stream::next_window() {
  fill(*ahead_, kAllLines);
  std::swap(current_, ahead_);
  if (!current_->ends_pass) ahead_->reset(parser_, current_->next_unit, current_->next_offset);
}

bool example_stream::next_pass() {
  if (pass_examples_ == 0)
    throw data_error("data: " + cfg_.who + " read no examples in pass " + std::to_string(pass_ + 1) +
                     ": its share of the files holds none");
  if (cfg_.passes > 0 && pass_ + 1 >= cfg_.passes) {
    ++pass_;
    done_ = true;
    return false;
  }
  start_pass(pass_ + 1, 0, read_position::unit_start);
  return true;
}

void example_stream::copy_example(window& w, batch& out) const {
  const batch& from = w.examples;
  const std::uint32_t i = w.order[w.taken++];
  if (parser_.sparse()) {
    const auto a = static_cast<std::ptrdiff_t>(from.offsets[i]);
    const auto b = static_cast<std::ptrdiff_t>(from.offsets[i + 1]);
    out.keys.insert(out.keys.end(), from.keys.begin() + a, from.keys.begin() + b);
    out.values.insert(out.values.end(), from.values.begin() + a, from.values.begin() + b);
    out.offsets.push_back(out.keys.size());
  } else {
    const std::size_t f = from.input_size;
    const auto a = static_cast<std::ptrdiff_t>(i * f);
    out.x.insert(out.x.end(), from.x.begin() + a, from.x.begin() + a + static_cast<std::ptrdiff_t>(f));
  }
  out.y.push_back(from.y[i]);
  out.origins.push_back(from.origins[i]);
  ++out.size;
}

bool example_stream::next(batch& out) {
  clear_batch(out, parser_);
  while (!done_ && out.size < cfg_.batch_size) {
    if (!current_->exhausted()) {
      copy_example(*current_, out);
    } else if (!current_->ends_pass) {
      next_window();
    } else if (out.size > 0) {
      break;  // a pass ends with the examples it has left
    } else {
      next_pass();
    }
  }
  if (out.size == 0) return false;
  ++batches_;
  pass_examples_ += out.size;
  return true;
}

read_position example_stream::position() const {
  read_position p;
  p.plan = plan_.fingerprint;
  p.batches = batches_;
  if (done_ || (current_->exhausted() && current_->ends_pass)) {
    p.pass = done_ ? pass_ : pass_ + 1;
    return p;
  }
  p.pass = pass_;
  p.examples = pass_examples_;
  if (current_->exhausted()) {
    p.unit = current_->next_unit;
    p.offset = current_->next_offset;
  } else {
    p.unit = current_->unit;
    p.offset = current_->offset;
    p.taken = current_->taken;
  }
  return p;
}

}  // namespace downpour
