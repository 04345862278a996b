// The shard's fast update path (the finiteness check fused into SGD, the
// push's buffer reused as the pull's reply, the EMA done after the reply)
// against the plain reference arithmetic, bit for bit.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <random>

#include "protocol/buffers.hpp"
#include "actors/parameter_shard.hpp"
#include "protocol/placement.hpp"
#include "deterministic_fixture.hpp"
#include "model/schedule.hpp"
#include "model/update.hpp"

namespace test_shard_updates {

using namespace downpour;

namespace {

constexpr float inf = std::numeric_limits<float>::infinity();

using downpour::testing::random_floats;

template <class A, class B>
bool same_bits(const A& a, const B& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// The same floats as v, cut into three parts of a larger buffer.
shared_tensor parted_params_of(const std::vector<float>& v) {
  auto buf = std::make_shared<floats>(v.size() + 10);
  std::copy(v.begin(), v.end(), buf->begin() + 10);
  const std::size_t third = v.size() / 3;
  return shared_tensor{buf, {{10, third}, {10 + third, third}, {10 + 2 * third, v.size() - 2 * third}}};
}

struct shard_fixture : downpour::testing::deterministic_fixture {
  shard_actor async_shard(const std::vector<float>& params) {
    shard_config c;
    c.mode = train_mode::async;
    c.last_step = 1000;
    return initialized_shard(c, params);
  }
};

}  // namespace

TEST_CASE("the finiteness check finds NaN and inf anywhere, and nothing else") {
  auto v = random_floats(1003, 1);
  CHECK(all_finite(v.data(), v.size()));
  v[17] = std::numeric_limits<float>::max();
  v[18] = -0.0f;
  v[19] = std::numeric_limits<float>::denorm_min();
  CHECK(all_finite(v.data(), v.size()));
  for (float bad : {inf, -inf, std::numeric_limits<float>::quiet_NaN(), std::nanf("7")}) {
    for (std::size_t at : {std::size_t{0}, std::size_t{500}, v.size() - 1}) {
      auto w = v;
      w[at] = bad;
      CHECK_FALSE(all_finite(w.data(), w.size()));
      auto params = random_floats(w.size(), 2);
      std::vector<float> out(w.size());
      CHECK_FALSE(checked_sgd_into(out.data(), params.data(), w.data(), w.size(), 0.01f));
    }
  }
}

TEST_CASE("an update over the parameters, over the gradient or into a buffer of its own has the same bits") {
  const std::size_t n = 4099;  // odd: vector body and scalar tail
  const float lr = 0.0137f;
  auto params = random_floats(n, 3), grad = random_floats(n, 4);
  std::vector<float> expected(n), mean(n);
  for (std::size_t i = 0; i < n; ++i) {
    expected[i] = params[i] - lr * grad[i];
    mean[i] = params[i] - lr * (grad[i] * (1.0f / 3.0f));
  }
  std::vector<float> out(n);
  sgd_into(out.data(), params.data(), grad.data(), n, lr);
  CHECK(same_bits(out, expected));
  auto p = params;  // in place, as the reference trainer does
  sgd_into(p.data(), p.data(), grad.data(), n, lr);
  CHECK(same_bits(p, expected));
  out.assign(n, 0.0f);
  CHECK(checked_sgd_into(out.data(), params.data(), grad.data(), n, lr));
  CHECK(same_bits(out, expected));
  auto io = grad;  // over the gradient, as a shard does
  CHECK(checked_sgd_into(io.data(), params.data(), io.data(), n, lr));
  CHECK(same_bits(io, expected));
  mean_sgd_into(out.data(), params.data(), grad.data(), n, lr, 3);
  CHECK(same_bits(out, mean));
  p = params;
  mean_sgd_into(p.data(), p.data(), grad.data(), n, lr, 3);
  CHECK(same_bits(p, mean));
}

TEST_CASE("a shared buffer pool reuses a buffer only once no one else holds it") {
  shared_buffer_pool pool(2);
  auto a = pool.take(5);
  CHECK(a->size() == 5);
  const float* storage = a->data();
  std::shared_ptr<const floats> reader = a;  // a pull reply still holds it
  a.reset();
  auto b = pool.take(5);
  CHECK(b->data() != storage);
  reader.reset();
  b.reset();
  auto c = pool.take(5);
  CHECK(pool.tracked() == 2);
  CHECK((c->data() == storage || c->data() != nullptr));
  auto d = pool.take(5);  // c holds one, d gets the other tracked buffer
  CHECK(d->data() != c->data());
  CHECK((d->data() == storage || c->data() == storage));  // both reused, none allocated
  auto e = pool.take(7);  // beyond the two tracked: made, not tracked
  CHECK(e->size() == 7);
  CHECK(pool.tracked() == 2);
}

TEST_CASE("a layout covers the whole buffer only when its ranges tile it in order") {
  CHECK(covers_whole(shard_layout{{{0, 4}, {4, 6}}}, 10));
  CHECK_FALSE(covers_whole(shard_layout{{{0, 4}}}, 10));
  CHECK_FALSE(covers_whole(shard_layout{{{4, 6}, {0, 4}}}, 10));
  std::vector<float> full = {1, 2, 3, 4, 5, 6};
  std::vector<float> part(3);
  gather_into(shard_layout{{{4, 2}, {0, 1}}}, full.data(), part.data());
  CHECK(part == std::vector<float>{5, 6, 1});
}

TEST_CASE_FIXTURE(shard_fixture,
                  "pushes and pulls in any order give the reference parameters and EMA") {
  const std::size_t n = 1027;
  auto params = random_floats(n, 5);
  auto shard = async_shard(params);
  auto ref = params, ema = params;
  lr_schedule schedule;
  for (std::int64_t step = 0; step < 6; ++step) {
    auto grad = random_floats(n, 100 + static_cast<unsigned>(step));
    (*chief)->send(shard, push_atom_v, push_msg{step, 0, shared_tensor{grad}});
    sgd_into(ref.data(), ref.data(), grad.data(), n, learning_rate_at(schedule, step));
    update_ema(ema.data(), ref.data(), n, ema_decay_at(0.99f, step));
    if (step % 3 == 2) continue;  // sometimes two pushes without a pull between
    auto pulled = ask<pull_reply>(shard, pull_atom_v, std::int64_t{0});
    CHECK(pulled.step == step + 1);
    CHECK(same_bits(pulled.params.values(), ref));
  }
  auto s = ask<shard_snapshot>(shard, snapshot_atom_v);
  CHECK(s.step == 6);
  CHECK(same_bits(s.params.values, ref));
  CHECK(same_bits(s.ema.values, ema));
  stop(shard);
}

TEST_CASE_FIXTURE(shard_fixture, "an inf in the last float rejects the whole push, EMA included") {
  const std::size_t n = 1000;
  auto params = random_floats(n, 6);
  auto shard = async_shard(params);
  auto grad = random_floats(n, 7);
  (*chief)->send(shard, push_atom_v, push_msg{0, 0, shared_tensor{grad}});
  sched->run();
  auto before = ask<shard_snapshot>(shard, snapshot_atom_v);
  grad.back() = -inf;
  (*chief)->send(shard, push_atom_v, push_msg{1, 0, shared_tensor{grad}});
  auto after = ask<shard_snapshot>(shard, snapshot_atom_v);
  CHECK(after.step == 1);
  CHECK(after.rejected == 1);
  CHECK(same_bits(after.params.values, before.params.values));
  CHECK(same_bits(after.ema.values, before.ema.values));
  auto pulled = ask<pull_reply>(shard, pull_atom_v, std::int64_t{0});
  CHECK(same_bits(pulled.params.values(), before.params.values));
  stop(shard);
}

TEST_CASE_FIXTURE(shard_fixture,
                  "a push with a wrong length, a future stamp or NaN is answered with its own error") {
  const std::size_t n = 100;
  auto params = random_floats(n, 8);
  auto shard = async_shard(params);
  auto refusal = [&](const push_msg& m) { return push_verdict(shard, m); };
  auto grad = random_floats(n, 9);
  const auto wrong_length = refusal(push_msg{0, 4, shared_tensor{random_floats(n + 1, 9)}});
  CHECK(wrong_length.rfind("shape_mismatch: ", 0) == 0);
  CHECK(wrong_length.find("push of 101 floats to a shard of 100 from worker 4") != std::string::npos);
  const auto future = refusal(push_msg{7, 2, shared_tensor{grad}});
  CHECK(future.rfind("future_step: ", 0) == 0);
  CHECK(future.find("future step 7 from worker 2") != std::string::npos);
  auto nan_grad = grad;
  nan_grad[50] = std::numeric_limits<float>::quiet_NaN();
  const auto not_finite = refusal(push_msg{0, 3, shared_tensor{nan_grad}});
  CHECK(not_finite.rfind("not_finite: ", 0) == 0);
  CHECK(not_finite.find("worker 3 has NaN or inf") != std::string::npos);
  CHECK(refusal(push_msg{0, 1, shared_tensor{grad}}) == "accepted at 1");
  auto s = ask<shard_snapshot>(shard, snapshot_atom_v);
  CHECK(s.step == 1);
  CHECK(s.rejected == 3);
  stop(shard);
}

TEST_CASE_FIXTURE(shard_fixture,
                  "a push before the shard is initialized is refused with its own error and counted") {
  shard_config c;
  c.mode = train_mode::async;
  c.last_step = 1000;
  auto shard = spawn_parameter_shard(*sys, c);
  std::string answer;
  sys->spawn([&](caf::event_based_actor* self) {
    // The handlers run after this function has returned: self by value.
    self->request(shard, caf::infinite, push_atom_v,
                  push_msg{0, 5, shared_tensor{random_floats(10, 1)}})
        .then([&answer](std::int64_t step) { answer = "accepted at " + std::to_string(step); },
              [&answer, self](caf::error& err) {
                answer = to_string(static_cast<errc>(err.code())) + ": " + self->system().render(err);
              });
  });
  sched->run();
  CHECK(answer.rfind("not_initialised: ", 0) == 0);
  CHECK(answer.find("push before init from worker 5") != std::string::npos);
  auto params = random_floats(10, 2);
  shard_init init;
  init.ranges = {0, params.size()};
  init.params.values = to_floats(params);
  init.ema.values = to_floats(params);
  (*chief)->send(shard, init_atom_v, std::move(init));  // the shard takes no anonymous init
  auto s = ask<shard_snapshot>(shard, snapshot_atom_v);
  CHECK(s.step == 0);
  CHECK(s.rejected == 1);
  CHECK(same_bits(s.params.values, params));  // nothing of the refused push was applied
  stop(shard);
}

TEST_CASE_FIXTURE(shard_fixture, "a shard reads only its own parts of a pushed whole gradient") {
  const std::size_t n = 300;
  auto params = random_floats(n, 11);
  auto shard = async_shard(params);
  // The worker's gradient covers 2n floats; this shard owns [n, 2n) as two parts.
  auto whole = random_floats(2 * n, 12);
  const std::vector<param_range> parts{{n, 100}, {n + 100, n - 100}};
  (*chief)->send(
      shard, push_atom_v,
      push_msg{0, 0, shared_tensor{std::make_shared<floats>(to_floats(whole)), parts}});
  auto ref = params;
  sgd_into(ref.data(), ref.data(), whole.data() + n, n, learning_rate_at(lr_schedule{}, 0));
  auto pulled = ask<pull_reply>(shard, pull_atom_v, std::int64_t{0});
  CHECK(pulled.step == 1);
  CHECK(same_bits(pulled.params.values(), ref));
  stop(shard);
}

TEST_CASE_FIXTURE(shard_fixture, "an update never changes the parameters an earlier pull holds") {
  const std::size_t n = 257;
  auto params = random_floats(n, 13);
  auto shard = async_shard(params);
  std::vector<pull_reply> held;
  for (std::int64_t step = 0; step < 8; ++step) {
    held.push_back(ask<pull_reply>(shard, pull_atom_v, std::int64_t{0}));
    (*chief)->send(shard, push_atom_v, push_msg{step, 0, shared_tensor{random_floats(n, 14)}});
    sched->run();
  }
  // Each reply still shows the parameters of its own step, in buffers of its own.
  auto expected = params;
  for (std::int64_t step = 0; step < 8; ++step) {
    CAPTURE(step);
    CHECK(held[step].step == step);
    CHECK(same_bits(held[step].params.values(), expected));
    sgd_into(expected.data(), expected.data(), random_floats(n, 14).data(), n,
              learning_rate_at(lr_schedule{}, step));
  }
  stop(shard);
}

TEST_CASE_FIXTURE(
    shard_fixture,
    "a pull answers without parameters only when the offered update is the last one") {
  const std::size_t n = 64;
  auto params = random_floats(n, 15);
  auto shard = async_shard(params);
  const auto lr0 = float_bits(learning_rate_at(lr_schedule{}, 0));
  const auto lr1 = float_bits(learning_rate_at(lr_schedule{}, 1));
  (*chief)->send(shard, push_atom_v, push_msg{0, 3, shared_tensor{random_floats(n, 16)}});
  auto r = ask<pull_reply>(shard, pull_atom_v, replay_offer{3, 0, lr0});
  CHECK(r.replayed);
  CHECK(r.step == 1);
  CHECK(r.params.size() == 0);
  // Another worker, another base step or another learning rate: the parameters.
  for (auto offer : {replay_offer{2, 0, lr0}, replay_offer{3, 1, lr0}, replay_offer{3, 0, lr1}}) {
    auto full = ask<pull_reply>(shard, pull_atom_v, offer);
    CHECK_FALSE(full.replayed);
    CHECK(full.params.size() == n);
  }
  // Worker 3's push followed by worker 1's: worker 3 must pull what changed.
  (*chief)->send(shard, push_atom_v, push_msg{1, 3, shared_tensor{random_floats(n, 17)}});
  (*chief)->send(shard, push_atom_v, push_msg{2, 1, shared_tensor{random_floats(n, 18)}});
  auto after = ask<pull_reply>(shard, pull_atom_v, replay_offer{3, 1, lr1});
  CHECK_FALSE(after.replayed);
  CHECK(after.step == 3);
  auto stats = ask<shard_stats>(shard, stats_atom_v);
  CHECK(stats.replayed == 1);
  stop(shard);
}

TEST_CASE("updates over tensors cut into different parts give the bits of whole ones") {
  const std::size_t n = 1000;
  auto p = random_floats(n, 20), a = random_floats(n, 21), b = random_floats(n, 22);
  // b in two parts of a larger buffer, in reverse order; a and p in one piece.
  std::vector<float> big(2 * n);
  std::copy(b.begin(), b.begin() + 300, big.begin() + n + 700);
  std::copy(b.begin() + 300, b.end(), big.begin() + 5);
  auto parted = [&] {
    return shared_tensor{std::make_shared<floats>(to_floats(big)), {{n + 700, 300}, {5, n - 300}}};
  };
  CHECK(same_bits(parted().values(), b));
  const float lr = 0.0137f;
  std::vector<float> expected = p;
  sgd_into(expected.data(), expected.data(), b.data(), n, lr);
  auto g = parted();
  CHECK(sgd_into_grad(g, shared_tensor{p}, lr));
  CHECK(same_bits(g.values(), expected));
  auto whole_b = shared_tensor{b};
  CHECK(sgd_into_grad(whole_b, parted_params_of(p), lr));  // params in parts, gradient whole
  CHECK(same_bits(whole_b.values(), expected));
  // Sync: a + b, then the mean step, against mean_sgd_into on the plain sum.
  std::vector<float> sum(n);
  for (std::size_t i = 0; i < n; ++i) sum[i] = a[i] + b[i];
  expected = p;
  mean_sgd_into(expected.data(), expected.data(), sum.data(), n, lr, 2);
  auto acc = shared_tensor{a};
  add_into_sum(acc, parted());
  CHECK(same_bits(acc.values(), sum));
  mean_sgd_into_sum(acc, shared_tensor{p}, lr, 2);
  CHECK(same_bits(acc.values(), expected));
  // The EMA toward parameters in parts.
  auto ema = random_floats(n, 23), ref = ema;
  update_ema(ref.data(), b.data(), n, 0.9f);
  ema_toward(ema.data(), parted(), 0.9f);
  CHECK(same_bits(ema, ref));
  CHECK_FALSE(all_finite_parts(shared_tensor{std::vector<float>{1.0f, inf}}));
  CHECK(all_finite_parts(parted()));
}

}  // namespace test_shard_updates
