#include "backend/verbs_ud/verbs_ud_backend.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "absl/strings/str_cat.h"
#include "backend/verbs_ud/ud_grh.h"
#include "base/monotonic_clock.h"

namespace braid::backend {
namespace {

constexpr size_t kMaxBurst = 64;
constexpr uint32_t kAsyncCheckEvery = 1024;  // RxBurst calls
constexpr uint8_t kEct0 = 2;

}  // namespace

absl::StatusOr<std::unique_ptr<VerbsUdBackend>> VerbsUdBackend::Open(
    const VerbsUdBackendOptions& o, uint16_t entropies, bool ecn,
    const UdVerbsOps& ops) {
  const uint32_t ent =
      o.entropies ? o.entropies : std::max<uint16_t>(1, entropies);
  if (ent > 256) {
    return absl::InvalidArgumentError(
        absl::StrCat("ud.entropies ", ent, ": at most 256"));
  }
  if (o.gid_index > 255) {
    return absl::InvalidArgumentError(
        absl::StrCat("ud.gid_index ", o.gid_index, ": at most 255"));
  }
  UdDeviceConfig dc;
  dc.device = o.device;
  dc.port = o.port;
  dc.gid_index = o.gid_index;
  dc.qkey = o.qkey;
  dc.send_queue = o.send_queue ? o.send_queue : 512;
  dc.recv_queue = o.recv_queue ? o.recv_queue : 1024;
  dc.max_datagram = o.max_datagram;
  absl::StatusOr<std::unique_ptr<UdDevice>> dev = UdDevice::Open(dc, ops);
  if (!dev.ok()) return dev.status();
  UdAhConfig ac;
  ac.port = o.port;
  ac.sgid_index = static_cast<uint8_t>(o.gid_index);
  ac.traffic_class = ecn ? kEct0 : 0;
  ac.entropies = ent;
  ac.max_peers = o.max_ah_peers ? o.max_ah_peers : 4096;
  std::unique_ptr<VerbsUdBackend> b(new VerbsUdBackend(
      std::move(*dev), ac, o.signal_every ? o.signal_every : 16, ops));
  std::vector<uint32_t> all(b->rq_depth_);
  for (uint32_t i = 0; i < b->rq_depth_; ++i) all[i] = i;
  for (size_t at = 0; at < all.size(); at += kMaxBurst) {
    if (!b->PostRecvs(all.data() + at, std::min(kMaxBurst, all.size() - at))) {
      return absl::UnavailableError(
          absl::StrCat("ud: ibv_post_recv on ", b->dev_->name(),
                       " refused the initial receive buffers"));
    }
  }
  return b;
}

VerbsUdBackend::VerbsUdBackend(std::unique_ptr<UdDevice> dev,
                               const UdAhConfig& ah, uint32_t signal_every,
                               const UdVerbsOps& ops)
    : ops_(ops),
      dev_(std::move(dev)),
      ahs_(ah, ops, dev_->pd()),
      entropies_(ah.entropies),
      qkey_(dev_->config().qkey),
      sq_depth_(dev_->config().send_queue),
      rq_depth_(dev_->config().recv_queue),
      signal_every_(std::min(signal_every, sq_depth_)),
      holds_(sq_depth_, nullptr) {
  local_ = NetAddr::IbUd(dev_->gid().raw, dev_->qp()->qp_num);
  rx_lent_.reserve(kMaxBurst);
}

VerbsUdBackend::~VerbsUdBackend() {
  // The queue pair goes first, so no NIC reads a tail, a handle or a region
  // after it is let go.
  ReapSends();
  dev_->DestroyQp();
  ReleaseThrough(next_ == 0 ? 0 : next_ - 1);
  ahs_.Clear();
  regions_.ForEach(
      [this](void* mr) { ops_.dereg_mr(static_cast<ibv_mr*>(mr)); });
}

bool VerbsUdBackend::PostRecvs(const uint32_t* slots, size_t n) {
  if (n == 0) return true;
  ibv_recv_wr wr[kMaxBurst];
  ibv_sge sge[kMaxBurst];
  for (size_t i = 0; i < n; ++i) {
    sge[i].addr = reinterpret_cast<uintptr_t>(dev_->recv_buf(slots[i]));
    sge[i].length = dev_->recv_slot();
    sge[i].lkey = dev_->lkey();
    wr[i] = {};
    wr[i].wr_id = slots[i];
    wr[i].sg_list = &sge[i];
    wr[i].num_sge = 1;
    wr[i].next = i + 1 < n ? &wr[i + 1] : nullptr;
  }
  ibv_recv_wr* bad = nullptr;
  if (ops_.post_recv(dev_->qp(), wr, &bad) != 0) {
    ++c_.ud.post_errors;
    need_recovery_ = true;
    return false;
  }
  return true;
}

void VerbsUdBackend::ReleaseThrough(uint64_t seq) {
  for (; reaped_ <= seq && reaped_ < next_; ++reaped_) {
    TxHold*& h = holds_[reaped_ % sq_depth_];
    if (h != nullptr) {
      h->refs.fetch_sub(1, std::memory_order_release);
      h = nullptr;
    }
  }
  if (ahs_.retired() > 0) ahs_.Collect(reaped_);
}

void VerbsUdBackend::ReapSends() {
  ibv_wc wc[32];
  while (reaped_ < next_) {
    const int n = ops_.poll_cq(dev_->send_cq(), 32, wc);
    if (n <= 0) {
      if (n < 0) need_recovery_ = true;
      break;
    }
    for (int i = 0; i < n; ++i) {
      if (wc[i].status != IBV_WC_SUCCESS) {
        ++c_.ud.tx_wc_errors;
        need_recovery_ = true;
      }
      ReleaseThrough(wc[i].wr_id);
    }
  }
}

bool VerbsUdBackend::BuildSend(const TxPacket& p, uint64_t seq, ibv_send_wr* wr,
                               ibv_sge* sge) {
  const uint32_t slot = static_cast<uint32_t>(seq % sq_depth_);
  if (p.dst.family != NetAddr::Family::kIbUd || p.size() > MaxDatagram() ||
      p.entropy >= entropies_) {
    ++c_.tx_dropped;
    return false;
  }
  // Sends numbered below `seq` (queued, or built in this burst) may use
  // a handle the cache retires now.
  ibv_ah* ah = ahs_.Get(p.dst, p.entropy, /*in_use=*/seq);
  if (ah == nullptr) {
    ++c_.tx_dropped;
    return false;
  }
  uint8_t* buf = dev_->send_buf(slot);
  *wr = {};
  wr->sg_list = sge;
  wr->opcode = IBV_WR_SEND;
  wr->wr.ud.ah = ah;
  wr->wr.ud.remote_qpn = p.dst.qpn();
  wr->wr.ud.remote_qkey = qkey_;
  std::optional<uint32_t> lkey;
  if (p.tail_len > 0 && p.hold != nullptr) {
    lkey = regions_.Find(p.tail, p.tail_len);
  }
  if (lkey.has_value()) {
    if (p.len > 0) std::memcpy(buf, p.data, p.len);
    sge[0] = {reinterpret_cast<uintptr_t>(buf), p.len, dev_->lkey()};
    sge[1] = {reinterpret_cast<uintptr_t>(p.tail), p.tail_len, *lkey};
    wr->num_sge = 2;
    p.hold->refs.fetch_add(1, std::memory_order_relaxed);
    holds_[slot] = p.hold;
    ++c_.ud.tx_zero_copy;
  } else {
    p.CopyTo(buf);
    sge[0] = {reinterpret_cast<uintptr_t>(buf), p.size(), dev_->lkey()};
    wr->num_sge = 1;
    if (p.tail_len > 0) {
      ++c_.ud.tx_copied;
      c_.ud.tx_copied_bytes += p.tail_len;
    }
  }
  return true;
}

size_t VerbsUdBackend::TxBurst(absl::Span<const TxPacket> pkts) {
  if (need_recovery_) Recover();
  if (failed_) {
    c_.tx_dropped += pkts.size();
    return pkts.size();
  }
  if (next_ - reaped_ + kMaxBurst > sq_depth_) ReapSends();
  const size_t room = sq_depth_ - static_cast<size_t>(next_ - reaped_);
  if (room == 0) {
    ++c_.ud.sq_full;
    return 0;
  }
  ibv_send_wr wr[kMaxBurst];
  ibv_sge sge[kMaxBurst][2];
  size_t pkt_of[kMaxBurst];  // the packet each work request carries
  size_t nwr = 0, i = 0;
  for (; i < pkts.size() && nwr < std::min(room, kMaxBurst); ++i) {
    if (!BuildSend(pkts[i], next_ + nwr, &wr[nwr], sge[nwr])) continue;
    wr[nwr].wr_id = next_ + nwr;
    if ((next_ + nwr) % signal_every_ == signal_every_ - 1) {
      wr[nwr].send_flags = IBV_SEND_SIGNALED;
    }
    if (nwr > 0) wr[nwr - 1].next = &wr[nwr];
    pkt_of[nwr++] = i;
  }
  if (nwr == 0) return i;
  wr[nwr - 1].send_flags = IBV_SEND_SIGNALED;
  ibv_send_wr* bad = nullptr;
  const int rc = ops_.post_send(dev_->qp(), wr, &bad);
  size_t posted = nwr;
  if (rc != 0) {
    posted = bad != nullptr ? static_cast<size_t>(bad - wr) : 0;
    if (posted > nwr) posted = 0;
    // Work requests not posted: their holds go back, their packets are
    // offered again (a full queue) or dropped (anything else).
    for (size_t k = posted; k < nwr; ++k) {
      TxHold*& h = holds_[(next_ + k) % sq_depth_];
      if (h != nullptr) {
        h->refs.fetch_sub(1, std::memory_order_release);
        h = nullptr;
      }
    }
    if (rc == ENOMEM) {
      ++c_.ud.sq_full;
      i = pkt_of[posted];
    } else {
      ++c_.ud.post_errors;
      c_.tx_dropped += nwr - posted;
      need_recovery_ = true;
    }
    // The last posted request was not signalled as the last of the burst:
    // reaping still finds it through a later signalled one.
  }
  for (size_t k = 0; k < posted; ++k) {
    ++c_.tx_packets;
    c_.tx_bytes += pkts[pkt_of[k]].size();
  }
  next_ += posted;
  ++c_.tx_syscalls;
  return i;
}

int VerbsUdBackend::PollRecv(RecvDone* out, int max, TimeNs* now) {
  ibv_cq_ex* cq = dev_->recv_cq_stamped();
  if (cq == nullptr) {
    ibv_wc wc[kMaxBurst];
    const int n = ops_.poll_cq(dev_->recv_cq(), max, wc);
    if (n > 0) *now = MonotonicNow();
    for (int j = 0; j < n; ++j) {
      out[j] = {wc[j].wr_id,  wc[j].status,   wc[j].byte_len,
                wc[j].src_qp, wc[j].wc_flags, TimeNs::Infinite()};
    }
    return n;
  }
  ibv_poll_cq_attr attr{};
  int rc = ibv_start_poll(cq, &attr);
  if (rc == ENOENT) return 0;
  if (rc != 0) return -1;
  // The device's CLOCK_REALTIME stamps, on CLOCK_MONOTONIC's scale.
  timespec rt;
  clock_gettime(CLOCK_REALTIME, &rt);
  const TimeNs mono = MonotonicNow();
  *now = mono;
  const int64_t real_ns = static_cast<int64_t>(rt.tv_sec) * 1000000000 +
                          static_cast<int64_t>(rt.tv_nsec);
  int n = 0;
  while (rc == 0) {
    RecvDone& d = out[n++];
    d.wr_id = cq->wr_id;
    d.status = cq->status;
    d.byte_len = ibv_wc_read_byte_len(cq);
    d.src_qp = ibv_wc_read_src_qp(cq);
    d.wc_flags = ibv_wc_read_wc_flags(cq);
    const int64_t age =
        real_ns - static_cast<int64_t>(ibv_wc_read_completion_wallclock_ns(cq));
    d.arrival = age > 0 ? mono - DurationNs::Nanos(age) : mono;
    if (n == max) break;
    rc = ibv_next_poll(cq);
  }
  ibv_end_poll(cq);
  c_.rx_timestamps += static_cast<uint64_t>(n);
  return n;
}

size_t VerbsUdBackend::RxBurst(absl::Span<RxPacket> out) {
  if (!rx_lent_.empty()) {
    PostRecvs(rx_lent_.data(), rx_lent_.size());
    rx_lent_.clear();
  }
  if (++rx_calls_ % kAsyncCheckEvery == 0) CheckAsyncEvents();
  if (need_recovery_) Recover();
  if (failed_) return 0;
  RecvDone done[kMaxBurst];
  TimeNs now = TimeNs::Infinite();
  const int n =
      PollRecv(done, static_cast<int>(std::min(out.size(), kMaxBurst)), &now);
  if (n <= 0) {
    if (n < 0) need_recovery_ = true;
    return 0;
  }
  last_rx_ = now;
  ++c_.rx_syscalls;
  size_t k = 0;
  for (int j = 0; j < n; ++j) {
    const RecvDone& d = done[j];
    const uint32_t slot = static_cast<uint32_t>(d.wr_id);
    if (slot >= rq_depth_) continue;  // not a buffer of ours
    rx_lent_.push_back(slot);
    if (d.status != IBV_WC_SUCCESS) {
      ++c_.ud.rx_wc_errors;
      if (d.status == IBV_WC_WR_FLUSH_ERR) need_recovery_ = true;
      continue;
    }
    uint8_t* buf = dev_->recv_buf(slot);
    if (!(d.wc_flags & IBV_WC_GRH) || d.byte_len < kGrhBytes ||
        d.byte_len > dev_->recv_slot()) {
      ++c_.ud.rx_bad_grh;
      ++c_.rx_dropped;
      continue;
    }
    std::optional<GrhInfo> g = ParseGrh(buf);
    if (!g.has_value()) {
      ++c_.ud.rx_bad_grh;
      ++c_.rx_dropped;
      continue;
    }
    RxPacket& r = out[k++];
    r.src = NetAddr::IbUd(g->sgid.data(), d.src_qp);
    r.ce = g->ce;
    r.data = buf + kGrhBytes;
    r.len = d.byte_len - kGrhBytes;
    r.arrival = d.arrival;
    r.local = 0;
    ++c_.rx_packets;
    c_.rx_bytes += r.len;
  }
  return k;
}

void VerbsUdBackend::Recover() {
  need_recovery_ = false;
  if (failed_) return;
  // Completions still queued (flushed ones included) free their slots;
  // whatever the reset discards is freed with them.
  ReapSends();
  ReleaseThrough(next_ == 0 ? 0 : next_ - 1);
  RecvDone flushed[kMaxBurst];
  TimeNs ignored;
  while (PollRecv(flushed, kMaxBurst, &ignored) > 0) {
  }
  rx_lent_.clear();
  if (!dev_->Reactivate().ok()) {
    failed_ = true;
    ++c_.ud.device_failed;
    return;
  }
  ++c_.ud.qp_recoveries;
  std::vector<uint32_t> all(rq_depth_);
  for (uint32_t i = 0; i < rq_depth_; ++i) all[i] = i;
  for (size_t at = 0; at < all.size(); at += kMaxBurst) {
    if (!PostRecvs(all.data() + at, std::min(kMaxBurst, all.size() - at))) {
      failed_ = true;
      ++c_.ud.device_failed;
      return;
    }
  }
}

void VerbsUdBackend::CheckAsyncEvents() {
  ibv_async_event ev;
  for (int i = 0; i < 16 && ops_.get_async_event(dev_->context(), &ev) == 0;
       ++i) {
    switch (ev.event_type) {
      case IBV_EVENT_QP_FATAL:
      case IBV_EVENT_QP_REQ_ERR:
      case IBV_EVENT_QP_ACCESS_ERR:
      case IBV_EVENT_CQ_ERR:
        need_recovery_ = true;
        break;
      case IBV_EVENT_DEVICE_FATAL:
        if (!failed_) ++c_.ud.device_failed;
        failed_ = true;
        break;
      default:
        break;
    }
    ops_.ack_async_event(&ev);
  }
}

absl::Status VerbsUdBackend::RegisterMemory(const void* addr, size_t len) {
  if (addr == nullptr || len == 0) {
    return absl::InvalidArgumentError("RegisterMemory: empty region");
  }
  if (regions_.Find(addr, 1).has_value() ||
      regions_.Find(static_cast<const uint8_t*>(addr) + len - 1, 1)
          .has_value()) {
    return absl::AlreadyExistsError(
        "RegisterMemory: the region overlaps one already registered");
  }
  ibv_mr* mr = ops_.reg_mr(dev_->pd(), const_cast<void*>(addr), len,
                           IBV_ACCESS_LOCAL_WRITE);
  if (mr == nullptr) {
    const int err = errno;
    return absl::ResourceExhaustedError(
        absl::StrCat("RegisterMemory: ibv_reg_mr of ", len, " bytes on ",
                     dev_->name(), " failed: ", std::strerror(err)));
  }
  if (!regions_.Add(reinterpret_cast<uintptr_t>(addr), len, mr->lkey, mr)) {
    ops_.dereg_mr(mr);
    return absl::AlreadyExistsError(
        "RegisterMemory: the region overlaps one already registered");
  }
  return absl::OkStatus();
}

absl::Status VerbsUdBackend::DeregisterMemory(const void* addr) {
  void* mr = regions_.Remove(reinterpret_cast<uintptr_t>(addr));
  if (mr == nullptr) {
    return absl::NotFoundError(
        "DeregisterMemory: no region registered at that address");
  }
  // Sends from it may still be queued: let the NIC finish them first (for
  // at most a second: a device that stopped completing has failed anyway).
  const TimeNs give_up = MonotonicNow() + DurationNs::Seconds(1);
  while (reaped_ < next_ && !failed_ && MonotonicNow() < give_up) {
    ReapSends();
  }
  ops_.dereg_mr(static_cast<ibv_mr*>(mr));
  return absl::OkStatus();
}

BackendCounters VerbsUdBackend::counters() const {
  BackendCounters c = c_;
  c.ud.ah_created = ahs_.created();
  c.ud.ah_failures = ahs_.failures();
  c.ud.ah_flushes = ahs_.flushes();
  return c;
}

}  // namespace braid::backend
