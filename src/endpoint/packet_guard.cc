#include "endpoint/packet_guard.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "crypto/kdf.h"
#include "crypto/protector.h"
#include "wire/frames.h"

namespace braid::endpoint {

absl::StatusOr<std::unique_ptr<PacketGuard>> PacketGuard::Create(
    SecurityMode mode, absl::string_view domain_key) {
  if (mode == SecurityMode::kNone) {
    return absl::InvalidArgumentError("packet protection mode is none");
  }
  if (domain_key.size() < 16 || domain_key.size() > 64) {
    return absl::InvalidArgumentError(absl::StrCat(
        "security domain key of ", domain_key.size(),
        " bytes: it must be 16 to 64 bytes (32 random bytes recommended)"));
  }
  absl::StatusOr<crypto::InitialKeys> initial =
      crypto::MakeInitialKeys(crypto::AsBytes(domain_key));
  if (!initial.ok()) return initial.status();
  return std::unique_ptr<PacketGuard>(
      new PacketGuard(mode, std::string(domain_key), *std::move(initial)));
}

PacketGuard::PacketGuard(SecurityMode mode, std::string domain_key,
                         crypto::InitialKeys initial)
    : mode_(mode),
      domain_key_(std::move(domain_key)),
      initial_(std::move(initial)) {}

bool PacketGuard::TakeToken(TimeNs now) {
  if (now > tokens_at_) {
    const double s = static_cast<double>((now - tokens_at_).ns()) * 1e-9;
    tokens_ = std::min<double>(kDeriveBurst, tokens_ + s * kDerivePerSecond);
  }
  tokens_at_ = std::max(tokens_at_, now);
  if (tokens_ < 1) {
    ++refused_;
    return false;
  }
  tokens_ -= 1;
  return true;
}

bool PacketGuard::Derive(uint64_t src, uint64_t dst, crypto::PacketKey::Use use,
                         crypto::PacketKey* key) {
  absl::StatusOr<crypto::KeyBytes> k =
      crypto::DerivePairKey(crypto::AsBytes(domain_key_), src, dst);
  if (!k.ok()) return false;
  absl::StatusOr<crypto::PacketKey> p =
      crypto::PacketKey::Create(crypto::PacketKey::Kind::kPair, use, *k);
  if (!p.ok()) return false;
  *key = *std::move(p);
  return true;
}

size_t PacketGuard::Seal(TimeNs now, uint8_t* data, size_t len, uint64_t src,
                         uint64_t dst, PeerKeyCache* keys) {
  crypto::SecurityHeader h;
  h.src_incarnation = src;
  h.dst_incarnation = dst;
  crypto::PacketKey* key = nullptr;
  if (dst == 0) {
    if (next_initial_pn_ >= crypto::kInitialPacketNumberLimit) return 0;
    h.packet_number = next_initial_pn_++;
    key = &initial_.seal;
  } else {
    h.packet_number = next_pn_++;
    if (keys != nullptr && keys->tx_src == src && keys->tx_dst == dst &&
        !keys->tx.empty()) {
      key = &keys->tx;
    } else if (keys != nullptr) {
      // Our state changed (we learnt or adopted the peer's incarnation):
      // derived once, from authenticated input.
      if (!Derive(src, dst, crypto::PacketKey::Use::kSeal, &keys->tx)) return 0;
      keys->tx_src = src;
      keys->tx_dst = dst;
      key = &keys->tx;
    } else {
      if (!TakeToken(now) ||
          !Derive(src, dst, crypto::PacketKey::Use::kSeal, &scratch_key_)) {
        return 0;
      }
      key = &scratch_key_;
    }
  }
  const absl::Span<uint8_t> d = absl::MakeSpan(data, len + kTagBytes);
  if (crypto::WriteSecurityHeader(h, d) == 0) return 0;
  return crypto::Seal(mode_, *key, d, len);
}

PacketGuard::OpenResult PacketGuard::Open(TimeNs now,
                                          absl::Span<const uint8_t> datagram,
                                          uint64_t our_inc, uint64_t peer_inc,
                                          PeerKeyCache* keys,
                                          crypto::SecurityHeader* h,
                                          absl::Span<const uint8_t>* frames) {
  if (!crypto::ParseSecurityHeader(datagram, h)) return OpenResult::kFailed;
  crypto::PacketKey* key = &initial_.open;
  // A key derived here for a peer's cache waits for the tag to check out
  // before it replaces the cached one.
  bool cache = false;
  if (!h->initial_key()) {
    const bool ours = our_inc != 0 && h->dst_incarnation == our_inc;
    const bool cached = keys != nullptr && ours &&
                        keys->rx_src == h->src_incarnation &&
                        keys->rx_dst == our_inc && !keys->rx.empty();
    if (cached) {
      key = &keys->rx;
    } else {
      // Free only for the peer's first incarnation or the one we know it
      // by, towards the incarnation we present to it: sealing with that
      // key took a secret (ours) no off-path host has.
      const bool known = keys != nullptr && ours &&
                         (peer_inc == 0 || peer_inc == h->src_incarnation);
      if (!known && !TakeToken(now)) return OpenResult::kNoKey;
      if (!Derive(h->src_incarnation, h->dst_incarnation,
                  crypto::PacketKey::Use::kOpen, &scratch_key_)) {
        return OpenResult::kFailed;
      }
      key = &scratch_key_;
      cache = known;
    }
  }
  scratch_.assign(datagram.begin(), datagram.end());
  size_t frames_len = 0;
  if (!crypto::Open(mode_, *key, absl::MakeSpan(scratch_), &frames_len)) {
    return OpenResult::kFailed;
  }
  if (cache) {
    std::swap(keys->rx, scratch_key_);
    keys->rx_src = h->src_incarnation;
    keys->rx_dst = h->dst_incarnation;
  }
  *frames = absl::MakeConstSpan(scratch_).subspan(
      crypto::kProtectedFramesOffset, frames_len);
  return OpenResult::kOk;
}

}  // namespace braid::endpoint
