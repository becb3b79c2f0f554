// A state-machine fuzzer for EndpointCore: two cores exchange real traffic
// (messages whose bytes follow from their id) over a simulated wire that
// drops, duplicates and reorders, while an attacker injects forged frames
// between their datagrams. The harness checks, whatever the input:
//   - no crash (the sanitizer builds catch memory errors);
//   - every message the application sent completes exactly once, done or
//     failed, after time is driven forward (no hang);
//   - every delivered message was sent by the peer it is reported from, is
//     delivered at most once and has the bytes that were sent;
//   - a send reported done was delivered;
//   - messages sent after the attack stops complete done (the attack left
//     no lasting damage);
//   - each core's peers stay within max_peers, and heap growth under a
//     bound (reassembly of forged fragments).
//
// Its choices come from a ChoiceSource: a seeded Rng (the GoogleTest
// driver, endpoint_core_fuzz_test.cc) or libFuzzer's input
// (endpoint_core_libfuzzer.cc). The same choices give the same run.
#ifndef BRAID_TESTS_FUZZ_CORE_FUZZ_HARNESS_H_
#define BRAID_TESTS_FUZZ_CORE_FUZZ_HARNESS_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/rng.h"
#include "braid/completion.h"
#include "endpoint/endpoint_core.h"

namespace braid::endpoint::fuzz {

// Where the harness takes its choices from.
class ChoiceSource {
 public:
  virtual ~ChoiceSource() = default;
  // A value in [0, bound) (0 when bound is 0).
  virtual uint64_t Next(uint64_t bound) = 0;
  // True once the source has nothing more to give (libFuzzer input used up).
  virtual bool Exhausted() const = 0;
};

// Choices from a seeded Rng; never exhausted.
class RngChoices final : public ChoiceSource {
 public:
  explicit RngChoices(uint64_t seed) : rng_(seed) {}
  uint64_t Next(uint64_t bound) override {
    return bound == 0 ? 0 : rng_.Uniform(bound);
  }
  bool Exhausted() const override { return false; }

 private:
  Rng rng_;
};

// Choices read from bytes (libFuzzer input), little-endian, as many bytes
// as the bound needs; 0 once the bytes are used up.
class ByteChoices final : public ChoiceSource {
 public:
  ByteChoices(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint64_t Next(uint64_t bound) override;
  bool Exhausted() const override { return pos_ >= size_; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// What the attacker may do; a run enables a set of these (bit mask). The
// off-path attacker knows the addresses (the reply port travels in clear)
// and each endpoint's own incarnation (as if leaked: it never travels on
// the wire, each peer is shown its own keyed one, protocol.md §3), but not
// the per-peer incarnations, session numbers or PSNs: it guesses them.
enum Attack : uint32_t {
  kDropDup = 1u << 0,     // the wire drops and duplicates datagrams
  kReplay = 1u << 1,      // real datagrams again, later (a capture)
  kGarbage = 1u << 2,     // random bytes, sometimes with a valid preamble
  kForgedData = 1u << 3,  // data frames, known incarnations, guessed PSNs
  kForgedAck = 1u << 4,   // ack frames, known incarnations, guessed values
  kForgedProbe = 1u << 5,
  kForgedStale = 1u << 6,  // STALE naming the sender's current incarnation
  kForgedNeedSync = 1u << 7,
  kForgedSync = 1u << 8,       // SYNC of a guessed session, current incarnation
  kForgedSyncData = 1u << 9,   // that SYNC, then data of the forged session
  kNewIncarnation = 1u << 10,  // SYNC / STALE with a new incarnation
  kStrangers = 1u << 11,       // data from many addresses (state exhaustion)
  // On-path: needs datagrams the attacker saw (packet authentication stops
  // these, nothing else can).
  kHeaderFlip = 1u << 12,   // a real datagram with header bits flipped
  kPayloadFlip = 1u << 13,  // a real datagram with any bit flipped
  // The forged frames above name a wrong incarnation (or 0) now and then
  // instead of the known one.
  kWrongIncarnation = 1u << 14,
  kAttackCount = 15,
};
inline constexpr uint32_t kAllAttacks = (1u << kAttackCount) - 1;
const char* AttackName(uint32_t one_attack);

// Attacks the core does not withstand today: none. (The first runs of this
// fuzzer found blind injection with guessed PSNs, forged SYNC / NEED_SYNC /
// STALE resets, blind takeover by a new incarnation, unbounded state from
// strangers, and a dst-0 frame from a peer's address poisoning its
// incarnation before first contact; per-peer keyed incarnations, proven
// restarts, bounded state and provisional incarnations fixed them.) An
// attack added that the core does not withstand goes here, with why.
inline constexpr uint32_t kFailingToday = 0;
// Attacks only packet authentication can stop (off by default without it:
// the core cannot withstand them, by design; EndpointCoreFuzzSecureTest
// runs them against cores that authenticate or encrypt).
inline constexpr uint32_t kOnPath = kHeaderFlip | kPayloadFlip;

struct FuzzOptions {
  uint32_t attacks = kAllAttacks & ~kFailingToday & ~kOnPath;
  // Steps of traffic and attack before the drain (each step one choice of
  // action). With ByteChoices the run also ends when the input is used up.
  uint32_t steps = 200;
  // Heap growth allowed over the whole run (checked where the allocator
  // can tell: ASan builds, glibc malloc).
  uint64_t heap_bound = 8ull << 20;
  // Both cores protect their packets so (with one domain key): what the
  // on-path attacks (kOnPath) need to be withstood.
  SecurityMode security = SecurityMode::kNone;
  // Keep the last events for Trace(). Off, a run formats nothing (the
  // libFuzzer entry point runs so, and replays an input that broke a check
  // with it on: the same choices give the same run).
  bool trace = true;
};

// One run: builds two cores, plays the steps, drains, checks.
class CoreFuzzHarness {
 public:
  CoreFuzzHarness(ChoiceSource* choices, const FuzzOptions& options);
  ~CoreFuzzHarness();

  // Plays the run. Returns the broken checks (empty: every check held).
  std::vector<std::string> Run();
  // The last events of the run (for a failure report).
  std::string Trace() const;

  // Counters of what the run did (for the drivers' summaries).
  struct Counts {
    uint64_t sent = 0, done = 0, failed = 0, delivered = 0;
    uint64_t datagrams = 0, forged = 0;
    // Forged messages delivered as first contact, before the receiving
    // core had heard from its peer (taken on trust; not a violation).
    uint64_t forged_first_contact = 0;
  };
  const Counts& counts() const { return counts_; }

 private:
  struct Sent {
    uint32_t len = 0;
    bool completed = false, done = false, delivered = false;
    bool clean = false;  // sent after the attack stopped
  };
  struct Datagram {
    int to = 0;  // core index
    NetAddr from;
    std::vector<uint8_t> bytes;
  };

  void Step();
  void SendMessage(int side, bool clean);
  void Pump(int side);
  void DeliverOne(size_t i);
  void DeliverAll();  // everything on the wire, in order
  void Inject(const Datagram& d, const char* what);
  void Forge();
  void ForgeCtrl(uint32_t attack);
  void ForgeData(uint32_t attack);
  void ForgeAck();
  void ForgeFromCapture(uint32_t attack);
  void PollCompletions(int side);
  void OnCompletion(int side, const Completion& c);
  void CheckReceived(int side, const Completion& c);
  void Drain();
  void CheckEnd();
  // Peers and heap growth stay under their bounds.
  void CheckBounds();
  // Notes the peer address a datagram to core d.to names (see heard_).
  void Heard(const Datagram& d);
  void Fail(std::string what);
  // Records an event for Trace() (when tracing; the pieces are formatted
  // only then).
  template <typename... Pieces>
  void Note(const Pieces&... pieces) {
    if (opt_.trace) NoteLine(absl::StrCat(pieces...));
  }
  void NoteLine(std::string event);
  // A byte buffer from spare_ (or a new one), `n` bytes long; Recycle gives
  // one back. Datagrams on the wire and in the capture reuse them.
  std::vector<uint8_t> TakeBytes(const uint8_t* data, size_t n);
  void Recycle(std::vector<uint8_t>&& bytes);
  uint64_t Pick(uint64_t bound) { return choices_->Next(bound); }
  uint32_t PickU32();
  uint64_t GuessIncarnation(int side);
  NetAddr StrangerAddr();

  ChoiceSource* choices_;
  FuzzOptions opt_;
  std::unique_ptr<EndpointCore> core_[2];
  NetAddr addr_[2];
  uint64_t inc_[2];
  TimeNs now_ = TimeNs(1000000);
  std::vector<Sent> sent_[2];       // by message id, per sending side
  uint32_t in_flight_[2] = {0, 0};  // sends not completed, per side
  std::vector<Datagram> wire_;
  // Recent real datagrams (replays): a ring of kCaptureSize, capture_at_
  // the next slot to overwrite.
  std::vector<Datagram> capture_;
  size_t capture_at_ = 0;
  std::vector<std::vector<uint8_t>> spare_;  // byte buffers to reuse
  TxBatch* batch_;  // one per thread, shared by runs (SharedBatch)
  std::vector<Completion> completions_;
  std::vector<std::string> violations_;
  std::deque<std::string> trace_;
  Counts counts_;
  uint64_t heap_start_ = 0;
  bool attacking_ = true;
  // Whether core i has heard from its peer: received a genuine datagram
  // from it that says who the peer is (ClaimsALife; until then a forged
  // first contact is taken on trust).
  bool contact_[2] = {false, false};
  // The incarnation core i shows its peer (the source of its frames), once
  // it has sent one.
  uint64_t shown_[2] = {0, 0};
  // The peer addresses core i has sent to or received from (a datagram's
  // source IP and preamble reply port, as EndpointCore keys its peers), up
  // to kMaxPeers + 1: a core holds peers only for these, so while there
  // are at most kMaxPeers its peer count needs no check (EndpointCore::
  // stats walks every peer: checked every step, it was a tenth of a run).
  std::vector<NetAddr> heard_[2];
};

}  // namespace braid::endpoint::fuzz

#endif  // BRAID_TESTS_FUZZ_CORE_FUZZ_HARNESS_H_
