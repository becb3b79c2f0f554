// A seeded random fuzzer for the DPDK backend's receive-side framing code
// (ClassifyFrame, HandleNeighborFrame), run as an ordinary unit test.
//
// It feeds ~200k Ethernet frames -- noise, valid UDP datagrams of either
// family, ARP requests and replies, neighbour solicitations and
// advertisements, most of them mutated, half of the mutated ones with their
// checksums repaired so the checks behind the checksums are reached -- each
// in an exactly-sized heap buffer (so the ASan build reports any read past
// the end), and checks the invariants in dpdk_frame_check.h.
//
// Replay: BRAID_FUZZ_SEED=<seed> [BRAID_FUZZ_ITER=<i>] [BRAID_FUZZ_ITERS=<n>]
// (the seed and iteration are printed on failure).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/rng.h"
#include "gtest/gtest.h"
#include "tests/fuzz/dpdk_frame_check.h"

namespace braid::backend::dpdk::fuzz {
namespace {

using testing::Bytes;

constexpr uint64_t kDefaultSeed = 0xd9d4f4a3e5ULL;
constexpr uint64_t kDefaultIterations = 200000;
constexpr size_t kActions = 5;  // NeighborAction values

uint64_t EnvOr(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  uint64_t out = 0;
  if (v != nullptr && absl::SimpleAtoi(v, &out)) return out;
  return fallback;
}

constexpr uint8_t kInteresting8[] = {0,    1,    2,    3,    4,    5,    6,
                                     0x11, 0x3a, 0x40, 0x45, 0x46, 0x60, 0x7f,
                                     0x80, 0x87, 0x88, 0xfe, 0xff};
constexpr uint16_t kInteresting16[] = {
    0,      1,      7,      8,      9,      19,     20,     24,     0x0800,
    0x0806, 0x86dd, 0x8100, 0x2000, 0x4000, 0x1fff, 0x7fff, 0xfffe, 0xffff};

template <typename T, size_t N>
T Pick(Rng& rng, const T (&values)[N]) {
  return values[rng.Uniform(N)];
}

class EthGenerator {
 public:
  EthGenerator(Rng* rng, const LocalIdentity& me) : rng_(*rng), me_(me) {}

  Bytes Noise() {
    Bytes b(rng_.Uniform(200));
    for (auto& x : b) x = static_cast<uint8_t>(rng_.Next());
    // Often addressed to us with a known EtherType, to get past the start.
    if (b.size() >= 14 && rng_.Bernoulli(0.7)) {
      std::memcpy(b.data(), me_.mac.data(), 6);
      StoreBe16(b.data() + 12, Pick(rng_, kInteresting16));
    }
    return b;
  }

  // A valid datagram to us (sometimes of the other family, to another port
  // or MAC), with an occasional CE mark and Ethernet padding.
  Bytes Udp() {
    const bool v6 =
        (me_.addr.family == NetAddr::Family::kIpv6) != rng_.Bernoulli(0.05);
    FrameHeaderSpec s = testing::Spec(v6 ? "[fd00::1]:1" : "10.0.0.1:1",
                                      v6 ? "[fd00::2]:9000" : "10.0.0.2:9000",
                                      rng_.Bernoulli(0.8));
    s.src.port = static_cast<uint16_t>(rng_.Next());
    if (rng_.Bernoulli(0.05)) s.dst.port = static_cast<uint16_t>(rng_.Next());
    Bytes payload(rng_.Bernoulli(0.1) ? rng_.Uniform(1500) : rng_.Uniform(40));
    for (auto& x : payload) x = static_cast<uint8_t>(rng_.Next());
    Bytes f = testing::BuildFrame(s, payload);
    if (rng_.Bernoulli(0.1)) f[15] |= v6 ? 0x30 : kEcnCe;
    if (rng_.Bernoulli(0.2)) f.resize(std::max<size_t>(f.size(), 60), 0);
    return f;
  }

  Bytes Arp(NeighborTable* table, TimeNs now) {
    const LocalIdentity peer{testing::kMacA, PeerIp()};
    const NetAddr target = rng_.Bernoulli(0.8) ? me_.addr : PeerIp();
    Bytes f(kArpFrameLen);
    if (rng_.Bernoulli(0.5)) {
      WriteArpRequest(peer.mac, peer.addr, target, absl::MakeSpan(f));
    } else {
      if (rng_.Bernoulli(0.5)) table->ShouldRequest(peer.addr, now);
      WriteArpReply(peer.mac, peer.addr, me_.mac, target, absl::MakeSpan(f));
    }
    if (rng_.Bernoulli(0.3)) f.resize(42 + rng_.Uniform(19));
    return f;
  }

  Bytes Nd(NeighborTable* table, TimeNs now) {
    const NetAddr peer = PeerIp();
    const NetAddr target = rng_.Bernoulli(0.8) ? me_.addr : PeerIp();
    Bytes f(kNdFrameLen);
    if (rng_.Bernoulli(0.5)) {
      WriteNeighborSolicitation(testing::kMacA, peer, target,
                                absl::MakeSpan(f));
    } else {
      if (rng_.Bernoulli(0.5)) table->ShouldRequest(peer, now);
      WriteNeighborAdvertisement(testing::kMacA, peer, me_.mac, me_.addr,
                                 rng_.Bernoulli(0.8), absl::MakeSpan(f));
    }
    return f;
  }

  void Mutate(Bytes* b) {
    const int n = 1 + static_cast<int>(rng_.Uniform(3));
    for (int i = 0; i < n; ++i) MutateOnce(b);
  }

 private:
  // A neighbour's address of our family (or ours, rarely).
  NetAddr PeerIp() {
    NetAddr a = me_.addr;
    a.port = 0;
    if (rng_.Bernoulli(0.03)) return a;
    const size_t last = a.family == NetAddr::Family::kIpv4 ? 3 : 15;
    a.ip[last] = static_cast<uint8_t>(3 + rng_.Uniform(8));
    return a;
  }

  void MutateOnce(Bytes* b) {
    const size_t size = b->size();
    switch (rng_.Uniform(6)) {
      case 0:
        if (size > 0) (*b)[rng_.Uniform(size)] ^= 1u << rng_.Uniform(8);
        break;
      case 1:
        if (size > 0) (*b)[rng_.Uniform(size)] = Pick(rng_, kInteresting8);
        break;
      case 2:
        if (size >= 2) {
          // Mostly inside the headers, where the checks are.
          const size_t at = rng_.Uniform(std::min<size_t>(size - 1, 90));
          StoreBe16(b->data() + at, Pick(rng_, kInteresting16));
        }
        break;
      case 3:
        b->resize(rng_.Uniform(size + 1));
        break;
      case 4: {
        const size_t n = 1 + rng_.Uniform(32);
        for (size_t i = 0; i < n; ++i) {
          b->push_back(static_cast<uint8_t>(rng_.Next()));
        }
        break;
      }
      default:
        if (size > 0) {
          const size_t from = rng_.Uniform(size);
          const size_t len = 1 + rng_.Uniform(std::min<size_t>(size - from, 8));
          b->erase(b->begin() + from, b->begin() + from + len);
        }
        break;
    }
  }

  Rng& rng_;
  const LocalIdentity& me_;
};

// Recomputes whatever checksums the (mutated) frame has room for, using the
// lengths it claims, so the checks behind them are exercised.
void RepairChecksums(Bytes* f) {
  if (f->size() < 14) return;
  const uint16_t type = LoadBe16(f->data() + 12);
  uint8_t* ip = f->data() + 14;
  const size_t room = f->size() - 14;
  if (type == kEtherTypeIpv4 && room >= 20) {
    ip[10] = ip[11] = 0;
    StoreBe16(ip + 10, testing::NaiveChecksum(Bytes(ip, ip + 20)));
  }
  const bool v4 = type == kEtherTypeIpv4;
  const size_t hdr = v4 ? 20 : 40;
  if ((type != kEtherTypeIpv4 && type != kEtherTypeIpv6) || room < hdr + 8) {
    return;
  }
  const uint8_t proto = v4 ? ip[9] : ip[6];
  size_t l4_len =
      v4 ? size_t{LoadBe16(ip + 2)} - std::min<size_t>(LoadBe16(ip + 2), 20)
         : LoadBe16(ip + 4);
  if (l4_len < 8 || hdr + l4_len > room) return;
  uint8_t* l4 = ip + hdr;
  // UDP covers only its own length (the rest of the IP payload is trimmed).
  const size_t ulen = LoadBe16(l4 + 4);
  if (proto == kIpProtoUdp && ulen >= 8 && ulen <= l4_len) l4_len = ulen;
  const size_t field = proto == kIpProtoUdp ? 6 : 2;
  l4[field] = l4[field + 1] = 0;
  Bytes all = testing::PseudoHeader(*f);  // UDP's; fix the protocol/length
  if (proto != kIpProtoUdp || LoadBe16(l4 + 4) != l4_len) {
    const size_t at = v4 ? 8 : 32;
    all.resize(v4 ? 12 : 40);
    if (v4) {
      all[at + 1] = proto;
      StoreBe16(all.data() + at + 2, static_cast<uint16_t>(l4_len));
    } else {
      std::fill(all.begin() + at, all.end(), 0);
      StoreBe16(all.data() + at + 2, static_cast<uint16_t>(l4_len));
      all[at + 7] = proto;
    }
  }
  all.insert(all.end(), l4, l4 + l4_len);
  const uint16_t c = testing::NaiveChecksum(all);
  StoreBe16(l4 + field, c == 0 && proto == kIpProtoUdp ? 0xffff : c);
}

HwChecksum PickHw(Rng& rng) {
  const uint64_t r = rng.Uniform(10);
  return r < 8 ? HwChecksum::kUnknown
               : (r == 8 ? HwChecksum::kGood : HwChecksum::kBad);
}

std::string Hex(const Bytes& b) {
  std::string out;
  for (size_t i = 0; i < b.size() && i < 256; ++i) {
    absl::StrAppend(&out, i % 32 == 0 ? "\n  " : " ",
                    absl::Hex(b[i], absl::kZeroPad2));
  }
  return out;
}

uint64_t IterationSeed(uint64_t seed, uint64_t i) {
  return seed ^ (i * 0x9e3779b97f4a7c15ULL);
}

TEST(DpdkFrameFuzzTest, RandomAndMutatedFramesKeepClassifierInvariants) {
  const uint64_t seed = EnvOr("BRAID_FUZZ_SEED", kDefaultSeed);
  const uint64_t iterations = EnvOr("BRAID_FUZZ_ITERS", kDefaultIterations);
  const uint64_t only = EnvOr("BRAID_FUZZ_ITER", ~uint64_t{0});
  const uint64_t first = only == ~uint64_t{0} ? 0 : only;
  const uint64_t end = only == ~uint64_t{0} ? iterations : only + 1;

  uint64_t drops[static_cast<size_t>(RxDrop::kCount)] = {};
  uint64_t kinds[4] = {};
  uint64_t actions[kActions] = {};
  for (uint64_t i = first; i < end; ++i) {
    Rng rng(IterationSeed(seed, i));
    const LocalIdentity me = FuzzIdentity(rng.Bernoulli(0.5));
    NeighborTable table(4);
    const TimeNs now(static_cast<int64_t>(rng.Uniform(1000000000)));
    EthGenerator gen(&rng, me);
    Bytes input;
    switch (rng.Uniform(10)) {
      case 0:
        input = gen.Noise();
        break;
      case 1:
      case 2:
      case 3:
        input = me.addr.family == NetAddr::Family::kIpv4 ? gen.Arp(&table, now)
                                                         : gen.Nd(&table, now);
        break;
      default:
        input = gen.Udp();
        break;
    }
    if (rng.Bernoulli(0.7)) {
      gen.Mutate(&input);
      if (rng.Bernoulli(0.5)) RepairChecksums(&input);
    }
    const HwChecksum ip = PickHw(rng);
    const HwChecksum l4 = PickHw(rng);

    std::unique_ptr<uint8_t[]> buf(new uint8_t[input.size()]);
    if (!input.empty()) std::memcpy(buf.get(), input.data(), input.size());
    const EthCheckResult r =
        CheckEthFrame(buf.get(), input.size(), me, ip, l4, now, &table);
    ASSERT_TRUE(r.violation.empty())
        << r.violation << "\nseed=" << seed << " iteration=" << i
        << " (replay: BRAID_FUZZ_SEED=" << seed << " BRAID_FUZZ_ITER=" << i
        << ")\ninput (" << input.size() << " bytes):" << Hex(input);
    ++kinds[static_cast<size_t>(r.kind)];
    if (r.kind == FrameKind::kDrop) ++drops[static_cast<size_t>(r.why)];
    ++actions[static_cast<size_t>(r.action)];
  }

  // Every path must have been reached by a full run, or the test is hollow.
  if (only == ~uint64_t{0} && iterations >= kDefaultIterations / 2) {
    for (size_t d = 0; d < static_cast<size_t>(RxDrop::kCount); ++d) {
      EXPECT_GT(drops[d], 0u)
          << "never dropped for " << RxDropName(static_cast<RxDrop>(d));
    }
    for (size_t k = 0; k < 4; ++k) {
      EXPECT_GT(kinds[k], 0u) << "never classified as kind " << k;
    }
    for (size_t a = 0; a < kActions; ++a) {
      EXPECT_GT(actions[a], 0u)
          << "never " << NeighborActionName(static_cast<NeighborAction>(a));
    }
  }
  std::string summary = absl::StrCat("seed=", seed, " iterations=", end - first,
                                     " udp=", kinds[0], " arp=", kinds[1],
                                     " nd=", kinds[2], " drop=", kinds[3]);
  for (size_t d = 0; d < static_cast<size_t>(RxDrop::kCount); ++d) {
    absl::StrAppend(&summary, " ", RxDropName(static_cast<RxDrop>(d)), "=",
                    drops[d]);
  }
  for (size_t a = 0; a < kActions; ++a) {
    absl::StrAppend(&summary, " ",
                    NeighborActionName(static_cast<NeighborAction>(a)), "=",
                    actions[a]);
  }
  RecordProperty("summary", summary);
  std::printf("%s\n", summary.c_str());
}

}  // namespace
}  // namespace braid::backend::dpdk::fuzz
