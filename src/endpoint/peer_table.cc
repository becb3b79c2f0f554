#include "endpoint/peer_table.h"

namespace braid::endpoint {

namespace {

// Peers examined per eviction before settling for the best found: the cost
// of a full table does not grow with it (a flood of new addresses asks for
// one eviction per datagram).
constexpr size_t kEvictionSample = 64;

}  // namespace

PeerTable::Rank PeerTable::RankOf(const Peer& p, TimeNs now,
                                  DurationNs min_idle) const {
  const bool aged = now - p.last_activity() >= min_idle;
  if (!p.proven() && p.SenderIdle() && p.HoldsPartials()) {
    return kUnprovenHolder;
  }
  if (aged && p.Idle()) return p.proven() ? kIdleProven : kIdleUnproven;
  if (!p.proven() && p.SenderIdle()) return kUnproven;
  return kNone;
}

size_t PeerTable::PickVictim(TimeNs now, DurationNs min_idle, Rank worst) {
  const size_t n = peers_.size();
  size_t best = n;
  Rank best_rank = kNone;
  if (cursor_ >= n) cursor_ = 0;
  size_t i = cursor_;
  for (size_t seen = 0; seen < n; ++seen, i = i + 1 == n ? 0 : i + 1) {
    // A sample found something of the two best kinds: take the best of it.
    if (seen >= kEvictionSample && best_rank <= kIdleUnproven) break;
    const Peer& p = peers_[i]->peer;
    const Rank r = RankOf(p, now, min_idle);
    if (r > worst || r > best_rank) continue;
    if (r < best_rank ||
        p.last_activity() < peers_[best]->peer.last_activity()) {
      best = i;
      best_rank = r;
    }
  }
  cursor_ = i;
  return best;
}

void PeerTable::Evict(size_t i, TimeNs now, DurationNs min_idle,
                      absl::FunctionRef<void(PeerEntry*)> on_evict) {
  const Peer& p = peers_[i]->peer;
  if (!(p.Idle() && now - p.last_activity() >= min_idle)) {
    // Silence it: a new context would ask its sender for a new session,
    // which resends what this one may have delivered already.
    const NetAddr addr = p.addr();
    if (silenced_ring_.size() < silenced_cap_) {
      silenced_ring_.emplace_back(addr, silence_seq_);
    } else {
      auto& slot = silenced_ring_[silence_seq_ % silenced_cap_];
      auto old = silenced_.find(slot.first);
      if (old != silenced_.end() && old->second.seq == slot.second) {
        silenced_.erase(old);
      }
      slot = {addr, silence_seq_};
    }
    silenced_[addr] = {p.peer_incarnation(), now + min_idle + min_idle,
                       silence_seq_};
    ++silence_seq_;
  }
  PeerStats s;
  p.FillStats(&s, false);
  AccumulatePeerCounters(s, &retired_);
  map_.erase(p.addr());
  on_evict(peers_[i].get());
  peers_[i] = std::move(peers_.back());
  peers_.pop_back();
}

bool PeerTable::Sleep(PeerEntry* p) {
  if (!p->peer.awake()) return true;
  if (!p->peer.Sleep()) return false;
  p->keys.reset();
  ++slept_;
  return true;
}

bool PeerTable::Silenced(const NetAddr& addr, uint64_t inc, TimeNs now) {
  if (silenced_.empty()) return false;
  auto it = silenced_.find(addr);
  if (it == silenced_.end()) return false;
  if (now >= it->second.until) {
    silenced_.erase(it);
    return false;
  }
  return it->second.inc == inc;
}

PeerEntry* PeerTable::Insert(std::unique_ptr<PeerEntry> peer, TimeNs now,
                             DurationNs min_idle, Claimant claimant,
                             absl::FunctionRef<void(PeerEntry*)> on_evict) {
  if (peers_.size() >= max_peers_) {
    const Rank worst = claimant == Claimant::kSend ? kUnproven : kIdleProven;
    const size_t victim = PickVictim(now, min_idle, worst);
    if (victim == peers_.size()) return nullptr;
    const Rank r = RankOf(peers_[victim]->peer, now, min_idle);
    ++(r == kIdleUnproven || r == kIdleProven ? evicted_idle_
                                              : evicted_unproven_);
    Evict(victim, now, min_idle, on_evict);
  }
  PeerEntry* p = peer.get();
  map_[p->peer.addr()] = p;
  peers_.push_back(std::move(peer));
  ++created_;
  return p;
}

bool PeerTable::EvictForMemory(TimeNs now, DurationNs min_idle,
                               absl::FunctionRef<void(PeerEntry*)> on_evict) {
  if (peers_.empty()) return false;
  const size_t victim = PickVictim(now, min_idle, kUnprovenHolder);
  if (victim == peers_.size()) return false;
  ++evicted_memory_;
  Evict(victim, now, min_idle, on_evict);
  return true;
}

}  // namespace braid::endpoint
