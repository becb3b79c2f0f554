// The driver and the checks of CoreFuzzHarness (the attacker's frames are
// in core_fuzz_forge.cc).
#include "tests/fuzz/core_fuzz_harness.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "wire/frames.h"

#if defined(__SANITIZE_ADDRESS__)
#define BRAID_FUZZ_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BRAID_FUZZ_ASAN 1
#endif
#endif
#ifdef BRAID_FUZZ_ASAN
// The sanitizer runtime's (GCC's and clang's; GCC ships no header for it).
extern "C" size_t __sanitizer_get_current_allocated_bytes();
#else
#include <malloc.h>
#endif

namespace braid::endpoint::fuzz {
namespace {

// The incarnations a frame is from and to.
void FrameIncarnations(const wire::Frame& f, uint64_t* src, uint64_t* dst) {
  switch (f.type) {
    case wire::FrameType::kData:
      *src = f.data.src_incarnation;
      *dst = f.data.dst_incarnation;
      return;
    case wire::FrameType::kAck:
      *src = f.ack.src_incarnation;
      *dst = f.ack.dst_incarnation;
      return;
    case wire::FrameType::kCtrl:
      *src = f.ctrl.src_incarnation;
      *dst = f.ctrl.dst_incarnation;
      return;
  }
}

// Whether a genuine datagram tells its receiver who the sender is: a frame
// other than a CHALLENGE that names no incarnation of the receiver (dst =
// 0) or the one the receiver shows the sender (`shown`, 0 if not known
// yet). A challenge, or a frame naming another incarnation (its sender was
// fooled by a forger's first contact at the receiver's address), says
// nothing the receiver could tell from a forger's: it drops it by the dst
// rule and keeps no state for it. A sealed datagram (auth, encrypt) is not
// read: it counts.
bool ClaimsALife(const std::vector<uint8_t>& bytes, uint64_t shown) {
  wire::ParseError error;
  if (bytes.size() < wire::kPreambleSize ||
      wire::ParsePreamble(bytes, &error) == 0) {
    return true;
  }
  wire::FrameReader r(absl::MakeConstSpan(bytes).subspan(wire::kPreambleSize));
  wire::Frame f;
  bool any = false;
  while (r.Next(&f)) {
    any = true;
    if (f.type == wire::FrameType::kCtrl &&
        f.ctrl.type == wire::CtrlType::kChallenge) {
      continue;
    }
    uint64_t src = 0, dst = 0;
    FrameIncarnations(f, &src, &dst);
    if (dst == 0 || (shown != 0 && dst == shown)) return true;
  }
  return !any;
}

// The incarnation a datagram's first frame is from (0 if unreadable).
uint64_t SourceIncarnation(const uint8_t* data, size_t len) {
  if (len <= wire::kPreambleSize) return 0;
  wire::FrameReader r(absl::MakeConstSpan(data + wire::kPreambleSize,
                                          len - wire::kPreambleSize));
  wire::Frame f;
  if (!r.Next(&f)) return 0;
  uint64_t src = 0, dst = 0;
  FrameIncarnations(f, &src, &dst);
  return src;
}

constexpr uint32_t kMagic = 0xb4a1df22;
constexpr size_t kMsgHeader = 12;  // magic, side, 3 zero bytes, id
constexpr size_t kTraceLines = 40;
constexpr uint32_t kMaxInFlight = 8;  // per side
constexpr uint32_t kMaxPeers = 16;    // ProtocolOptions::max_peers
// Paths per peer (ProtocolOptions::paths, 16 by default): every per-path
// rule works the same with 4, and a peer carries a quarter of the per-path
// state (with 16 a run took a sixth longer). Forged frames still name path
// ids up to 15, beyond the paths.
constexpr uint16_t kPaths = 4;
constexpr size_t kCaptureSize = 32;  // recent datagrams kept for replays
// The TxBatch the cores build datagrams in (as the UDP backend's).
constexpr size_t kBatchPackets = 64;
constexpr size_t kBatchSlot = 2048;
// The drain's bounds: simulated time and loop turns.
constexpr DurationNs kDrainTime = DurationNs::Seconds(30);
constexpr int kDrainTurns = 200000;

// The bytes of message `id` from `side` are 8-byte words that follow from
// (side, id, word index). Filled and compared a word at a time, outside the
// coverage instrumentation (the harness's loops are no edges worth finding).
#if defined(__clang__) && __clang_major__ >= 13
#define BRAID_FUZZ_NO_COVERAGE __attribute__((no_sanitize("coverage")))
#else
#define BRAID_FUZZ_NO_COVERAGE
#endif

BRAID_FUZZ_NO_COVERAGE uint64_t PatternWord(int side, uint32_t id, size_t w) {
  uint64_t x = (uint64_t{id} << 32) ^ (uint64_t(side) << 60) ^ w;
  x *= 0x9e3779b97f4a7c15ULL;
  return x ^ (x >> 29);
}

// Writes the pattern's bytes [0, n) to p.
BRAID_FUZZ_NO_COVERAGE void FillPattern(int side, uint32_t id, uint8_t* p,
                                        size_t n) {
  size_t at = 0;
  for (; at + 8 <= n; at += 8) {
    const uint64_t v = PatternWord(side, id, at / 8);
    std::memcpy(p + at, &v, 8);
  }
  const uint64_t v = PatternWord(side, id, at / 8);
  std::memcpy(p + at, &v, n - at);
}

// Whether p[from, n) are the pattern's bytes [from, n).
BRAID_FUZZ_NO_COVERAGE bool MatchesPattern(int side, uint32_t id,
                                           const uint8_t* p, size_t from,
                                           size_t n) {
  for (size_t w = from / 8; w * 8 < n; ++w) {
    const uint64_t v = PatternWord(side, id, w);
    uint8_t bytes[8];
    std::memcpy(bytes, &v, 8);
    const size_t lo = std::max(from, w * 8), hi = std::min(n, w * 8 + 8);
    for (size_t i = lo; i < hi; ++i) {
      if (p[i] != bytes[i - w * 8]) return false;
    }
  }
  return true;
}

// One TxBatch per thread, shared by the runs on it (building a fresh one
// per run, 128 KiB, was a tenth of a libFuzzer execution). Pump leaves it
// empty and zero (ZeroUsed), so no run sees another's bytes.
TxBatch* SharedBatch() {
  thread_local TxBatch batch(kBatchPackets, kBatchSlot);
  return &batch;
}

// Zeroes what the last PollTx may have written into `batch`: the slots it
// committed and the next one (a builder writes a slot, then commits it),
// and empties it.
void ZeroUsed(TxBatch* batch) {
  const size_t slots = std::min(batch->size() + 1, batch->capacity());
  batch->clear();
  // Slots are laid out back to back from the first (TxBatch::slot_size).
  std::memset(batch->next_slot().data(), 0, slots * batch->slot_size());
}

void PutU32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (24 - 8 * i));
}
uint32_t GetU32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) |
         (uint32_t{p[2]} << 8) | p[3];
}

uint64_t HeapBytes() {
#ifdef BRAID_FUZZ_ASAN
  return __sanitizer_get_current_allocated_bytes();
#else
  return mallinfo2().uordblks;
#endif
}

CoreConfig Config(uint64_t inc, uint64_t seed, SecurityMode security) {
  CoreConfig c;
  if (security != SecurityMode::kNone) {
    c.guard = std::move(
        PacketGuard::Create(security, "core fuzz harness domain key..")
            .value());
  }
  c.incarnation = inc;
  c.seed = seed;
  c.local_port = 7000;
  // Small limits: a flood reaches them in a short run.
  c.proto.max_peers = kMaxPeers;
  c.proto.paths = kPaths;
  c.proto.max_message_bytes = 1u << 20;
  c.proto.receive_budget_bytes = 1u << 20;
  c.proto.receive_queue_bytes = 4u << 20;
  return c;
}

}  // namespace

uint64_t ByteChoices::Next(uint64_t bound) {
  if (bound <= 1) return 0;
  uint64_t v = 0;
  for (uint64_t reach = 1; reach < bound && pos_ < size_; reach <<= 8) {
    v = (v << 8) | data_[pos_++];
    if (reach > (~uint64_t{0} >> 8)) break;
  }
  return v % bound;
}

const char* AttackName(uint32_t a) {
  switch (a) {
    case kDropDup:
      return "drop_dup";
    case kReplay:
      return "replay";
    case kGarbage:
      return "garbage";
    case kForgedData:
      return "forged_data";
    case kForgedAck:
      return "forged_ack";
    case kForgedProbe:
      return "forged_probe";
    case kForgedStale:
      return "forged_stale";
    case kForgedNeedSync:
      return "forged_need_sync";
    case kForgedSync:
      return "forged_sync";
    case kForgedSyncData:
      return "forged_sync_data";
    case kNewIncarnation:
      return "new_incarnation";
    case kStrangers:
      return "strangers";
    case kHeaderFlip:
      return "header_flip";
    case kPayloadFlip:
      return "payload_flip";
    case kWrongIncarnation:
      return "wrong_incarnation";
  }
  return "?";
}

CoreFuzzHarness::CoreFuzzHarness(ChoiceSource* choices,
                                 const FuzzOptions& options)
    : choices_(choices), opt_(options) {
  addr_[0] = NetAddr::Ipv4(0x0a000001, 7000);
  addr_[1] = NetAddr::Ipv4(0x0a000002, 7000);
  inc_[0] = 0x1111'0000'0000'0001ULL + Pick(1u << 16);
  inc_[1] = 0x2222'0000'0000'0002ULL + Pick(1u << 16);
  batch_ = SharedBatch();
  completions_.reserve(256);
  capture_.reserve(kCaptureSize);
  heap_start_ = HeapBytes();
  heard_[0] = {addr_[1]};
  heard_[1] = {addr_[0]};
  core_[0] = std::make_unique<EndpointCore>(Config(inc_[0], 1, opt_.security));
  core_[1] = std::make_unique<EndpointCore>(Config(inc_[1], 2, opt_.security));
}

CoreFuzzHarness::~CoreFuzzHarness() = default;

std::vector<std::string> CoreFuzzHarness::Run() {
  for (uint32_t i = 0; i < opt_.steps && !choices_->Exhausted(); ++i) {
    Step();
    CheckBounds();
  }
  Drain();
  CheckEnd();
  return violations_;
}

void CoreFuzzHarness::Step() {
  switch (Pick(8)) {
    case 0:
    case 1:
      SendMessage(static_cast<int>(Pick(2)), false);
      break;
    case 2:
      Pump(0);
      Pump(1);
      break;
    case 3:
      if (!wire_.empty()) DeliverOne(Pick(wire_.size()));
      break;
    case 4:
      DeliverAll();
      break;
    case 5: {
      now_ += DurationNs::Micros(1 + static_cast<int64_t>(Pick(5000)));
      for (auto& c : core_) c->OnTimer(now_);
      break;
    }
    default:
      Forge();
      break;
  }
  PollCompletions(0);
  PollCompletions(1);
}

void CoreFuzzHarness::SendMessage(int side, bool clean) {
  if (!clean && in_flight_[side] >= kMaxInFlight) return;
  // Mostly small (one datagram), sometimes several fragments.
  const uint32_t len = static_cast<uint32_t>(
      kMsgHeader + (Pick(4) == 0 ? Pick(12000) : Pick(600)));
  const uint32_t id = static_cast<uint32_t>(sent_[side].size());
  OutMessage m;
  m.owned.resize(len);
  uint8_t* b = m.owned.data();
  FillPattern(side, id, b, len);
  PutU32(b, kMagic);
  b[4] = static_cast<uint8_t>(side);
  b[5] = b[6] = b[7] = 0;
  PutU32(b + 8, id);
  m.data = b;
  m.len = len;
  m.cookie = id;
  m.stream = static_cast<uint16_t>(Pick(3) == 0 ? 1 + Pick(2) : 0);
  const absl::Status st =
      core_[side]->Send(now_, addr_[1 - side], std::move(m));
  if (!st.ok()) {
    if (clean) Fail(absl::StrCat("clean send refused: ", st.ToString()));
    return;  // a full queue or peer table: nothing was accepted
  }
  Sent s;
  s.len = len;
  s.clean = clean;
  sent_[side].push_back(s);
  ++in_flight_[side];
  ++counts_.sent;
  Note("send ", side, "#", id, " len ", len);
}

void CoreFuzzHarness::Pump(int side) {
  for (;;) {
    const size_t built = core_[side]->PollTx(now_, batch_);
    for (const auto& p : batch_->packets()) {
      ++counts_.datagrams;
      if (shown_[side] == 0) shown_[side] = SourceIncarnation(p.data, p.len);
      if (attacking_ && (opt_.attacks & kDropDup) && Pick(16) == 0) {
        Note("drop ", side, "->", 1 - side);
        continue;
      }
      const int copies =
          attacking_ && (opt_.attacks & kDropDup) && Pick(16) == 0 ? 2 : 1;
      for (int i = 0; i < copies; ++i) {
        wire_.push_back({1 - side, addr_[side], TakeBytes(p.data, p.len)});
      }
      if (capture_.size() < kCaptureSize) {
        capture_.push_back({1 - side, addr_[side], TakeBytes(p.data, p.len)});
      } else {
        // The oldest capture gives way (capture_at_ is the oldest).
        Datagram& old = capture_[capture_at_];
        old.to = 1 - side;
        old.from = addr_[side];
        old.bytes.assign(p.data, p.data + p.len);
        capture_at_ = (capture_at_ + 1) % kCaptureSize;
      }
    }
    ZeroUsed(batch_);
    if (built == 0) return;
  }
}

void CoreFuzzHarness::DeliverOne(size_t i) {
  Datagram d = std::move(wire_[i]);
  wire_.erase(wire_.begin() + static_cast<ptrdiff_t>(i));
  if (ClaimsALife(d.bytes, shown_[d.to])) contact_[d.to] = true;
  Heard(d);
  core_[d.to]->OnDatagram(now_, d.from, d.bytes, false);
  Recycle(std::move(d.bytes));
}

void CoreFuzzHarness::DeliverAll() {
  // In wire order; delivering adds nothing to the wire (only Pump does).
  for (Datagram& d : wire_) {
    if (ClaimsALife(d.bytes, shown_[d.to])) contact_[d.to] = true;
    Heard(d);
    core_[d.to]->OnDatagram(now_, d.from, d.bytes, false);
    Recycle(std::move(d.bytes));
  }
  wire_.clear();
}

std::vector<uint8_t> CoreFuzzHarness::TakeBytes(const uint8_t* data, size_t n) {
  std::vector<uint8_t> b;
  if (!spare_.empty()) {
    b = std::move(spare_.back());
    spare_.pop_back();
  }
  b.assign(data, data + n);
  return b;
}

void CoreFuzzHarness::Recycle(std::vector<uint8_t>&& bytes) {
  spare_.push_back(std::move(bytes));
}

void CoreFuzzHarness::Inject(const Datagram& d, const char* what) {
  ++counts_.forged;
  Heard(d);
  if (opt_.trace) {
    Note("inject ", what, " -> ", d.to, " from ", d.from.ToString(), " (",
         d.bytes.size(), " B)");
  }
  core_[d.to]->OnDatagram(now_, d.from, d.bytes, false);
  // What it delivered is judged now, against what the core had heard when
  // it took the datagram (a first contact is taken on trust; see
  // CheckReceived), not once genuine datagrams have arrived too.
  PollCompletions(d.to);
}

void CoreFuzzHarness::PollCompletions(int side) {
  completions_.clear();
  core_[side]->PollCompletions(&completions_, SIZE_MAX);
  for (const Completion& c : completions_) OnCompletion(side, c);
}

void CoreFuzzHarness::OnCompletion(int side, const Completion& c) {
  if (c.type == CompletionType::kRecv) {
    CheckReceived(side, c);
    return;
  }
  const bool done = c.type == CompletionType::kSendDone;
  if (c.cookie >= sent_[side].size()) {
    Fail(absl::StrCat("send completion for an unknown cookie ", c.cookie));
    return;
  }
  Sent& s = sent_[side][c.cookie];
  Note(done ? "done " : "failed ", side, "#", c.cookie, " ",
       FailureCauseName(c.cause));
  if (s.completed) {
    Fail(absl::StrCat("send ", side, "#", c.cookie, " completed twice"));
    return;
  }
  s.completed = true;
  s.done = done;
  --in_flight_[side];
  ++(done ? counts_.done : counts_.failed);
}

void CoreFuzzHarness::CheckReceived(int side, const Completion& c) {
  const int from = 1 - side;
  ++counts_.delivered;
  const std::vector<uint8_t>& b = c.data;
  if (c.peer != addr_[from]) {
    Fail(absl::StrCat("core ", side, " delivered a message from ",
                      c.peer.ToString(), ", which sent none"));
    return;
  }
  if (b.size() < kMsgHeader || GetU32(b.data()) != kMagic || b[4] != from ||
      GetU32(b.data() + 8) >= sent_[from].size()) {
    if (!contact_[side]) {
      // First contact is taken on trust (docs/security.md, "What does not
      // hold"): until this core has heard from its peer, a spoofed first
      // contact from the peer's address is indistinguishable from the
      // peer's own, even when this core has already sent to it (both may
      // open at once, each with dst = 0). Once it has heard from it, a
      // forged delivery is a violation.
      ++counts_.forged_first_contact;
      Note("core ", side, " delivered a forged first contact (", b.size(),
           " B), taken on trust");
      return;
    }
    Fail(absl::StrCat("core ", side, " delivered a message (", b.size(),
                      " B) its peer never sent (forged)"));
    return;
  }
  const uint32_t id = GetU32(b.data() + 8);
  Sent& s = sent_[from][id];
  Note("recv ", from, "#", id, " at ", side);
  if (s.delivered) {
    Fail(absl::StrCat("message ", from, "#", id, " delivered twice"));
    return;
  }
  s.delivered = true;
  if (b.size() != s.len ||
      !MatchesPattern(from, id, b.data(), kMsgHeader, b.size())) {
    Fail(absl::StrCat("message ", from, "#", id,
                      " delivered with wrong bytes (", b.size(), " of ", s.len,
                      ")"));
  }
}

void CoreFuzzHarness::Drain() {
  attacking_ = false;
  // Messages sent once the attack is over must get through.
  SendMessage(0, true);
  SendMessage(1, true);
  const TimeNs end = now_ + kDrainTime;
  for (int turn = 0; turn < kDrainTurns && now_ < end; ++turn) {
    Pump(0);
    Pump(1);
    const bool moved = !wire_.empty();
    DeliverAll();
    PollCompletions(0);
    PollCompletions(1);
    const bool pending = in_flight_[0] + in_flight_[1] > 0;
    if (!pending && !moved) return;
    if (moved || core_[0]->WantsToSend(now_) || core_[1]->WantsToSend(now_)) {
      now_ += DurationNs::Micros(5);
    } else {
      const TimeNs wake = std::min(core_[0]->NextWake(), core_[1]->NextWake());
      now_ = wake.IsInfinite() ? end : std::max(wake, now_ + DurationNs(1));
    }
    for (auto& c : core_) c->OnTimer(now_);
  }
}

void CoreFuzzHarness::CheckEnd() {
  for (int side = 0; side < 2; ++side) {
    for (size_t id = 0; id < sent_[side].size(); ++id) {
      const Sent& s = sent_[side][id];
      const std::string name = absl::StrCat(side, "#", id);
      if (!s.completed) {
        Fail(absl::StrCat("send ", name, " never completed (hang)"));
      } else if (s.done && !s.delivered) {
        Fail(absl::StrCat("send ", name, " completed done, never delivered"));
      } else if (s.clean && !s.done) {
        Fail(absl::StrCat("send ", name, " after the attack failed"));
      }
    }
  }
}

void CoreFuzzHarness::Heard(const Datagram& d) {
  std::vector<NetAddr>& h = heard_[d.to];
  if (h.size() > kMaxPeers) return;  // enough to check every step
  wire::ParseError error;
  NetAddr peer = d.from;
  peer.port = wire::ParsePreamble(d.bytes, &error);
  if (peer.port == 0) return;  // dropped before any peer is looked up
  if (std::find(h.begin(), h.end(), peer) == h.end()) h.push_back(peer);
}

void CoreFuzzHarness::CheckBounds() {
  for (int side = 0; side < 2; ++side) {
    if (heard_[side].size() <= kMaxPeers) continue;  // cannot exceed it
    const uint64_t peers = core_[side]->stats().peers;
    if (peers > kMaxPeers) {
      Fail(absl::StrCat("core ", side, " holds ", peers, " peers (max ",
                        kMaxPeers, ")"));
    }
  }
  const uint64_t now_bytes = HeapBytes();
  if (now_bytes > heap_start_ + opt_.heap_bound) {
    Fail(absl::StrCat("heap grew by ", (now_bytes - heap_start_) >> 10,
                      " KiB (bound ", opt_.heap_bound >> 10, " KiB)"));
    heap_start_ = now_bytes;  // report once per bound crossed
  }
}

void CoreFuzzHarness::Fail(std::string what) {
  Note("VIOLATION: ", what);
  violations_.push_back(std::move(what));
}

void CoreFuzzHarness::NoteLine(std::string event) {
  trace_.push_back(
      absl::StrCat("t=", (now_ - TimeNs(1000000)).ns() / 1000, "us ", event));
  if (trace_.size() > kTraceLines) trace_.pop_front();
}

std::string CoreFuzzHarness::Trace() const {
  std::string out;
  for (const std::string& l : trace_) absl::StrAppend(&out, "  ", l, "\n");
  return out;
}

}  // namespace braid::endpoint::fuzz
