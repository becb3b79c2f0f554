// The attacker of CoreFuzzHarness: forged datagrams of every frame type,
// replays and bit-flipped copies of captured datagrams, garbage.
#include <cstring>
#include <vector>

#include "absl/types/span.h"
#include "tests/fuzz/core_fuzz_harness.h"
#include "wire/frames.h"

namespace braid::endpoint::fuzz {
namespace {

constexpr size_t kMaxForged = 1600;

// Appends a frame written by `write(span) -> bytes` to `*b`.
template <typename Write>
void Append(std::vector<uint8_t>* b, Write&& write) {
  const size_t at = b->size();
  b->resize(at + kMaxForged);
  const size_t n = write(absl::MakeSpan(*b).subspan(at));
  b->resize(at + n);
}

std::vector<uint8_t> Preamble(uint16_t port) {
  std::vector<uint8_t> b(wire::kPreambleSize);
  wire::WritePreamble(port, absl::MakeSpan(b));
  return b;
}

}  // namespace

uint32_t CoreFuzzHarness::PickU32() {
  // Edges and small values as often as uniform guesses.
  switch (Pick(4)) {
    case 0:
      return static_cast<uint32_t>(Pick(64));
    case 1:
      return ~static_cast<uint32_t>(Pick(64));
    default:
      return static_cast<uint32_t>(Pick(uint64_t{1} << 32));
  }
}

uint64_t CoreFuzzHarness::GuessIncarnation(int side) {
  // Known to the attacker (see Attack); with kWrongIncarnation sometimes a
  // wrong one or 0.
  if (!(opt_.attacks & kWrongIncarnation)) return inc_[side];
  switch (Pick(8)) {
    case 0:
      return 0;
    case 1:
      return inc_[side] + 1 + Pick(4);
    default:
      return inc_[side];
  }
}

NetAddr CoreFuzzHarness::StrangerAddr() {
  return NetAddr::Ipv4(0x0a090000 + static_cast<uint32_t>(Pick(1u << 16)),
                       static_cast<uint16_t>(1024 + Pick(60000)));
}

void CoreFuzzHarness::Forge() {
  // One of the enabled attacks, uniformly (the wire's drops are not one).
  uint32_t enabled[kAttackCount];
  size_t n = 0;
  const uint32_t actions = opt_.attacks & ~(kDropDup | kWrongIncarnation);
  for (uint32_t i = 0; i < kAttackCount; ++i) {
    if (actions & (1u << i)) enabled[n++] = 1u << i;
  }
  if (n == 0) return;
  const uint32_t attack = enabled[Pick(n)];
  switch (attack) {
    case kForgedData:
    case kForgedSyncData:
    case kStrangers:
      ForgeData(attack);
      return;
    case kForgedAck:
      ForgeAck();
      return;
    case kReplay:
    case kHeaderFlip:
    case kPayloadFlip:
    case kGarbage:
      ForgeFromCapture(attack);
      return;
    default:
      ForgeCtrl(attack);
      return;
  }
}

void CoreFuzzHarness::ForgeCtrl(uint32_t attack) {
  const int to = static_cast<int>(Pick(2));
  const int as = 1 - to;  // the genuine peer it poses as
  wire::CtrlFrame c;
  c.src_incarnation = GuessIncarnation(as);
  c.dst_incarnation = GuessIncarnation(to);
  c.session = PickU32();
  c.value = PickU32();
  switch (attack) {
    case kForgedProbe:
      c.type = wire::CtrlType::kProbe;
      break;
    case kForgedStale:
      c.type = wire::CtrlType::kStale;
      break;
    case kForgedNeedSync:
      c.type = wire::CtrlType::kNeedSync;
      break;
    case kForgedSync:
      c.type = wire::CtrlType::kSync;
      break;
    default:  // kNewIncarnation: a restart claim
      c.type = Pick(2) ? wire::CtrlType::kSync : wire::CtrlType::kStale;
      c.src_incarnation = inc_[as] + 0x100 + Pick(1u << 20);
      break;
  }
  Datagram d{to, addr_[as], Preamble(addr_[as].port)};
  Append(&d.bytes, [&](absl::Span<uint8_t> out) { return WriteCtrl(c, out); });
  Inject(d, AttackName(attack));
}

void CoreFuzzHarness::ForgeData(uint32_t attack) {
  const int to = static_cast<int>(Pick(2));
  const int as = 1 - to;
  const bool stranger = attack == kStrangers;
  Datagram d{to, stranger ? StrangerAddr() : addr_[as], {}};
  d.bytes = Preamble(d.from.port);
  wire::DataHeader h;
  h.flags = static_cast<uint8_t>(Pick(4));  // ack-now, retransmit
  h.path_id = static_cast<wire::PathId>(Pick(16));
  h.stream_id = static_cast<uint16_t>(Pick(3) == 0 ? Pick(3) : 0);
  h.src_incarnation = stranger ? 1 + Pick(1u << 30) : GuessIncarnation(as);
  h.dst_incarnation = Pick(4) == 0 ? 0 : GuessIncarnation(to);
  h.psn = wire::Psn(PickU32());
  h.path_seq = wire::PathSeq(PickU32());
  h.msg_seq = wire::MsgSeq(PickU32());
  h.stream_seq = PickU32();
  // A payload that looks like a message of the genuine peer, with an id
  // it never uses (a delivered forgery is reported as such).
  std::vector<uint8_t> payload(1 + Pick(1200));
  for (auto& x : payload) x = static_cast<uint8_t>(Pick(256));
  if (payload.size() >= 12) {
    const uint8_t head[] = {
        0xb4, 0xa1, 0xdf, 0x22, static_cast<uint8_t>(as),     0, 0,
        0,    0xf0, 0x0f, 0,    static_cast<uint8_t>(Pick(4))};
    std::memcpy(payload.data(), head, sizeof(head));
  }
  h.payload_len = static_cast<uint16_t>(payload.size());
  // Whole, or a fragment anywhere in a message of up to 1 MiB.
  h.msg_len = Pick(2) ? h.payload_len
                      : h.payload_len + static_cast<uint32_t>(Pick(1u << 20));
  h.frag_offset = static_cast<uint32_t>(Pick(h.msg_len - h.payload_len + 1));
  if (attack == kForgedSyncData || stranger) {
    // The attacker's own session (a stranger's is legitimate): SYNC names
    // its start PSN, the data follows at that PSN. A stranger's message is
    // large and this is a fragment far into it (reassembly memory).
    wire::CtrlFrame c;
    c.type = wire::CtrlType::kSync;
    c.src_incarnation = stranger ? h.src_incarnation : inc_[as];
    c.dst_incarnation = inc_[to];
    c.session = PickU32();
    c.value = h.psn.value();
    h.src_incarnation = c.src_incarnation;
    h.dst_incarnation = inc_[to];
    if (stranger) {
      h.msg_len = (1u << 20) - static_cast<uint32_t>(Pick(4096));
      h.frag_offset = h.msg_len - h.payload_len;
    }
    Append(&d.bytes,
           [&](absl::Span<uint8_t> out) { return WriteCtrl(c, out); });
  }
  Append(&d.bytes,
         [&](absl::Span<uint8_t> out) { return WriteData(h, payload, out); });
  Inject(d, AttackName(attack));
}

void CoreFuzzHarness::ForgeAck() {
  const int to = static_cast<int>(Pick(2));
  const int as = 1 - to;
  wire::AckHeader h;
  h.flags = static_cast<uint8_t>(Pick(8));
  h.echo_path_id = static_cast<wire::PathId>(Pick(16));
  h.src_incarnation = GuessIncarnation(as);
  h.dst_incarnation = GuessIncarnation(to);
  h.cum_psn = wire::Psn(PickU32());
  h.echo_path_seq = wire::PathSeq(PickU32());
  h.ack_delay_ns = PickU32();
  h.credit_psn = wire::Psn(PickU32());
  h.ce_count = PickU32();
  h.session = PickU32();
  std::vector<uint64_t> sack(Pick(5));
  for (auto& w : sack) w = Pick(2) ? ~uint64_t{0} : Pick(~uint64_t{0});
  h.sack_words = static_cast<uint16_t>(sack.size());
  Datagram d{to, addr_[as], Preamble(addr_[as].port)};
  Append(&d.bytes,
         [&](absl::Span<uint8_t> out) { return WriteAck(h, sack, out); });
  Inject(d, "forged_ack");
}

void CoreFuzzHarness::ForgeFromCapture(uint32_t attack) {
  if (attack == kGarbage || capture_.empty()) {
    // From a stranger: random bytes can parse as a frame naming a random
    // incarnation, which from a genuine peer's address is
    // kWrongIncarnation's attack.
    const int to = static_cast<int>(Pick(2));
    const bool as_peer = (opt_.attacks & kWrongIncarnation) && Pick(2);
    Datagram d{to, as_peer ? addr_[1 - to] : StrangerAddr(), {}};
    if (Pick(2)) d.bytes = Preamble(d.from.port);
    const size_t n = Pick(200);
    for (size_t i = 0; i < n; ++i) {
      d.bytes.push_back(static_cast<uint8_t>(Pick(256)));
    }
    Inject(d, "garbage");
    return;
  }
  // Oldest first: capture_at_ is the oldest once the ring is full (0 until).
  const Datagram& seen =
      capture_[(capture_at_ + Pick(capture_.size())) % capture_.size()];
  Datagram d{seen.to, seen.from,
             TakeBytes(seen.bytes.data(), seen.bytes.size())};
  if (attack != kReplay && !d.bytes.empty()) {
    // Header bits: the preamble and the first frame's header.
    const size_t span = attack == kHeaderFlip
                            ? std::min(d.bytes.size(), wire::kPreambleSize + 48)
                            : d.bytes.size();
    const size_t flips = 1 + Pick(3);
    for (size_t i = 0; i < flips; ++i) {
      d.bytes[Pick(span)] ^= static_cast<uint8_t>(1u << Pick(8));
    }
  }
  Inject(d, AttackName(attack));
  Recycle(std::move(d.bytes));
}

}  // namespace braid::endpoint::fuzz
