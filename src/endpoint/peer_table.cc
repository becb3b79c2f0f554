#include "endpoint/peer_table.h"

namespace braid::endpoint {

void AccumulatePeerCounters(const PeerStats& s, PeerStats* acc) {
  acc->packets_sent += s.packets_sent;
  acc->bytes_sent += s.bytes_sent;
  acc->packets_received += s.packets_received;
  acc->bytes_received += s.bytes_received;
  acc->messages_sent += s.messages_sent;
  acc->messages_failed += s.messages_failed;
  acc->messages_received += s.messages_received;
  acc->messages_placed += s.messages_placed;
  acc->messages_refused += s.messages_refused;
  acc->ordered_refused += s.ordered_refused;
  acc->bytes_placed += s.bytes_placed;
  acc->bytes_reassembled += s.bytes_reassembled;
  acc->acks_sent += s.acks_sent;
  acc->acks_received += s.acks_received;
  acc->ecn_marks_received += s.ecn_marks_received;
  acc->ecn_echoes += s.ecn_echoes;
  acc->credit_blocked += s.credit_blocked;
  acc->penalties += s.penalties;
  acc->recycles += s.recycles;
  ReliabilityStats& r = acc->reliability;
  const ReliabilityStats& x = s.reliability;
  r.retransmits += x.retransmits;
  r.retransmits_path_gap += x.retransmits_path_gap;
  r.retransmits_time += x.retransmits_time;
  r.retransmits_rto += x.retransmits_rto;
  r.retransmits_tail_probe += x.retransmits_tail_probe;
  r.retransmits_nak += x.retransmits_nak;
  r.rtos += x.rtos;
  r.spurious_retransmits += x.spurious_retransmits;
  r.spurious_losses += x.spurious_losses;
  r.spurious_gap_losses += x.spurious_gap_losses;
  r.spurious_rtos += x.spurious_rtos;
}

PeerEntry* PeerTable::Insert(std::unique_ptr<PeerEntry> peer, TimeNs now,
                             DurationNs min_idle,
                             absl::FunctionRef<void(PeerEntry*)> on_evict) {
  if (peers_.size() >= max_peers_) {
    size_t victim = peers_.size();
    for (size_t i = 0; i < peers_.size(); ++i) {
      const Peer& p = peers_[i]->peer;
      if (!p.Idle() || now - p.last_activity() < min_idle) continue;
      if (victim == peers_.size() ||
          p.last_activity() < peers_[victim]->peer.last_activity()) {
        victim = i;
      }
    }
    if (victim == peers_.size()) return nullptr;
    PeerStats s;
    peers_[victim]->peer.FillStats(&s, false);
    AccumulatePeerCounters(s, &retired_);
    map_.erase(peers_[victim]->peer.addr());
    on_evict(peers_[victim].get());
    peers_[victim] = std::move(peers_.back());
    peers_.pop_back();
    ++evicted_;
  }
  PeerEntry* p = peer.get();
  map_[p->peer.addr()] = p;
  peers_.push_back(std::move(peer));
  ++created_;
  return p;
}

}  // namespace braid::endpoint
