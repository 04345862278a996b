// The dense variables' optimizer slots in a checkpoint (format 6): written
// and read back bit for bit, named by inspect as TensorFlow names them,
// checked against the rule of the job restoring them; a checkpoint without
// them (an older format) still loads, its slots starting afresh.
#include <doctest/doctest.h>

#include <cstring>
#include <random>
#include <sstream>

#include "model/dense_rules.hpp"
#include "model/init.hpp"
#include "npz_reader.hpp"
#include "runtime/cli/commands.hpp"
#include "runtime/files/checkpoint.hpp"
#include "subprocess.hpp"

namespace test_checkpoint_dense_slots {

using namespace downpour;
using downpour::testing::read_npz_array;
using downpour::testing::temp_dir;

namespace {

model_layout deep_layout(update_rule hidden_rule) {
  return model_layout("deep", "4-3-2",
                      {{.name = "deep/hidden_1/weights", .rows = 4, .cols = 3,
                        .update = {.rule = hidden_rule, .learning_rate = 0.05f}},
                       {.name = "deep/hidden_1/biases", .rows = 1, .cols = 3},
                       {.name = "deep/logits/weights", .rows = 3, .cols = 2,
                        .update = {.rule = update_rule::adam}},
                       {.name = "deep/logits/biases", .rows = 1, .cols = 2}});
}

checkpoint sample(const model_layout& layout, bool with_slots) {
  checkpoint c;
  c.layout = layout;
  c.global_step = 12;
  c.mode = "async";
  c.params = initial_parameters(layout, 3);
  c.ema = c.params;
  if (with_slots) {
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    c.slots.resize(whole_slot_count(layout.variables()));
    for (auto& s : c.slots) s = u(rng);
  }
  return c;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

std::string inspected(const std::string& path) {
  options cmd;
  cmd.checkpoint_file = path;
  cmd.command = command_kind::inspect;
  std::ostringstream out, err;
  REQUIRE(run_command(cmd, {}, out, err) == 0);
  return out.str();
}

}  // namespace

TEST_CASE("a checkpoint's dense slots come back bit for bit and inspect names them as TensorFlow") {
  const temp_dir dir("ckpt-dense-slots");
  const model_layout layout = deep_layout(update_rule::adagrad);
  const checkpoint c = sample(layout, true);
  REQUIRE(c.slots.size() == 12 + 2 * 6);
  const std::string path = save_checkpoint(dir.str(), c, 5);
  const checkpoint back = read_checkpoint(path);
  CHECK(same_bits(back.slots, c.slots));
  CHECK(same_bits(back.params, c.params));
  CHECK(back.layout.variables()[0].update.rule == update_rule::adagrad);
  CHECK(back.layout.variables()[2].update.rule == update_rule::adam);
  CHECK_NOTHROW(check_layout(back, layout, path));
  const checkpoint_info info = inspect_checkpoint(path);
  CHECK(info.format_version == checkpoint_format_version);
  CHECK(info.dense_slots == c.slots.size());
  const std::string shown = inspected(path);
  CHECK(shown.find("slot: deep/hidden_1/weights/Adagrad shape=[4, 3]") != std::string::npos);
  CHECK(shown.find("slot: deep/logits/weights/Adam shape=[3, 2]") != std::string::npos);
  CHECK(shown.find("slot: deep/logits/weights/Adam_1 shape=[3, 2]") != std::string::npos);
  CHECK(shown.find("biases/") == std::string::npos);
}

TEST_CASE("export writes each dense slot as an array of its variable's shape, named as TF does") {
  const temp_dir dir("ckpt-dense-export");
  const checkpoint c = sample(deep_layout(update_rule::ftrl), true);
  options cmd;
  cmd.checkpoint_file = save_checkpoint(dir.str(), c, 5);
  cmd.command = command_kind::export_npz;
  cmd.out_file = dir / "m.npz";
  std::ostringstream out, err;
  REQUIRE(run_command(cmd, {}, out, err) == 0);
  // The slots in variable order: FTRL's two of the hidden weights, Adam's two of the logits'.
  const std::vector<std::pair<std::string, std::size_t>> arrays = {
      {"deep/hidden_1/weights/Ftrl", 0}, {"deep/hidden_1/weights/Ftrl_1", 12},
      {"deep/logits/weights/Adam", 24}, {"deep/logits/weights/Adam_1", 30}};
  for (const auto& [name, at] : arrays) {
    const auto a = read_npz_array(cmd.out_file, name);
    const std::size_t rows = at < 24 ? 4 : 3, cols = at < 24 ? 3 : 2;
    CHECK_MESSAGE((a.shape == std::vector<std::size_t>{rows, cols}), name);
    CHECK_MESSAGE(std::equal(a.values.begin(), a.values.end(), c.slots.begin() + at), name);
  }
  CHECK(read_npz_array(cmd.out_file, "deep/hidden_1/weights").values.size() == 12);
}

TEST_CASE("a checkpoint without dense slots is written as before and loads, its slots afresh") {
  const temp_dir dir("ckpt-dense-no-slots");
  const model_layout layout = deep_layout(update_rule::adagrad);
  const std::string path = save_checkpoint(dir.str(), sample(layout, false), 5);
  CHECK(inspect_checkpoint(path).format_version == dense_checkpoint_format_version);
  const checkpoint back = read_checkpoint(path);
  CHECK(back.slots.empty());
  CHECK_NOTHROW(check_layout(back, layout, path));
  CHECK(inspected(path).find("slot: ") == std::string::npos);
  // A shard's slots from none: each at its rule's initial value.
  const dense_rules rules(layout.variables(), {0, layout.size()});
  CHECK(rules.slots()[0] == 0.1f);
}

TEST_CASE("a checkpoint's dense slots are refused by a job updating their variable by another rule") {
  const temp_dir dir("ckpt-dense-rule");
  const std::string path =
      save_checkpoint(dir.str(), sample(deep_layout(update_rule::adagrad), true), 5);
  const checkpoint back = read_checkpoint(path);
  try {
    check_layout(back, deep_layout(update_rule::momentum), path);
    FAIL("not refused");
  } catch (const checkpoint_error& e) {
    CHECK(std::string(e.what()) ==
          "checkpoint " + path +
              " holds the adagrad slots of variable deep/hidden_1/weights, this job updates it "
              "by momentum");
  }
}

TEST_CASE("a restore cuts the whole model's dense slots by variable for any shard's ranges") {
  const model_layout layout = deep_layout(update_rule::ftrl);
  const checkpoint c = sample(layout, true);
  const auto& vars = layout.variables();
  const std::vector<std::uint64_t> left{0, 7}, right{7, layout.size() - 7};
  const auto a = shard_slots(vars, left, c.slots), b = shard_slots(vars, right, c.slots);
  CHECK(same_bits(whole_slots(vars, {{left, a}, {right, b}}), c.slots));
  // FTRL's two slots of the hidden weights: values 0..6 on the left shard.
  CHECK(a[0] == c.slots[0]);
  CHECK(a[7] == c.slots[12]);
  CHECK(b[0] == c.slots[7]);
}

}  // namespace test_checkpoint_dense_slots
