// Test helper: drives flows of self-describing messages (message_codec.h)
// through braid::Endpoints and checks what arrives: exactly once, byte-exact,
// in order on ordered streams, and every send completed exactly once.
#ifndef BRAID_TESTS_ENDPOINT_TRAFFIC_H_
#define BRAID_TESTS_ENDPOINT_TRAFFIC_H_

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/rng.h"
#include "braid/endpoint.h"
#include "tests/endpoint/message_codec.h"

namespace braid::testing {

struct FlowConfig {
  uint16_t flow = 1;    // flow id, carried in every message (>= kHeaderBytes)
  uint16_t stream = 0;  // SendOptions.stream: 0 unordered
  uint32_t count = 1000;
  uint64_t seed = 1;  // content seed, shared with the receiver's checker
  std::function<uint32_t(Rng&)> size = SkewedSize;
  // Sender-side window of accepted, not yet completed sends.
  uint32_t max_outstanding = 512;
  uint64_t max_outstanding_bytes = 32ull << 20;
  bool zero_copy = false;
};

// Keeps a bounded window of sends of one flow outstanding.
class FlowSender {
 public:
  FlowSender(const FlowConfig& cfg, Endpoint* ep, const NetAddr& peer)
      : cfg_(cfg),
        ep_(ep),
        peer_(peer),
        sizes_(cfg.count),
        acked_(cfg.count, 0) {
    Rng rng(cfg.seed * 7919 + cfg.flow);
    for (uint32_t i = 0; i < cfg.count; ++i) sizes_[i] = cfg.size(rng);
    if (zero_copy()) buffers_.resize(cfg.count);
  }

  // Sends as many messages as the window allows.
  void Pump() {
    while (next_ < cfg_.count && outstanding_ < cfg_.max_outstanding &&
           (outstanding_ == 0 ||
            outstanding_bytes_ + sizes_[next_] <= cfg_.max_outstanding_bytes)) {
      const uint32_t id = next_;
      std::vector<uint8_t>& buf = zero_copy() ? buffers_[id] : scratch_;
      EncodeMessage(cfg_.seed, cfg_.flow, id, sizes_[id], &buf);
      SendOptions o{.stream = cfg_.stream, .cookie = Cookie(id)};
      absl::Status s = zero_copy() ? ep_->SendZeroCopy(peer_, buf, o)
                                   : ep_->Send(peer_, buf, o);
      if (absl::IsResourceExhausted(s)) {
        ++retries_;
        return;  // retry after the next poll
      }
      if (!s.ok()) {
        Error(absl::StrCat("Send(id ", id, ") failed: ", s.ToString()));
        return;
      }
      if (sizes_[id] < kHeaderBytes) ++tiny_sent_[sizes_[id]];
      ++next_;
      ++outstanding_;
      outstanding_bytes_ += sizes_[id];
    }
  }

  // Takes a send completion if it belongs to this flow. Returns true if so.
  bool OnCompletion(const Completion& c) {
    if (c.type == CompletionType::kRecv || (c.cookie >> 32) != cfg_.flow)
      return false;
    const uint32_t id = static_cast<uint32_t>(c.cookie);
    if (id >= next_) {
      Error(absl::StrCat("completion for id ", id, " never sent"));
      return true;
    }
    if (acked_[id]++ != 0) Error(absl::StrCat("second completion for id ", id));
    if (c.type == CompletionType::kSendFailed) {
      ++failed_;
      Error(
          absl::StrCat("send id ", id, " failed: ", FailureCauseName(c.cause)));
    } else {
      ++done_;
    }
    if (c.stream != cfg_.stream)
      Error(absl::StrCat("completion stream ", c.stream));
    --outstanding_;
    outstanding_bytes_ -= sizes_[id];
    if (zero_copy()) std::vector<uint8_t>().swap(buffers_[id]);
    return true;
  }

  bool finished() const { return done_ + failed_ == cfg_.count; }
  uint32_t done() const { return done_; }
  uint32_t failed() const { return failed_; }
  uint64_t retries() const { return retries_; }
  uint64_t total_bytes() const {
    uint64_t t = 0;
    for (uint32_t s : sizes_) t += s;
    return t;
  }
  const std::array<uint32_t, kHeaderBytes>& tiny_sent() const {
    return tiny_sent_;
  }
  const std::vector<std::string>& errors() const { return errors_; }
  const FlowConfig& config() const { return cfg_; }

 private:
  bool zero_copy() const { return cfg_.zero_copy; }
  uint64_t Cookie(uint32_t id) const {
    return (uint64_t{cfg_.flow} << 32) | id;
  }
  void Error(std::string e) {
    if (errors_.size() < 20) errors_.push_back(std::move(e));
  }

  FlowConfig cfg_;
  Endpoint* ep_;
  NetAddr peer_;
  std::vector<uint32_t> sizes_;
  std::vector<uint8_t> acked_;
  std::vector<std::vector<uint8_t>> buffers_;  // zero-copy: kept until done
  std::vector<uint8_t> scratch_;
  uint32_t next_ = 0;
  uint32_t outstanding_ = 0;
  uint64_t outstanding_bytes_ = 0;
  uint32_t done_ = 0, failed_ = 0;
  uint64_t retries_ = 0;
  std::array<uint32_t, kHeaderBytes> tiny_sent_{};
  std::vector<std::string> errors_;
};

// Checks every message received by one endpoint.
class ReceiveChecker {
 public:
  explicit ReceiveChecker(uint64_t seed) : seed_(seed) {}
  // Declares a flow: its expected sender and stream (ordered if non-zero).
  void ExpectFlow(uint16_t flow, uint16_t stream, const NetAddr& from) {
    flows_[flow] = Flow{stream, from, {}, 0};
  }

  void OnRecv(const Completion& c) {
    ++received_;
    DecodedMessage m;
    std::string err = DecodeMessage(seed_, c.data, &m, &scratch_);
    if (!err.empty()) return Error(err);
    if (m.tiny) {
      ++tiny_received_[c.data.size()];
      return;
    }
    auto it = flows_.find(m.flow);
    if (it == flows_.end()) return Error(absl::StrCat("unknown flow ", m.flow));
    Flow& f = it->second;
    if (c.peer != f.from) {
      Error(absl::StrCat("flow ", m.flow, " from ", c.peer.ToString()));
    }
    if (c.stream != f.stream) {
      Error(
          absl::StrCat("flow ", m.flow, " id ", m.id, " on stream ", c.stream));
    }
    if (f.seen.size() <= m.id) f.seen.resize(m.id + 1, 0);
    if (f.seen[m.id]++ != 0) {
      ++duplicates_;
      Error(absl::StrCat("flow ", m.flow, " id ", m.id, " delivered twice"));
    }
    if (f.stream != 0) {
      if (m.id != f.next_in_order) {
        ++order_violations_;
        Error(absl::StrCat("ordered flow ", m.flow, ": got id ", m.id,
                           ", expected ", f.next_in_order));
      }
      f.next_in_order = m.id + 1;
    }
  }

  // Ids of `flow` in [0, count) never received.
  uint32_t Missing(uint16_t flow, uint32_t count) const {
    auto it = flows_.find(flow);
    uint32_t missing = 0;
    for (uint32_t i = 0; i < count; ++i) {
      if (it == flows_.end() || i >= it->second.seen.size() ||
          it->second.seen[i] == 0) {
        ++missing;
      }
    }
    return missing;
  }
  uint64_t received() const { return received_; }
  uint64_t duplicates() const { return duplicates_; }
  uint64_t order_violations() const { return order_violations_; }
  const std::array<uint32_t, kHeaderBytes>& tiny_received() const {
    return tiny_received_;
  }
  const std::vector<std::string>& errors() const { return errors_; }

 private:
  struct Flow {
    uint16_t stream = 0;
    NetAddr from;
    std::vector<uint8_t> seen;
    uint32_t next_in_order = 0;
  };
  void Error(std::string e) {
    if (errors_.size() < 20) errors_.push_back(std::move(e));
  }

  uint64_t seed_;
  std::map<uint16_t, Flow> flows_;
  std::vector<uint8_t> scratch_;
  uint64_t received_ = 0, duplicates_ = 0, order_violations_ = 0;
  std::array<uint32_t, kHeaderBytes> tiny_received_{};
  std::vector<std::string> errors_;
};

// Dispatches completions polled from one endpoint to its senders and checker.
inline void Dispatch(const std::vector<Completion>& done,
                     const std::vector<FlowSender*>& senders,
                     ReceiveChecker* checker,
                     std::vector<std::string>* errors) {
  for (const Completion& c : done) {
    if (c.type == CompletionType::kRecv) {
      if (checker != nullptr) {
        checker->OnRecv(c);
      } else if (errors->size() < 20) {
        errors->push_back("unexpected message received");
      }
      continue;
    }
    bool taken = false;
    for (FlowSender* s : senders) taken = taken || s->OnCompletion(c);
    if (!taken && errors->size() < 20) {
      errors->push_back(
          absl::StrCat("send completion with unknown cookie ", c.cookie));
    }
  }
}

}  // namespace braid::testing

#endif  // BRAID_TESTS_ENDPOINT_TRAFFIC_H_
