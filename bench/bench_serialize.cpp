// A gradient push (push_msg, 397,510 floats) through CAF's binary serializer
// and deserializer, against a memcpy of the same bytes into a warm buffer.
// For contrast: the same floats as a std::vector<float> through CAF's default
// element-wise inspector (pack754 per float; it hangs on +inf, so finite data).
#include <cstring>
#include <random>

#include "protocol/messages.hpp"
#include "bench/bench_common.hpp"

using namespace downpour;
using namespace downpour::bench;

namespace {

constexpr std::size_t kFloats = 397510;

// A float vector with CAF's default inspect: one apply per element.
struct plain_floats {
  std::vector<float> values;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, plain_floats& x) {
  return f(x.values);
}

std::vector<float> finite_values() {
  std::mt19937 rng(7);
  std::normal_distribution<float> d(0.0f, 0.01f);
  std::vector<float> v(kFloats);
  for (auto& x : v) x = d(rng);
  return v;
}

struct serialize_bench {
  caf::actor_system& sys;
  std::vector<char> buf, copy;  // warm: capacity kept between iterations
  std::vector<char> raw_src;

  template <class T>
  void encode(T& x) {
    buf.clear();
    caf::binary_serializer sink{sys, buf};
    if (auto err = sink(x)) throw std::runtime_error("encode: " + sys.render(err));
  }
  template <class T>
  void decode(T& x) {
    caf::binary_deserializer source{sys, buf};
    if (auto err = source(x)) throw std::runtime_error("decode: " + sys.render(err));
  }
  // Milliseconds per call of fn, over n calls.
  static double per_call_ms(long n, const std::function<void()>& fn) {
    return 1e3 * time_s([&] {
             for (long i = 0; i < n; ++i) fn();
           }) /
           n;
  }
  double memcpy_ms(long n) {
    copy.resize(raw_src.size());
    return per_call_ms(n, [&] { std::memcpy(copy.data(), raw_src.data(), raw_src.size()); });
  }
};

template <class T>
bool round_trips(serialize_bench& b, T x, const std::vector<float>& expect) {
  b.encode(x);
  T y;
  b.decode(y);
  const auto v = [&] {
    if constexpr (std::is_same<T, push_msg>::value)
      return y.grad.values();
    else
      return y.values;
  }();
  return v.size() == expect.size() &&
         std::memcmp(v.data(), expect.data(), v.size() * sizeof(float)) == 0;
}

struct series {
  std::vector<double> memcpy_ms, enc, dec, dec_fresh, msg_enc, msg_dec, plain_enc, plain_dec;
};

void one_repeat(serialize_bench& b, push_msg& msg, plain_floats& plain, series& s, long fast,
                long slow) {
  s.memcpy_ms.push_back(b.memcpy_ms(fast));
  s.enc.push_back(b.per_call_ms(fast, [&] { b.encode(msg); }));
  push_msg back;  // warm target: its vector keeps its capacity
  s.dec.push_back(b.per_call_ms(fast, [&] { b.decode(back); }));
  s.dec_fresh.push_back(b.per_call_ms(fast, [&] {
    push_msg fresh;  // what a receiver does per message: allocate, then fill
    b.decode(fresh);
  }));
  auto m = caf::make_message(push_atom_v, msg);
  s.msg_enc.push_back(b.per_call_ms(fast, [&] { b.encode(m); }));
  caf::message m2;
  s.msg_dec.push_back(b.per_call_ms(fast, [&] { b.decode(m2); }));
  s.plain_enc.push_back(b.per_call_ms(slow, [&] { b.encode(plain); }));
  plain_floats pback;
  s.plain_dec.push_back(b.per_call_ms(slow, [&] { b.decode(pback); }));
}

void fill_report(report& rep, const series& s, std::size_t bytes) {
  rep.note("payload", std::to_string(kFloats) + " floats = " + std::to_string(bytes) + " bytes");
  rep.value("memcpy into warm buffer", s.memcpy_ms, "ms");
  rep.value("push_msg encode (raw-blob tensor)", s.enc, "ms");
  rep.value("push_msg decode (warm target)", s.dec, "ms");
  rep.value("push_msg decode (fresh target)", s.dec_fresh, "ms");
  rep.value("caf::message(push, push_msg) encode", s.msg_enc, "ms");
  rep.value("caf::message(push, push_msg) decode (fresh)", s.msg_dec, "ms");
  rep.value("vector<float> element-wise encode", s.plain_enc, "ms");
  rep.value("vector<float> element-wise decode", s.plain_dec, "ms");
  std::vector<double> gb;
  for (double ms : s.memcpy_ms) gb.push_back(bytes / (ms * 1e-3) / 1e9);
  rep.value("memcpy bandwidth", gb, "GB/s");
  rep.ratio("encode/memcpy ratio", ratios(s.enc, s.memcpy_ms), 1.5, true);
  rep.ratio("decode/memcpy ratio", ratios(s.dec, s.memcpy_ms), 1.5, true);
  rep.value("decode fresh/memcpy (allocation per msg)", ratios(s.dec_fresh, s.memcpy_ms), "x");
  rep.value("message encode/memcpy", ratios(s.msg_enc, s.memcpy_ms), "x");
  rep.value("message decode fresh/memcpy", ratios(s.msg_dec, s.memcpy_ms), "x");
  rep.value("element-wise encode/memcpy (contrast)", ratios(s.plain_enc, s.memcpy_ms), "x");
  rep.value("element-wise decode/memcpy (contrast)", ratios(s.plain_dec, s.memcpy_ms), "x");
}

}  // namespace

int main(int argc, char** argv) {
  cli args(argc, argv, "bench-serialize.json");
  const int repeats = args.repeats > 0 ? args.repeats : 5;
  const long fast = args.steps > 0 ? args.steps : 300, slow = std::max(5L, fast / 15);
  caf::actor_system_config cfg;
  cfg.add_message_types<caf::id_block::downpour>();
  caf::actor_system sys{cfg};
  serialize_bench b{sys, {}, {}, {}};
  auto values = finite_values();
  push_msg msg{42, 1, shared_tensor{values}};
  plain_floats plain{values};
  b.raw_src.resize(values.size() * sizeof(float));
  std::memcpy(b.raw_src.data(), values.data(), b.raw_src.size());
  bool exact = round_trips(b, msg, values) && round_trips(b, plain, values);
  series s;
  one_repeat(b, msg, plain, s, 10, 1);  // warm-up, discarded
  s = series{};
  for (int r = 0; r < repeats; ++r) one_repeat(b, msg, plain, s, fast, slow);
  report rep("bench_serialize");
  rep.note("cores", cores_note());
  rep.note("loadavg", loadavg());
  rep.note("iterations", std::to_string(fast) + " (raw, memcpy), " + std::to_string(slow) +
                             " (element-wise) x " + std::to_string(repeats) + " repeats");
  rep.note("round trip bit-exact", exact ? "yes" : "NO");
  fill_report(rep, s, b.raw_src.size());
  rep.print(std::cout);
  rep.write_json(args.json);
  return exact ? 0 : 1;
}
