// Test helper: two EndpointCores joined by a perfect, instantaneous "wire"
// that the test can filter (drop/duplicate/reorder) datagram by datagram.
#ifndef BRAID_TESTS_ENDPOINT_CORE_PAIR_H_
#define BRAID_TESTS_ENDPOINT_CORE_PAIR_H_

#include <functional>
#include <memory>
#include <vector>

#include "endpoint/endpoint_core.h"

namespace braid::endpoint::testing {

struct Wire {
  NetAddr from, to;
  std::vector<uint8_t> bytes;
  wire::Entropy entropy = 0;  // the sender's path: which route it takes
};

// `n` bytes that differ with `seed` and along the message.
inline std::vector<uint8_t> Pattern(size_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<uint8_t>(seed * 131 + i * 7 + (i >> 8));
  return v;
}

// A copying send of `bytes` with `cookie`.
inline OutMessage Msg(const std::vector<uint8_t>& bytes, uint64_t cookie) {
  OutMessage m =
      OutMessage::Copy(bytes.data(), static_cast<uint32_t>(bytes.size()));
  m.cookie = cookie;
  return m;
}

class CorePair {
 public:
  // `security`: both cores protect their packets so, with kDomainKey.
  explicit CorePair(ProtocolOptions proto = {}, uint32_t max_datagram = 1472,
                    SecurityMode security = SecurityMode::kNone)
      : security_(security), max_datagram_(max_datagram) {
    a_addr = NetAddr::Ipv4(0x0a000001, 7000);
    b_addr = NetAddr::Ipv4(0x0a000002, 7000);
    a = MakeCore(proto, 0x1111, 1);
    b = MakeCore(proto, 0x2222, 2);
  }
  static constexpr char kDomainKey[] = "braid test domain key, 32 bytes";
  // A guard for `mode` with `key` (null for kNone).
  static std::shared_ptr<PacketGuard> Guard(
      SecurityMode mode, absl::string_view key = kDomainKey) {
    if (mode == SecurityMode::kNone) return nullptr;
    return std::move(PacketGuard::Create(mode, key).value());
  }
  // Makes B anew with its own options (before any traffic).
  void ConfigureB(ProtocolOptions proto) { b = MakeCore(proto, 0x2222, 2); }
  // Restarts B with a new incarnation (all state lost).
  // Its options are the defaults, whatever the pair was made with.
  void RestartB(uint64_t incarnation) {
    b = MakeCore(ProtocolOptions{}, incarnation, 3);
  }

  // Moves datagrams both ways until quiet or `max_rounds`; advances `now` by
  // `step` per round and fires timers. `filter` returns false to drop.
  void Run(int max_rounds, DurationNs step = DurationNs::Micros(5)) {
    for (int i = 0; i < max_rounds; ++i) {
      bool moved = Pump(*a, a_addr, *b, b_addr) | Pump(*b, b_addr, *a, a_addr);
      now += step;
      a->OnTimer(now);
      b->OnTimer(now);
      if (!moved && a->NextPeerTimer().IsInfinite() &&
          b->NextPeerTimer().IsInfinite()) {
        break;
      }
    }
  }

  std::vector<Completion> Drain(EndpointCore& c) {
    std::vector<Completion> v;
    c.PollCompletions(&v, SIZE_MAX);
    return v;
  }

  std::unique_ptr<EndpointCore> a, b;
  NetAddr a_addr, b_addr;
  TimeNs now = TimeNs(1000000);
  std::function<bool(const Wire&)> filter;
  uint64_t datagrams = 0;

 private:
  // A core of this pair: `seed` also keys its secret.
  std::unique_ptr<EndpointCore> MakeCore(const ProtocolOptions& proto,
                                         uint64_t incarnation, uint8_t seed) {
    CoreConfig c;
    c.proto = proto;
    c.max_datagram = max_datagram_;
    c.local_port = 7000;
    c.incarnation = incarnation;
    c.seed = seed;
    c.secret[0] = seed;
    c.guard = Guard(security_);
    return std::make_unique<EndpointCore>(c);
  }

  SecurityMode security_;
  uint32_t max_datagram_;
  TxBatch batch_{64, 9000};
  bool Pump(EndpointCore& src, const NetAddr& src_addr, EndpointCore& dst,
            const NetAddr& dst_addr) {
    TxBatch& batch = batch_;  // allocated once: a 576 KiB arena per call
                              // makes sanitizer builds crawl
    bool moved = false;
    for (;;) {
      batch.clear();
      const size_t n = src.PollTx(now, &batch);
      if (n == 0) break;
      for (const auto& p : batch.packets()) {
        Wire w{src_addr, p.dst, std::vector<uint8_t>(p.data, p.data + p.len),
               p.entropy};
        ++datagrams;
        moved = true;
        if (filter && !filter(w)) continue;
        dst.OnDatagram(now, src_addr, w.bytes, false);
      }
    }
    return moved;
  }
};

}  // namespace braid::endpoint::testing

#endif  // BRAID_TESTS_ENDPOINT_CORE_PAIR_H_
