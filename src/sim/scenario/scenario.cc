#include "sim/scenario/scenario.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <utility>

#include "absl/status/statusor.h"
#include "backend/sim/sim_backend.h"
#include "base/rng.h"
#include "endpoint/drive_loop.h"
#include "endpoint/endpoint_core.h"
#include "sim/host.h"
#include "sim/scenario/payload.h"
#include "sim/sim_clock.h"
#include "sim/simulator.h"

namespace braid::sim {
namespace {

constexpr size_t kBurst = 64;
// Payloads shorter than this are copied into the datagram by the core;
// longer ones leave from the message's buffer (TxPacket::tail) and the sim
// backend copies them once, into the packet (or, in checksum mode, only
// their first bytes). Same datagrams on the wire either way.
constexpr uint32_t kMinUncopiedPayload = 256;

class Run;

// The simulator of a run: packet buffers as large as the largest datagram
// (not the pool's jumbo-frame default), so a large fabric's packets in
// flight take fewer pages. Same seed as a default simulator.
sim::SimulatorOptions SimulatorOptionsFor(const ScenarioConfig& cfg) {
  sim::SimulatorOptions o;
  o.pool.buffer_bytes = std::max<uint32_t>(cfg.mtu_payload, 64);
  return o;
}

// Builds a `Topology` (LeafSpine, FatTree) from `options` inside `sim`.
// Checksums are stamped only where a link corrupts a packet; the result is
// the same as stamping every packet at send, at a fraction of the cost.
template <typename Topology, typename Options>
absl::StatusOr<std::unique_ptr<sim::Fabric>> MakeFabric(sim::Simulator* sim,
                                                        Options options) {
  options.host.lazy_checksum = true;
  auto fabric = Topology::Create(sim, options);
  if (!fabric.ok()) return fabric.status();
  return std::unique_ptr<sim::Fabric>(std::move(*fabric));
}

// One host: its sim backend, its protocol core and the drive loop over
// them, and the application.
struct HostDriver {
  Run* run = nullptr;
  int index = 0;
  sim::Host* host = nullptr;
  std::unique_ptr<backend::SimBackend> backend;
  std::unique_ptr<endpoint::EndpointCore> core;
  std::unique_ptr<endpoint::DriveLoop> loop;
  std::vector<Completion> comps;
  sim::Simulator::TimerId timer;
  TimeNs timer_at = TimeNs::Infinite();
  // Application (sender) state: message m goes to dests[m % size].
  std::vector<int> dests;
  uint32_t next_msg = 0;
  uint32_t outstanding = 0;
  std::vector<TimeNs> send_time;        // per msg id
  std::vector<uint8_t> completed;       // 0 none, 1 done, 2 failed, 3 abandoned
  std::vector<uint8_t> delivered;       // at the receiver: times delivered
  std::vector<int64_t> last_on_stream;  // receiver side, per (sender,stream)
  // Message buffers, sizes.max bytes each, sent from in place (zero-copy:
  // a buffer is the core's until its send completes). Allocated as the
  // window first fills, never zero-filled; the pages a checksum-mode
  // run never writes stay untouched.
  std::vector<std::unique_ptr<uint8_t[]>> buffers;
  std::vector<uint32_t> free_buffers;  // indices into `buffers`
  std::vector<uint32_t> buffer_of;     // per msg id, while it is in flight
};

class Run {
 public:
  explicit Run(const ScenarioConfig& cfg)
      : cfg_(cfg),
        rng_(cfg.seed),
        sim_(SimulatorOptionsFor(cfg)),
        clock_(&sim_) {}

  ScenarioResult Go();
  void Service(HostDriver& d);

 private:
  // The steps of Go, in order.
  // Builds the fabric and one HostDriver per host; false (with the reason
  // in res_) if the topology is invalid.
  bool BuildHosts();
  // Gives each sender its destinations by cfg_.traffic.
  void AssignTraffic();
  // Makes each of `hosts` send to the next in a random cycle over them.
  void AssignCycle(const std::vector<int>& hosts);
  // Schedules each timed impairment's start and stop.
  void ScheduleImpairments();
  // Schedules the host restarts (RestartHost).
  void ScheduleRestarts();
  // Starts every host at time 0 and runs until all is done or the limit.
  void RunUntilDone();
  // Adds each host's losses and stats, and the fabric's counters, to res_.
  void FoldHosts();
  // Message completion percentiles, simulated time and goodput.
  void FoldTimes();

  // Restarts d's protocol core and application, as a process restart does.
  void RestartHost(HostDriver& d);
  void MakeCore(HostDriver& d);
  // A free message buffer of d's (allocated if none is free).
  uint32_t TakeBuffer(HostDriver& d);
  void SendMore(HostDriver& d, TimeNs now);
  void HandleCompletions(HostDriver& d, TimeNs now);
  void HandleCompletion(HostDriver& d, Completion& c, TimeNs now);
  void OnRecv(HostDriver& d, const Completion& c, TimeNs now);
  void Reschedule(HostDriver& d);
  void FoldStats(const endpoint::EndpointCore& core);
  bool AllDone() const;

  ScenarioConfig cfg_;
  Rng rng_;
  sim::Simulator sim_;
  SimClock clock_;  // what the hosts' drive loops read
  std::unique_ptr<sim::Fabric> fabric_;
  std::vector<std::unique_ptr<HostDriver>> hosts_;
  ScenarioResult res_;
  std::vector<DurationNs> mct_;
  uint64_t pending_total_ = 0;  // sends without a completion
  bool started_ = false;
};

void Run::MakeCore(HostDriver& d) {
  endpoint::CoreConfig c;
  c.proto = cfg_.protocol;
  c.incarnation = rng_.Next() | 1;
  c.seed = rng_.Next();
  c.entropy_count = d.backend->EntropyCount();
  c.max_datagram = d.backend->MaxDatagram();
  c.local_port = d.backend->LocalAddress().port;
  c.min_uncopied_payload = kMinUncopiedPayload;
  if (cfg_.payload == PayloadMode::kChecksum) {
    // The packets carry only the first bytes of each payload.
    c.fragment_copy_limit = backend::SimBackend::kCarriedTailBytes;
  }
  d.loop.reset();
  d.core = std::make_unique<endpoint::EndpointCore>(c);
  endpoint::DriveLoopOptions lo;
  lo.burst = kBurst;
  lo.uncopied_payloads = true;  // the sim backend copies them (or not)
  lo.group_by_entropy = false;  // no GSO to group for
  d.loop = std::make_unique<endpoint::DriveLoop>(d.backend.get(), d.core.get(),
                                                 &clock_, lo);
}

void Run::FoldStats(const endpoint::EndpointCore& core) {
  const EndpointStats s = core.stats();
  res_.retransmits += s.reliability.retransmits;
  res_.spurious_retransmits += s.reliability.spurious_retransmits;
  res_.rtos += s.reliability.rtos;
  res_.retransmits_path_gap += s.reliability.retransmits_path_gap;
  res_.retransmits_time += s.reliability.retransmits_time;
  res_.path_penalties += s.penalties;
  res_.path_recycles += s.recycles;
  res_.malformed_dropped += s.drops.malformed();
}

uint32_t Run::TakeBuffer(HostDriver& d) {
  if (d.free_buffers.empty()) {
    d.buffers.push_back(
        std::make_unique_for_overwrite<uint8_t[]>(cfg_.sizes.max));
    return static_cast<uint32_t>(d.buffers.size() - 1);
  }
  const uint32_t b = d.free_buffers.back();
  d.free_buffers.pop_back();
  return b;
}

void Run::SendMore(HostDriver& d, TimeNs now) {
  if (d.dests.empty()) return;
  while (d.outstanding < cfg_.window && d.next_msg < cfg_.messages_per_sender) {
    const uint32_t id = d.next_msg;
    const uint32_t span = cfg_.sizes.max - cfg_.sizes.min;
    const uint32_t len =
        cfg_.sizes.min +
        (span ? static_cast<uint32_t>(rng_.Uniform(uint64_t{span} + 1)) : 0);
    const uint32_t b = TakeBuffer(d);
    const auto whole = absl::MakeSpan(d.buffers[b].get(), len);
    WriteMessageHeader(whole, {static_cast<uint32_t>(d.index), id, len});
    if (cfg_.payload == PayloadMode::kBytes) {
      FillPattern(whole, cfg_.seed, static_cast<uint32_t>(d.index), id);
    }
    endpoint::OutMessage m;  // zero-copy: `owned` stays empty
    m.data = whole.data();
    m.len = len;
    m.cookie = id;
    m.stream = cfg_.streams ? static_cast<uint16_t>(1 + id % cfg_.streams) : 0;
    const absl::Status s = d.loop->Send(
        hosts_[d.dests[id % d.dests.size()]]->host->address(), std::move(m));
    if (!s.ok()) {  // queue full: try again after completions
      d.free_buffers.push_back(b);
      break;
    }
    if (!started_) {
      started_ = true;
      res_.first_send = now;
    }
    d.send_time[id] = now;
    d.buffer_of[id] = b;
    ++d.next_msg;
    ++d.outstanding;
    ++pending_total_;
    ++res_.messages_sent;
  }
}

void Run::OnRecv(HostDriver& d, const Completion& c, TimeNs now) {
  const std::vector<uint8_t>& b = c.data;
  MessageName name;
  if (!ReadMessageHeader(b, &name)) {
    ++res_.byte_mismatches;
    return;
  }
  const uint32_t sender = name.sender;
  const uint32_t id = name.id;
  if (sender >= hosts_.size() || id >= cfg_.messages_per_sender ||
      name.len != b.size() || hosts_[sender]->host->address() != c.peer) {
    ++res_.byte_mismatches;
    return;
  }
  // Checksum mode carries only the header bytes; the rest is not checked.
  if (cfg_.payload == PayloadMode::kBytes &&
      !PatternMatches(b, cfg_.seed, sender, id)) {
    ++res_.byte_mismatches;
    return;
  }
  HostDriver& s = *hosts_[sender];
  if (s.delivered[id]++ > 0) {
    ++res_.duplicates_delivered;
    return;
  }
  if (c.stream != 0) {
    const size_t key = size_t{sender} * 65536 + c.stream;
    if (d.last_on_stream.size() <= key) d.last_on_stream.resize(key + 1, -1);
    if (static_cast<int64_t>(id) < d.last_on_stream[key])
      ++res_.order_violations;
    d.last_on_stream[key] = id;
  }
  ++res_.messages_delivered;
  res_.bytes_delivered += b.size();
  res_.last_delivery = now;
  const size_t bin = static_cast<size_t>(now.ns() / cfg_.goodput_bin.ns());
  if (res_.timeline.size() <= bin) res_.timeline.resize(bin + 1, 0);
  res_.timeline[bin] += b.size();
}

void Run::HandleCompletion(HostDriver& d, Completion& c, TimeNs now) {
  if (c.type == CompletionType::kRecv) {
    OnRecv(d, c, now);
    // The buffer goes back to the core's pool for the next receive.
    if (c.data.capacity() > 0) d.core->RecycleReceived(std::move(c.data));
    return;
  }
  const uint32_t id = static_cast<uint32_t>(c.cookie);
  if (id >= d.completed.size() || d.completed[id] != 0) return;
  --d.outstanding;
  --pending_total_;
  d.free_buffers.push_back(d.buffer_of[id]);  // the core is done with it
  if (c.type == CompletionType::kSendDone) {
    d.completed[id] = 1;
    ++res_.messages_done;
    mct_.push_back(now - d.send_time[id]);
    return;
  }
  d.completed[id] = 2;
  ++res_.messages_failed;
  const std::string cause = FailureCauseName(c.cause);
  if (std::find(res_.failure_causes.begin(), res_.failure_causes.end(),
                cause) == res_.failure_causes.end()) {
    res_.failure_causes.push_back(cause);
  }
}

// The application as a real one runs over Endpoint: Poll, handle the
// completions (sending more as sends complete), and before it sleeps let
// whatever waits leave (Endpoint::Wait). Acks held by a Poll ride on the
// sends the application makes in between.
void Run::HandleCompletions(HostDriver& d, TimeNs now) {
  for (Completion& c : d.comps) HandleCompletion(d, c, now);
  SendMore(d, now);
}

void Run::Service(HostDriver& d) {
  const TimeNs now = sim_.now();
  do {
    d.comps.clear();
    d.loop->Poll(&d.comps, SIZE_MAX);
    HandleCompletions(d, now);
    d.loop->Flush();
  } while (d.loop->rx_backlog() || d.core->HasCompletions());
  Reschedule(d);
}

void Run::Reschedule(HostDriver& d) {
  TimeNs next = d.loop->NextWake();
  if (next.IsInfinite()) return;
  next = Max(next, sim_.now() + DurationNs(1));
  if (next >= d.timer_at) return;
  if (d.timer.valid()) sim_.Cancel(d.timer);
  d.timer_at = next;
  HostDriver* dp = &d;
  d.timer = sim_.Schedule(next, [this, dp] {
    dp->timer_at = TimeNs::Infinite();
    dp->timer = {};
    Service(*dp);
  });
}

bool Run::AllDone() const { return pending_total_ == 0 && started_; }

bool Run::BuildHosts() {
  absl::StatusOr<std::unique_ptr<sim::Fabric>> fabric =
      cfg_.topology_kind == TopologyKind::kFatTree
          ? MakeFabric<sim::FatTree>(&sim_, cfg_.fat_tree)
          : MakeFabric<sim::LeafSpine>(&sim_, cfg_.topology);
  if (!fabric.ok()) {
    res_.setup_error = std::string(fabric.status().message());
    return false;
  }
  fabric_ = std::move(*fabric);
  const int n = fabric_->num_hosts();
  for (int i = 0; i < n; ++i) {
    auto d = std::make_unique<HostDriver>();
    d->run = this;
    d->index = i;
    d->host = &fabric_->host(i);
    backend::SimBackendOptions bo;
    bo.mtu_payload = cfg_.mtu_payload;
    bo.carry_tail_bytes = cfg_.payload == PayloadMode::kBytes;
    d->backend = std::make_unique<backend::SimBackend>(d->host, bo);
    MakeCore(*d);
    d->delivered.assign(cfg_.messages_per_sender, 0);
    d->host->SetRxHook(
        [](void* ctx) {
          auto* hd = static_cast<HostDriver*>(ctx);
          hd->run->Service(*hd);
        },
        d.get());
    hosts_.push_back(std::move(d));
  }
  return true;
}

// Sattolo's algorithm: a random single cycle over `hosts`, so nobody sends
// to itself; each host's destination is its successor.
void Run::AssignCycle(const std::vector<int>& hosts) {
  if (hosts.size() < 2) return;
  std::vector<int> perm = hosts;
  for (size_t i = perm.size() - 1; i > 0; --i) {
    const size_t j = static_cast<size_t>(rng_.Uniform(i));
    std::swap(perm[i], perm[j]);
  }
  for (size_t i = 0; i < hosts.size(); ++i) {
    hosts_[hosts[i]]->dests = {perm[i]};
  }
}

void Run::AssignTraffic() {
  const int n = static_cast<int>(hosts_.size());
  std::vector<int> all(n);
  for (int i = 0; i < n; ++i) all[i] = i;
  switch (cfg_.traffic) {
    case Traffic::kPairs:
      for (int i = 0; i < n / 2; ++i) hosts_[i]->dests = {i + n / 2};
      break;
    case Traffic::kPermutation:
      AssignCycle(all);
      break;
    case Traffic::kIncast:
    case Traffic::kMix:
      for (int i = 1; i <= cfg_.incast && i < n; ++i) hosts_[i]->dests = {0};
      if (cfg_.traffic == Traffic::kMix && cfg_.incast + 1 < n) {
        AssignCycle(std::vector<int>(all.begin() + cfg_.incast + 1, all.end()));
      }
      break;
    case Traffic::kAllToAll:
      for (int i = 0; i < n; ++i) {
        for (int k = 1; k < n; ++k) hosts_[i]->dests.push_back((i + k) % n);
      }
      break;
  }
  for (auto& d : hosts_) {
    if (d->dests.empty()) continue;
    d->send_time.assign(cfg_.messages_per_sender, TimeNs::Zero());
    d->buffer_of.assign(cfg_.messages_per_sender, 0);
    d->completed.assign(cfg_.messages_per_sender, 0);
  }
}

void Run::ScheduleImpairments() {
  for (const TimedImpairment& ti : cfg_.impairments) {
    auto apply = [this, ti](bool on) {
      const int top = fabric_->num_top_switches();
      const int first = ti.spine < 0 ? 0 : ti.spine;
      const int last = ti.spine < 0 ? top - 1 : ti.spine;
      if (ti.link >= fabric_->num_top_links()) return;
      for (int s = first; s <= last && s < top; ++s) {
        fabric_->SetTopImpairment(s, ti.link, ti.dir,
                                  on ? ti.impairment : sim::Impairment{});
      }
    };
    sim_.Schedule(ti.start, [apply] { apply(true); });
    if (!ti.stop.IsInfinite())
      sim_.Schedule(ti.stop, [apply] { apply(false); });
  }
}

void Run::ScheduleRestarts() {
  const int n = static_cast<int>(hosts_.size());
  for (const Restart& r : cfg_.restarts) {
    if (r.host < 0 || r.host >= n) continue;
    sim_.Schedule(r.at, [this, r] { RestartHost(*hosts_[r.host]); });
  }
}

void Run::RestartHost(HostDriver& d) {
  FoldStats(*d.core);
  // The application restarts too: its own unfinished sends are gone.
  // It then sends the messages it had not sent yet, from its new
  // incarnation, to a receiver that still knows the old one. (It used
  // to stop sending, and the unsent ids were counted as lost.)
  for (size_t id = 0; id < d.next_msg; ++id) {
    if (d.completed[id] == 0) {
      d.completed[id] = 3;
      --pending_total_;
      ++res_.messages_gone_with_restart;
    }
  }
  d.outstanding = 0;
  MakeCore(d);  // the old core is gone: no buffer is in flight
  d.free_buffers.clear();
  for (uint32_t b = 0; b < d.buffers.size(); ++b) d.free_buffers.push_back(b);
  Service(d);
}

void Run::RunUntilDone() {
  // Start every sender at time 0.
  for (auto& d : hosts_) {
    HostDriver* dp = d.get();
    sim_.Schedule(TimeNs::Zero(), [this, dp] { Service(*dp); });
  }
  const TimeNs limit = TimeNs::Zero() + cfg_.time_limit;
  while (!sim_.idle() && sim_.NextEventTime() <= limit) {
    sim_.Step();
    if (AllDone()) break;
  }
  res_.timed_out = !AllDone();
}

void Run::FoldHosts() {
  // Every send must have completed (unless the time limit cut the run
  // short); every kSendDone must have been delivered.
  for (auto& d : hosts_) {
    for (size_t id = 0; id < d->completed.size(); ++id) {
      if (id >= d->next_msg) continue;
      if (d->completed[id] == 0) {
        // Stopped by the time limit, a send in flight has not failed to
        // complete; it was cut short (res_.timed_out says so).
        ++(res_.timed_out ? res_.pending_at_limit : res_.lost_without_error);
      }
      if (d->completed[id] == 1 && d->delivered[id] == 0)
        ++res_.lost_without_error;
    }
    FoldStats(*d->core);
    if (getenv("BRAID_SIM_DUMP_STATS")) {
      fprintf(stderr, "host %d\n%s", d->index,
              FormatStatsTable(d->core->stats()).c_str());
    }
  }
  for (int s = 0; s < fabric_->num_top_switches(); ++s) {
    res_.spine_packets.push_back(fabric_->top_packets(s));
  }
  res_.link_drops = fabric_->TotalLinkDrops();
  // The network's queues: every link but the hosts' own transmit queues.
  fabric_->ForEachNetworkLink([this](const sim::Link& l) {
    res_.queue_drops += l.counters().drops_queue_full;
    res_.max_queue_bytes =
        std::max(res_.max_queue_bytes, l.counters().max_queue_bytes);
  });
  for (int i = 0; i < fabric_->num_hosts(); ++i)
    res_.sim_packets += fabric_->host(i).counters().tx_packets;
  res_.sim_events = sim_.counters().events_run;
}

void Run::FoldTimes() {
  std::sort(mct_.begin(), mct_.end());
  auto pct = [this](double q) {
    if (mct_.empty()) return DurationNs::Zero();
    size_t i =
        static_cast<size_t>(q * static_cast<double>(mct_.size() - 1) + 0.5);
    return mct_[std::min(i, mct_.size() - 1)];
  };
  res_.mct_p50 = pct(0.50);
  res_.mct_p99 = pct(0.99);
  res_.mct_p999 = pct(0.999);
  res_.sim_time = sim_.now() - TimeNs::Zero();
  const DurationNs active = res_.last_delivery - res_.first_send;
  res_.goodput_gbps = active > DurationNs::Zero()
                          ? static_cast<double>(res_.bytes_delivered) * 8 /
                                static_cast<double>(active.ns())
                          : 0;
}

// This thread's CPU time in seconds.
double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) +
         1e-9 * static_cast<double>(ts.tv_nsec);
}

ScenarioResult Run::Go() {
  const auto wall0 = std::chrono::steady_clock::now();
  const double cpu0 = ThreadCpuSeconds();
  if (!BuildHosts()) return res_;
  AssignTraffic();
  ScheduleImpairments();
  ScheduleRestarts();
  RunUntilDone();
  FoldHosts();
  FoldTimes();
  res_.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0)
          .count();
  res_.cpu_seconds = ThreadCpuSeconds() - cpu0;
  return res_;
}

}  // namespace

ScenarioShape ShapeOf(const ScenarioConfig& cfg) {
  ScenarioShape shape;
  if (cfg.topology_kind == TopologyKind::kFatTree) {
    const int half = cfg.fat_tree.k / 2;
    const int per_edge =
        cfg.fat_tree.hosts_per_edge > 0 ? cfg.fat_tree.hosts_per_edge : half;
    shape.hosts = cfg.fat_tree.k * half * per_edge;
    shape.top_switches = half * half;
    shape.top_links = cfg.fat_tree.k;
  } else {
    shape.hosts = cfg.topology.num_leaves * cfg.topology.hosts_per_leaf;
    shape.top_switches = cfg.topology.num_spines;
    shape.top_links = cfg.topology.num_leaves;
  }
  return shape;
}

ScenarioResult RunScenario(const ScenarioConfig& cfg) {
  Run run(cfg);
  return run.Go();
}

double TimelineGbps(const ScenarioResult& r, DurationNs bin, TimeNs from,
                    TimeNs to) {
  const size_t b0 = static_cast<size_t>(from.ns() / bin.ns());
  const size_t b1 = static_cast<size_t>(to.ns() / bin.ns());
  uint64_t bytes = 0;
  for (size_t b = b0; b < b1 && b < r.timeline.size(); ++b)
    bytes += r.timeline[b];
  const double ns = static_cast<double>((b1 - b0) * bin.ns());
  return ns > 0 ? static_cast<double>(bytes) * 8 / ns : 0;
}

}  // namespace braid::sim
