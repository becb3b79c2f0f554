// The per-message path hint (OutMessage::flow, SendOptions::flow): every
// first transmission of a hinted message leaves on path flow % paths with
// that path's entropy (its UDP source port), different hints spread over
// different paths, unhinted messages keep spraying, and hinted messages
// still complete, byte-exact, under loss and with their path blackholed
// (the path is penalised and recycled, meanwhile the flow is sprayed).
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "endpoint/endpoint_core.h"
#include "gtest/gtest.h"
#include "wire/frames.h"

namespace braid::endpoint {
namespace {

constexpr uint16_t kPaths = 16;

// One datagram core 0 sent to core 1.
struct Sent {
  wire::Entropy entropy = 0;
  std::vector<uint8_t> bytes;
  bool dropped = false;
};

// A data frame of a Sent datagram.
struct SentFrame {
  wire::Entropy entropy = 0;
  wire::DataHeader h;
  uint8_t first_byte = 0;  // the payload's first byte (0 if empty)
};

// Two cores on an in-memory wire; core 0 sends, core 1 answers with acks.
// `drop` (if set) decides per datagram from 0 whether it is lost.
class Pair {
 public:
  explicit Pair(uint32_t max_datagram = 1472) {
    for (int i = 0; i < 2; ++i) {
      addr_[i] = NetAddr::Ipv4(0x0a000001 + i, 7000);
      CoreConfig c;
      c.max_datagram = max_datagram;
      c.local_port = 7000;
      c.incarnation = 0x1111 * (i + 1);
      c.seed = i + 1;
      c.proto.paths = kPaths;
      c.proto.spray_run = DefaultSprayRun(max_datagram);
      core_[i] = std::make_unique<EndpointCore>(c);
    }
  }

  // Queues `body` (kept by the caller until done) to core 1.
  void Send(const std::vector<uint8_t>& body, uint32_t flow, uint64_t cookie) {
    OutMessage m =
        OutMessage::Borrow(body.data(), static_cast<uint32_t>(body.size()));
    m.flow = flow;
    m.cookie = cookie;
    ASSERT_TRUE(core_[0]->Send(now_, addr_[1], std::move(m)).ok());
  }

  // Steps until core 0 has `sends` send completions and core 1 `receives`
  // messages, or `max_steps` pass.
  void RunUntil(size_t sends, size_t receives, int max_steps = 200000) {
    for (int s = 0; s < max_steps; ++s) {
      if (done_[0].size() >= sends && done_[1].size() >= receives) return;
      Step();
    }
  }

  std::function<bool(const Sent&)> drop;
  const std::vector<Sent>& log() const { return log_; }
  std::vector<Completion>& done(int i) { return done_[i]; }
  PeerStats peer0() const {
    return core_[0]->peer_stats(/*with_paths=*/true).at(0);
  }

  // The data frames core 0 sent, with their datagram's entropy.
  std::vector<SentFrame> Frames() const {
    std::vector<SentFrame> out;
    for (const Sent& s : log_) {
      wire::ParseError e;
      if (wire::ParsePreamble(s.bytes, &e) == 0) continue;
      wire::FrameReader r(
          absl::MakeConstSpan(s.bytes).subspan(wire::kPreambleSize));
      wire::Frame f;
      while (r.Next(&f)) {
        if (f.type != wire::FrameType::kData) continue;
        SentFrame sf;
        sf.entropy = s.entropy;
        sf.h = f.data;
        sf.first_byte = f.data.payload_len > 0 ? f.payload[0] : 0;
        out.push_back(sf);
      }
    }
    return out;
  }

 private:
  void Step() {
    for (int i = 0; i < 2; ++i) {
      for (;;) {
        batch_.clear();
        if (core_[i]->PollTx(now_, &batch_) == 0) break;
        for (const backend::TxPacket& p : batch_.packets()) {
          Sent s;
          s.entropy = p.entropy;
          s.bytes.resize(p.size());
          p.CopyTo(s.bytes.data());
          if (i == 0) s.dropped = drop && drop(s);
          if (!s.dropped)
            core_[1 - i]->OnDatagram(now_, addr_[i], s.bytes, false);
          if (i == 0) log_.push_back(std::move(s));
        }
      }
    }
    now_ += DurationNs::Micros(3);
    for (int i = 0; i < 2; ++i) {
      if (core_[i]->NextWake() <= now_) core_[i]->OnTimer(now_);
      core_[i]->PollCompletions(&done_[i], SIZE_MAX);
    }
  }

  NetAddr addr_[2];
  std::unique_ptr<EndpointCore> core_[2];
  std::vector<Completion> done_[2];
  std::vector<Sent> log_;
  TimeNs now_ = TimeNs(1000000);
  TxBatch batch_{64, 9000};
};

// A body whose every byte names its flow, so any fragment tells it.
std::vector<uint8_t> Body(size_t n, uint32_t flow) {
  return std::vector<uint8_t>(n, static_cast<uint8_t>(flow));
}

// Every send of `p` completed kSendDone and core 1 received each body once,
// byte-exact (matched by content: bodies are distinct by flow and size).
void ExpectAllDelivered(Pair& p,
                        const std::vector<std::vector<uint8_t>>& bodies) {
  ASSERT_EQ(p.done(0).size(), bodies.size());
  for (const Completion& c : p.done(0)) {
    EXPECT_EQ(c.type, CompletionType::kSendDone);
  }
  std::multiset<std::vector<uint8_t>> want(bodies.begin(), bodies.end());
  std::multiset<std::vector<uint8_t>> got;
  for (const Completion& c : p.done(1)) got.insert(c.data);
  EXPECT_TRUE(want == got);
}

TEST(FlowHintTest, HintedMessagesLeaveOnTheirPathAndItsSourcePortOnly) {
  Pair p;
  std::vector<std::vector<uint8_t>> bodies;
  // Bulk (the full-datagram fast path) and small messages (shared
  // datagrams), all hinted 5.
  for (size_t n : {65536u, 100u, 300u, 200000u, 1u, 5000u}) {
    bodies.push_back(Body(n, 5));
  }
  for (size_t k = 0; k < bodies.size(); ++k) p.Send(bodies[k], 5, k);
  p.RunUntil(bodies.size(), bodies.size());
  ExpectAllDelivered(p, bodies);

  const PeerStats st = p.peer0();
  ASSERT_EQ(st.paths.size(), kPaths);
  const wire::Entropy port = st.paths[5].entropy;
  size_t frames = 0;
  for (const SentFrame& f : p.Frames()) {
    if (f.h.flags & wire::kDataFlagRetransmit) continue;
    ++frames;
    EXPECT_EQ(f.h.path_id, 5);
    EXPECT_EQ(f.entropy, port);
  }
  EXPECT_GT(frames, 180u);  // ~265 KiB in 1.4 KiB datagrams
  // The other paths carried no data (at most acks-only, which core 0 has
  // none of here).
  for (uint16_t i = 0; i < kPaths; ++i) {
    if (i != 5) {
      EXPECT_EQ(st.paths[i].packets_sent, 0u) << "path " << i;
    }
  }
}

TEST(FlowHintTest, DifferentHintsSpreadOverDifferentPaths) {
  Pair p;
  std::vector<std::vector<uint8_t>> bodies;
  // Flows 1..16 interleaved, small (shared datagrams) and multi-datagram.
  for (int round = 0; round < 3; ++round) {
    for (uint32_t flow = 1; flow <= kPaths; ++flow) {
      bodies.push_back(Body(round == 1 ? 4000 : 60 + round * 10, flow));
    }
  }
  for (size_t k = 0; k < bodies.size(); ++k) {
    p.Send(bodies[k], bodies[k][0], k);
  }
  p.RunUntil(bodies.size(), bodies.size());
  ExpectAllDelivered(p, bodies);

  const PeerStats st = p.peer0();
  std::map<uint32_t, std::set<wire::Entropy>> ports_of_flow;
  for (const SentFrame& f : p.Frames()) {
    if (f.h.flags & wire::kDataFlagRetransmit) continue;
    const uint32_t flow = f.first_byte;
    EXPECT_EQ(f.h.path_id, flow % kPaths) << "flow " << flow;
    ports_of_flow[flow].insert(f.entropy);
  }
  ASSERT_EQ(ports_of_flow.size(), kPaths);
  std::set<wire::Entropy> all;
  for (const auto& [flow, ports] : ports_of_flow) {
    EXPECT_EQ(ports.size(), 1u) << "flow " << flow;
    EXPECT_EQ(*ports.begin(), st.paths[flow % kPaths].entropy);
    all.insert(*ports.begin());
  }
  EXPECT_EQ(all.size(), kPaths);  // sixteen flows, sixteen source ports
}

TEST(FlowHintTest, UnhintedMessagesAreStillSprayed) {
  Pair p;
  std::vector<std::vector<uint8_t>> bodies = {Body(300000, 0)};
  p.Send(bodies[0], 0, 0);
  p.RunUntil(1, 1);
  ExpectAllDelivered(p, bodies);
  std::set<uint16_t> paths;
  for (const SentFrame& f : p.Frames()) paths.insert(f.h.path_id);
  EXPECT_GE(paths.size(), 3u);  // several spray runs
}

// Sends 20 messages of about 20 KB, flows 3 and 7 in turn, with core 0's
// datagrams lost at random (`percent`, a fixed pattern); checks delivery.
// Returns the first-transmission frames on their flow's path and all of
// them, and counts re-sends (and those that left the flow's path).
struct LossRun {
  size_t on_path = 0, first = 0, resent = 0, resent_elsewhere = 0;
  PeerStats stats;
};
LossRun RunUnderLoss(uint32_t percent) {
  Pair p;
  uint64_t x = 12345;
  p.drop = [&x, percent](const Sent&) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return (x >> 33) % 100 < percent;
  };
  std::vector<std::vector<uint8_t>> bodies;
  for (int k = 0; k < 20; ++k) {
    bodies.push_back(Body(20000 + k, k % 2 == 0 ? 3 : 7));
  }
  for (size_t k = 0; k < bodies.size(); ++k) {
    p.Send(bodies[k], bodies[k][0], k);
  }
  p.RunUntil(bodies.size(), bodies.size());
  ExpectAllDelivered(p, bodies);
  LossRun r;
  for (const SentFrame& f : p.Frames()) {
    const bool home = f.h.path_id == f.first_byte % kPaths;
    if (f.h.flags & wire::kDataFlagRetransmit) {
      ++r.resent;
      if (!home) ++r.resent_elsewhere;
    } else {
      ++r.first;
      if (home) ++r.on_path;
    }
  }
  r.stats = p.peer0();
  return r;
}

TEST(FlowHintTest, UnderLightLossFirstSendsKeepToTheFlowsPath) {
  const LossRun r = RunUnderLoss(2);
  // 2 % loss never penalises the flows' paths, so no first send leaves.
  ASSERT_EQ(r.stats.paths[3].penalties + r.stats.paths[7].penalties, 0u);
  EXPECT_GT(r.first, 250u);
  EXPECT_EQ(r.on_path, r.first);
  EXPECT_GT(r.resent, 0u);
  // Re-sends avoid the path that lost the packet.
  EXPECT_EQ(r.resent_elsewhere, r.resent);
}

TEST(FlowHintTest, HintedMessagesCompleteUnderHeavyLoss) {
  // 10 % loss on the only two paths in use looks path-local to the path
  // set (no other path loses): they may be penalised, and their flows
  // sprayed meanwhile. Everything still arrives, once, byte-exact.
  const LossRun r = RunUnderLoss(10);
  EXPECT_GT(r.resent, 20u);
  EXPECT_GT(r.on_path, r.first / 2);
}

TEST(FlowHintTest, BlackholedHintedPathIsRecycledAndTheFlowStillCompletes) {
  Pair p;
  std::vector<std::vector<uint8_t>> bodies;
  bodies.push_back(Body(10, 0));
  p.Send(bodies[0], 0, 0);  // creates the peer
  p.RunUntil(1, 1);
  // From now on path 9 loses everything sent on the entropy it has.
  const wire::Entropy dead = p.peer0().paths[9].entropy;
  p.drop = [dead](const Sent& s) { return s.entropy == dead; };
  // A flow on path 9, one message at a time, until the path has a fresh
  // entropy (a penalty, a lost probe, the recycle) and a few more.
  int after_recycle = 0;
  for (int k = 1; k < 400 && after_recycle < 5; ++k) {
    bodies.push_back(Body(3000 + k, 9));
    p.Send(bodies.back(), 9, k);
    p.RunUntil(bodies.size(), bodies.size());
    ASSERT_EQ(p.done(0).size(), bodies.size()) << "message " << k;
    if (p.peer0().paths[9].recycles > 0) ++after_recycle;
  }
  ExpectAllDelivered(p, bodies);

  const PeerStats after = p.peer0();
  EXPECT_GE(after.paths[9].recycles, 1u);
  EXPECT_NE(after.paths[9].entropy, dead);
  // The flow is back on path 9, on its fresh entropy: the last message's
  // first transmissions left there.
  size_t last_frames = 0;
  for (const SentFrame& f : p.Frames()) {
    if (f.h.flags & wire::kDataFlagRetransmit) continue;
    if (f.h.msg_len != bodies.back().size()) continue;
    ++last_frames;
    EXPECT_EQ(f.h.path_id, 9);
    EXPECT_EQ(f.entropy, after.paths[9].entropy);
  }
  EXPECT_GT(last_frames, 0u);
}

}  // namespace
}  // namespace braid::endpoint
