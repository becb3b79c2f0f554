// The forged braid datagrams of each attack braid-forge knows, built with
// the wire writers (src/wire/frames.h): each one well-formed, so that it
// passes the parser and tests the endpoint's checks, not its parser. Pure:
// no I/O, deterministic for a seed.
#ifndef BRAID_TOOLS_BRAID_FORGE_FORGER_H_
#define BRAID_TOOLS_BRAID_FORGE_FORGER_H_

#include <cstddef>
#include <cstdint>

#include "absl/types/span.h"
#include "base/rng.h"
#include "tools/braid_forge/ip_udp.h"

namespace braid::forge {

enum class Attack : uint8_t {
  // From the spoofed peer's address: SYNC + data claiming that the peer
  // restarted, with a random new incarnation, dst_incarnation 0.
  kSync,
  // A STALE reply naming a guessed (or leaked) incarnation of the victim and
  // a random new one of the spoofed peer.
  kStale,
  kNeedSync,  // NEED_SYNC naming a guessed (or leaked) victim incarnation
  kAck,       // an ack acking everything, naming a guessed incarnation
  kData,      // a data fragment naming a guessed (or no) incarnation
  // A CHALLENGE_REPLY with a guessed nonce for a claimed new incarnation.
  kChallengeReply,
  // First contact from ever new (IP, reply port) pairs of a prefix: SYNC +
  // one fragment of a large message each (a peer and a partial message).
  kFlood,
};
const char* AttackName(Attack a);
// The victim's drop counters (braid-perf --stats JSON names) each datagram
// of the attack should increase, comma-separated.
const char* ExpectedDrops(Attack a, bool leaked_incarnation);

struct ForgeTarget {
  uint32_t victim_ip = 0;  // host byte order
  uint16_t victim_port = 0;
  // The peer to impersonate (all attacks but kFlood): its IP and the port
  // it receives on (its reply port).
  uint32_t spoof_ip = 0;
  uint16_t spoof_port = 0;
  // kFlood: sources are distinct addresses of this prefix (the victim's own
  // address is skipped), each with a random reply port.
  uint32_t prefix_ip = 0;
  uint8_t prefix_len = 32;
  // The incarnation the victim presents to the spoofed peer, if the attacker
  // learnt it (an on-path leak); 0 = guess a random one per datagram.
  uint64_t victim_incarnation = 0;
  // The message a forged data fragment claims to be part of, and where the
  // fragment sits in it (frag_offset + frag_len <= msg_len).
  uint32_t msg_len = 65536;
  uint32_t frag_len = 1024;
  uint32_t frag_offset = 0;
};

class Forger {
 public:
  Forger(Attack attack, const ForgeTarget& target, uint64_t seed);

  // Writes the UDP payload of the next forged datagram into `out` and its
  // forged addresses into *addrs. Returns its size, or 0 (nothing usable) if
  // `out` is too small for it.
  size_t Next(absl::Span<uint8_t> out, Ipv4UdpAddrs* addrs);
  // Largest payload Next writes for this target.
  size_t MaxPayload() const;
  // Distinct source addresses kFlood can draw before it repeats one.
  uint64_t FloodSources() const;

 private:
  size_t WriteSyncAndData(uint64_t inc, uint16_t reply_port,
                          absl::Span<uint8_t> out);
  uint64_t GuessVictim() {
    return t_.victim_incarnation != 0 ? t_.victim_incarnation
                                      : (rng_.Next() | 1);
  }

  Attack attack_;
  ForgeTarget t_;
  Rng rng_;
  uint64_t n_ = 0;  // datagrams built
  uint32_t flood_step_ = 1;
  uint32_t flood_start_ = 0;
};

}  // namespace braid::forge

#endif  // BRAID_TOOLS_BRAID_FORGE_FORGER_H_
