// A seeded random fuzzer for wire::FrameReader, run as an ordinary unit test.
//
// It feeds ~200k datagrams -- pure noise, noise with plausible frame headers,
// and valid datagrams with a few mutations -- each in an exactly-sized heap
// buffer (so the ASan build reports any read past the end), and checks the
// invariants in frame_check.h: bounded loop, accepted frames are valid and
// re-serialize to the same bytes, errors are sticky.
//
// Half of the inputs carry a datagram preamble; every input is checked both
// as a bare frame sequence (CheckDatagram) and as a whole datagram
// (CheckFullDatagram: preamble, then frames).
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
#include "tests/fuzz/frame_check.h"
#include "wire/frames.h"

namespace braid::wire::fuzz {
namespace {

using Bytes = std::vector<uint8_t>;

constexpr uint64_t kDefaultSeed = 0x5eed0f0b4a1dULL;
constexpr uint64_t kDefaultIterations = 200000;

uint64_t EnvOr(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  uint64_t out = 0;
  if (v != nullptr && absl::SimpleAtoi(v, &out)) return out;
  return fallback;
}

// Values at the edges of the checks: zero, one, the known maxima and their
// neighbours, sign bits, all ones.
constexpr uint8_t kInteresting8[] = {0,    1,    2,    3,    4,    0x0f,
                                     0x10, 0x11, 0x7f, 0x80, 0xfe, 0xff};
constexpr uint16_t kInteresting16[] = {
    0, 1, 2, 15, 16, 17, 31, 32, 33, 48, 0x7fff, 0x8000, 0xfffe, 0xffff};
constexpr uint32_t kInteresting32[] = {
    0,          1,          2,          16,         0xffff,    0x10000,
    0x7fffffff, 0x80000000, 0xfffffff0, 0xfffffffe, 0xffffffff};

template <typename T, size_t N>
T Pick(Rng& rng, const T (&values)[N]) {
  return values[rng.Uniform(N)];
}

class DatagramGenerator {
 public:
  explicit DatagramGenerator(Rng* rng) : rng_(*rng) {}

  // Uniformly random bytes, 0..300 of them.
  Bytes Noise() {
    Bytes b(rng_.Uniform(301));
    for (auto& x : b) x = static_cast<uint8_t>(rng_.Next());
    return b;
  }

  // Random bytes whose frame headers mostly have the right version and a
  // known type, so the reader gets past its first checks.
  Bytes PlausibleNoise() {
    Bytes b = Noise();
    for (size_t pos = 0; pos + 1 < b.size();) {
      b[pos] = rng_.Bernoulli(0.9) ? kVersion : Pick(rng_, kInteresting8);
      b[pos + 1] = static_cast<uint8_t>(1 + rng_.Uniform(3));
      pos += 32 + rng_.Uniform(32);
    }
    return b;
  }

  // Puts a preamble in front: valid with a random port (rarely 0), or
  // occasionally with a wrong magic or version byte.
  void PrependPreamble(Bytes* b) {
    uint8_t pre[kPreambleSize];
    const uint16_t port = rng_.Bernoulli(0.02)
                              ? 0
                              : static_cast<uint16_t>(1 + rng_.Uniform(65535));
    WritePreamble(port, absl::MakeSpan(pre));
    if (rng_.Bernoulli(0.02)) pre[rng_.Uniform(2)] ^= 1u << rng_.Uniform(8);
    b->insert(b->begin(), pre, pre + kPreambleSize);
  }

  // 1..4 valid frames back to back; `*frames` gets the count.
  Bytes Valid(size_t* frames) {
    Bytes b;
    *frames = 1 + rng_.Uniform(4);
    for (size_t i = 0; i < *frames; ++i) {
      switch (rng_.Uniform(3)) {
        case 0:
          AppendData(&b);
          break;
        case 1:
          AppendAck(&b);
          break;
        default:
          AppendCtrl(&b);
          break;
      }
    }
    return b;
  }

  // Applies 1..4 random mutations.
  void Mutate(Bytes* b) {
    const int n = 1 + static_cast<int>(rng_.Uniform(4));
    for (int i = 0; i < n; ++i) MutateOnce(b);
  }

 private:
  uint64_t Incarnation() {
    return rng_.Bernoulli(0.2) ? Pick(rng_, kInteresting32) : rng_.Next() | 1;
  }
  uint32_t U32() {
    return rng_.Bernoulli(0.5) ? Pick(rng_, kInteresting32)
                               : static_cast<uint32_t>(rng_.Next());
  }

  void AppendData(Bytes* b) {
    DataHeader h;
    h.flags = static_cast<uint8_t>(rng_.Uniform(kDataFlagsKnown + 1));
    h.path_id = static_cast<uint8_t>(rng_.Next());
    h.stream_id = static_cast<uint16_t>(rng_.Next());
    h.src_incarnation = rng_.Next() | 1;
    h.dst_incarnation = rng_.Bernoulli(0.3) ? 0 : Incarnation();
    h.psn = Psn(U32());
    h.path_seq = PathSeq(U32());
    h.msg_seq = MsgSeq(U32());
    h.stream_seq = U32();
    size_t len = rng_.Uniform(65);
    if (rng_.Bernoulli(0.05)) len = rng_.Uniform(1501);
    if (rng_.Bernoulli(0.001)) len = 0xffff;
    if (len == 0) {
      h.msg_len = 0;
      h.frag_offset = 0;
    } else {
      const uint64_t extra = rng_.Bernoulli(0.5) ? 0 : U32();
      h.msg_len =
          static_cast<uint32_t>(std::min<uint64_t>(len + extra, 0xffffffffULL));
      h.frag_offset =
          static_cast<uint32_t>(rng_.Uniform(uint64_t{h.msg_len} - len + 1));
    }
    if (h.flags & kDataFlagPlaced) {
      h.placement.key = rng_.Next();
      h.placement.head_len =
          static_cast<uint32_t>(rng_.Uniform(uint64_t{h.msg_len} + 1));
      h.placement.offset = rng_.Bernoulli(0.5) ? U32() : rng_.Next();
    }
    Bytes payload(len);
    for (auto& x : payload) x = static_cast<uint8_t>(rng_.Next());
    const size_t at = b->size();
    const size_t hdr = DataHeaderBytes(h.flags);
    b->resize(at + hdr + len);
    const size_t n = WriteData(h, payload, absl::MakeSpan(*b).subspan(at));
    ASSERT_EQ(n, hdr + len);
  }

  void AppendAck(Bytes* b) {
    AckHeader h;
    h.flags = static_cast<uint8_t>(rng_.Uniform(kAckFlagsKnown + 1));
    h.echo_path_id = static_cast<uint8_t>(rng_.Next());
    h.src_incarnation = rng_.Next() | 1;
    h.dst_incarnation = Incarnation();
    h.cum_psn = Psn(U32());
    h.echo_path_seq = PathSeq(U32());
    h.ack_delay_ns = U32();
    h.credit_psn = Psn(U32());
    h.ce_count = U32();
    h.session = U32();
    std::vector<uint64_t> sack(rng_.Uniform(kMaxSackWords + 1));
    for (auto& w : sack) w = rng_.Bernoulli(0.3) ? ~uint64_t{0} : rng_.Next();
    const size_t at = b->size();
    b->resize(at + AckFrameSize(sack.size()));
    const size_t n = WriteAck(h, sack, absl::MakeSpan(*b).subspan(at));
    ASSERT_EQ(n, AckFrameSize(sack.size()));
  }

  void AppendCtrl(Bytes* b) {
    CtrlFrame c;
    c.type = static_cast<CtrlType>(1 + rng_.Uniform(6));
    c.src_incarnation = rng_.Next() | 1;
    c.dst_incarnation = Incarnation();
    if (IsChallengeType(c.type)) {
      c.nonce = rng_.Next();
    } else {
      c.session = U32();
      c.value = U32();
    }
    const size_t at = b->size();
    b->resize(at + kCtrlFrameSize);
    ASSERT_EQ(WriteCtrl(c, absl::MakeSpan(*b).subspan(at)), kCtrlFrameSize);
  }

  void MutateOnce(Bytes* b) {
    const size_t size = b->size();
    switch (rng_.Uniform(8)) {
      case 0:  // flip one bit
        if (size > 0) (*b)[rng_.Uniform(size)] ^= 1u << rng_.Uniform(8);
        break;
      case 1:  // one byte to an edge value
        if (size > 0) (*b)[rng_.Uniform(size)] = Pick(rng_, kInteresting8);
        break;
      case 2: {  // big-endian 16-bit edge value
        if (size < 2) break;
        const size_t at = rng_.Uniform(size - 1);
        const uint16_t v = Pick(rng_, kInteresting16);
        (*b)[at] = static_cast<uint8_t>(v >> 8);
        (*b)[at + 1] = static_cast<uint8_t>(v);
        break;
      }
      case 3: {  // big-endian 32-bit edge value, or 64 zero bits
        if (size >= 8 && rng_.Bernoulli(0.25)) {
          // Often lands on an incarnation: frames start at 8-byte multiples.
          const size_t at = 8 * rng_.Uniform(size / 8);
          std::memset(b->data() + at, 0, 8);
          break;
        }
        if (size < 4) break;
        const size_t at = rng_.Uniform(size - 3);
        const uint32_t v = Pick(rng_, kInteresting32);
        for (int i = 0; i < 4; ++i) {
          (*b)[at + i] = static_cast<uint8_t>(v >> (24 - 8 * i));
        }
        break;
      }
      case 4:  // truncate
        b->resize(rng_.Uniform(size + 1));
        break;
      case 5: {  // append noise
        const size_t n = 1 + rng_.Uniform(64);
        for (size_t i = 0; i < n; ++i) {
          b->push_back(static_cast<uint8_t>(rng_.Next()));
        }
        break;
      }
      case 6: {  // duplicate a slice somewhere else
        if (size == 0) break;
        const size_t from = rng_.Uniform(size);
        const size_t len = 1 + rng_.Uniform(std::min<size_t>(size - from, 96));
        const size_t to = rng_.Uniform(size + 1);
        const Bytes slice(b->begin() + from, b->begin() + from + len);
        b->insert(b->begin() + to, slice.begin(), slice.end());
        break;
      }
      default: {  // delete a slice
        if (size == 0) break;
        const size_t from = rng_.Uniform(size);
        const size_t len = 1 + rng_.Uniform(std::min<size_t>(size - from, 64));
        b->erase(b->begin() + from, b->begin() + from + len);
        break;
      }
    }
  }

  Rng& rng_;
};

std::string Hex(const Bytes& b) {
  std::string out;
  for (size_t i = 0; i < b.size() && i < 512; ++i) {
    absl::StrAppend(&out, i % 32 == 0 ? "\n  " : " ",
                    absl::Hex(b[i], absl::kZeroPad2));
  }
  if (b.size() > 512) absl::StrAppend(&out, "\n  ...");
  return out;
}

// One iteration's input stream is derived from (seed, iteration) alone, so
// a failure replays without running the iterations before it.
uint64_t IterationSeed(uint64_t seed, uint64_t i) {
  return seed ^ (i * 0x9e3779b97f4a7c15ULL);
}

TEST(FrameReaderFuzzTest, RandomAndMutatedDatagramsKeepReaderInvariants) {
  const uint64_t seed = EnvOr("BRAID_FUZZ_SEED", kDefaultSeed);
  const uint64_t iterations = EnvOr("BRAID_FUZZ_ITERS", kDefaultIterations);
  const uint64_t only = EnvOr("BRAID_FUZZ_ITER", ~uint64_t{0});
  const uint64_t first = only == ~uint64_t{0} ? 0 : only;
  const uint64_t end = only == ~uint64_t{0} ? iterations : only + 1;

  uint64_t errors_seen[static_cast<size_t>(ParseError::kCount)] = {};
  uint64_t frames_accepted = 0;
  for (uint64_t i = first; i < end; ++i) {
    Rng rng(IterationSeed(seed, i));
    DatagramGenerator gen(&rng);
    Bytes input;
    size_t valid_frames = 0;  // > 0: an unmutated valid datagram
    const uint64_t kind = rng.Uniform(10);
    const bool has_preamble = rng.Bernoulli(0.5);
    if (kind == 0) {
      input = gen.Noise();
    } else if (kind == 1) {
      input = gen.PlausibleNoise();
    } else {
      input = gen.Valid(&valid_frames);
    }
    if (has_preamble) gen.PrependPreamble(&input);
    if (kind >= 3) {
      valid_frames = 0;
      gen.Mutate(&input);
    }
    ASSERT_FALSE(HasFatalFailure())
        << "generator failed, seed=" << seed << " iteration=" << i;

    // Exactly sized, so ASan reports a read of even one byte past the end.
    std::unique_ptr<uint8_t[]> buf(new uint8_t[input.size()]);
    if (!input.empty()) std::memcpy(buf.get(), input.data(), input.size());
    const CheckResult bare = CheckDatagram(buf.get(), input.size());
    const CheckResult full = CheckFullDatagram(buf.get(), input.size());

    for (const CheckResult* r : {&bare, &full}) {
      ASSERT_TRUE(r->violation.empty())
          << (r == &bare ? "frames: " : "datagram: ") << r->violation
          << "\nseed=" << seed << " iteration=" << i
          << " (replay: BRAID_FUZZ_SEED=" << seed << " BRAID_FUZZ_ITER=" << i
          << ")\ninput (" << input.size() << " bytes):" << Hex(input);
    }
    // The parse that matches how the input was built.
    const CheckResult& r = has_preamble ? full : bare;
    if (valid_frames > 0 && r.error != ParseError::kBadPreamble) {
      ASSERT_EQ(r.error, ParseError::kNone)
          << ParseErrorName(r.error) << " on a valid datagram, seed=" << seed
          << " iteration=" << i << Hex(input);
      ASSERT_EQ(r.frames, valid_frames)
          << "seed=" << seed << " iteration=" << i;
    }
    ++errors_seen[static_cast<size_t>(bare.error)];
    ++errors_seen[static_cast<size_t>(full.error)];
    frames_accepted += r.frames;
  }

  // A generator that never reaches a rejection path would make this test
  // hollow: with the full run, every reason must have been produced.
  if (only == ~uint64_t{0} && iterations >= kDefaultIterations / 2) {
    for (size_t e = 0; e < static_cast<size_t>(ParseError::kCount); ++e) {
      EXPECT_GT(errors_seen[e], 0u)
          << "never produced " << ParseErrorName(static_cast<ParseError>(e))
          << ", seed=" << seed;
    }
    EXPECT_GT(frames_accepted, iterations / 2);
  }
  std::string summary = absl::StrCat("seed=", seed, " iterations=", end - first,
                                     " frames=", frames_accepted);
  for (size_t e = 0; e < static_cast<size_t>(ParseError::kCount); ++e) {
    absl::StrAppend(&summary, " ", ParseErrorName(static_cast<ParseError>(e)),
                    "=", errors_seen[e]);
  }
  RecordProperty("summary", summary);
  std::printf("%s\n", summary.c_str());
}

}  // namespace
}  // namespace braid::wire::fuzz
