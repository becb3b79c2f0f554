#include "tools/braid_forge/forger.h"

#include <algorithm>
#include <cstring>

#include "wire/frames.h"

namespace braid::forge {
namespace {

// What a forged payload says, so that one delivered would be recognised.
constexpr char kFill[] = "FORGED-BY-BRAID-FORGE.";

void Fill(uint8_t* p, size_t n) {
  constexpr size_t kLen = sizeof(kFill) - 1;
  for (size_t i = 0; i < n; i += kLen) {
    std::memcpy(p + i, kFill, std::min(kLen, n - i));
  }
}

uint16_t RandomPort(Rng& rng) {
  return static_cast<uint16_t>(1024 + rng.Uniform(65536 - 1024));
}

uint32_t Low32(uint64_t v) { return static_cast<uint32_t>(v); }

}  // namespace

const char* AttackName(Attack a) {
  switch (a) {
    case Attack::kSync:
      return "sync";
    case Attack::kStale:
      return "stale";
    case Attack::kNeedSync:
      return "needsync";
    case Attack::kAck:
      return "ack";
    case Attack::kData:
      return "data";
    case Attack::kChallengeReply:
      return "challenge-reply";
    case Attack::kFlood:
      return "flood";
  }
  return "?";
}

const char* ExpectedDrops(Attack a, bool leaked_incarnation) {
  switch (a) {
    case Attack::kSync:
      return "drop_unproven_claim,drop_stale_incarnation";
    case Attack::kStale:
      return leaked_incarnation ? "drop_unproven_claim"
                                : "drop_stale_incarnation";
    case Attack::kChallengeReply:
      return leaked_incarnation ? "drop_bad_challenge_reply"
                                : "drop_stale_incarnation";
    case Attack::kNeedSync:
    case Attack::kAck:
    case Attack::kData:
      return "drop_stale_incarnation";
    case Attack::kFlood:
      return "(none: each source is a first contact)";
  }
  return "";
}

Forger::Forger(Attack attack, const ForgeTarget& target, uint64_t seed)
    : attack_(attack), t_(target), rng_(seed) {
  flood_step_ = Low32(rng_.Next()) | 1;  // odd: a permutation of the prefix
  flood_start_ = Low32(rng_.Next());
}

size_t Forger::MaxPayload() const {
  return wire::kPreambleSize + wire::kCtrlFrameSize + wire::kDataHeaderSize +
         t_.frag_len + wire::AckFrameSize(0);
}

uint64_t Forger::FloodSources() const {
  return uint64_t{1} << (32 - std::min<uint8_t>(t_.prefix_len, 32));
}

size_t Forger::WriteSyncAndData(uint64_t inc, uint16_t reply_port,
                                absl::Span<uint8_t> out) {
  size_t pos = wire::WritePreamble(reply_port, out);
  wire::CtrlFrame sync;
  sync.type = wire::CtrlType::kSync;
  sync.src_incarnation = inc;
  sync.dst_incarnation = 0;
  sync.session = Low32(rng_.Next()) | 1;
  sync.value = Low32(rng_.Next());
  pos += wire::WriteCtrl(sync, out.subspan(pos));
  wire::DataHeader d;
  d.src_incarnation = inc;
  d.dst_incarnation = 0;
  d.psn = wire::Psn(sync.value);
  d.msg_len = t_.msg_len;
  d.frag_offset = t_.frag_offset;
  const size_t hdr = wire::WriteDataHeader(d, t_.frag_len, out.subspan(pos));
  if (hdr == 0 || out.size() < pos + hdr + t_.frag_len) return 0;
  Fill(out.data() + pos + hdr, t_.frag_len);
  return pos + hdr + t_.frag_len;
}

size_t Forger::Next(absl::Span<uint8_t> out, Ipv4UdpAddrs* addrs) {
  if (out.size() < MaxPayload()) return 0;
  ++n_;
  addrs->dst_ip = t_.victim_ip;
  addrs->dst_port = t_.victim_port;
  addrs->src_ip = t_.spoof_ip;
  addrs->src_port = RandomPort(rng_);  // an entropy port: any will do
  const uint64_t claimed = rng_.Next() | 1;
  if (attack_ == Attack::kFlood) {
    const uint32_t mask = static_cast<uint32_t>(FloodSources() - 1);
    do {
      flood_start_ += flood_step_;
      addrs->src_ip = (t_.prefix_ip & ~mask) | (flood_start_ & mask);
    } while (addrs->src_ip == t_.victim_ip && mask != 0);
    return WriteSyncAndData(claimed, RandomPort(rng_), out);
  }
  if (attack_ == Attack::kSync) {
    return WriteSyncAndData(claimed, t_.spoof_port, out);
  }
  size_t pos = wire::WritePreamble(t_.spoof_port, out);
  wire::CtrlFrame c;
  c.src_incarnation = claimed;
  c.dst_incarnation = GuessVictim();
  switch (attack_) {
    case Attack::kStale:
      c.type = wire::CtrlType::kStale;
      return pos + wire::WriteCtrl(c, out.subspan(pos));
    case Attack::kNeedSync:
      c.type = wire::CtrlType::kNeedSync;
      return pos + wire::WriteCtrl(c, out.subspan(pos));
    case Attack::kChallengeReply:
      c.type = wire::CtrlType::kChallengeReply;
      c.kind = wire::ChallengeKind::kIncarnation;
      c.nonce = rng_.Next();
      return pos + wire::WriteCtrl(c, out.subspan(pos));
    case Attack::kAck: {
      wire::AckHeader a;
      a.src_incarnation = claimed;
      a.dst_incarnation = c.dst_incarnation;
      a.cum_psn = wire::Psn(Low32(rng_.Next()));
      a.credit_psn = a.cum_psn + 65536;
      a.session = Low32(rng_.Next());
      return pos + wire::WriteAck(a, {}, out.subspan(pos));
    }
    case Attack::kData: {
      wire::DataHeader d;
      d.src_incarnation = claimed;
      // Half name no incarnation (as first contact would), half a guess.
      d.dst_incarnation = (n_ & 1) ? c.dst_incarnation : 0;
      d.psn = wire::Psn(Low32(rng_.Next()));
      d.msg_len = t_.msg_len;
      d.frag_offset = t_.frag_offset;
      const size_t hdr =
          wire::WriteDataHeader(d, t_.frag_len, out.subspan(pos));
      if (hdr == 0) return 0;
      Fill(out.data() + pos + hdr, t_.frag_len);
      return pos + hdr + t_.frag_len;
    }
    case Attack::kSync:
    case Attack::kFlood:
      break;
  }
  return 0;
}

}  // namespace braid::forge
