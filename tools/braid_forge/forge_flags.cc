#include "tools/braid_forge/forge_flags.h"

#include <arpa/inet.h>

#include <optional>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "tools/common/flag_parser.h"

namespace braid::forge {
namespace {

using tools::FlagError;

// "A.B.C.D" into host byte order.
bool ParseIpv4(absl::string_view text, uint32_t* ip) {
  in_addr a{};
  if (inet_pton(AF_INET, std::string(text).c_str(), &a) != 1) return false;
  *ip = ntohl(a.s_addr);
  return true;
}

// "A.B.C.D:PORT" with a port in 1..65535.
absl::Status ParseEndpoint(absl::string_view flag, absl::string_view v,
                           uint32_t* ip, uint16_t* port) {
  const size_t colon = v.rfind(':');
  uint32_t p = 0;
  if (colon == absl::string_view::npos || !ParseIpv4(v.substr(0, colon), ip) ||
      !absl::SimpleAtoi(v.substr(colon + 1), &p) || p < 1 || p > 65535) {
    return FlagError(flag, absl::StrCat("expected IPV4:PORT (port 1..65535), "
                                        "got '",
                                        v, "'"));
  }
  *port = static_cast<uint16_t>(p);
  return absl::OkStatus();
}

absl::Status ParsePrefix(absl::string_view flag, absl::string_view v,
                         ForgeTarget* t) {
  const size_t slash = v.find('/');
  uint32_t len = 0;
  if (slash == absl::string_view::npos ||
      !ParseIpv4(v.substr(0, slash), &t->prefix_ip) ||
      !absl::SimpleAtoi(v.substr(slash + 1), &len) || len < 8 || len > 30) {
    return FlagError(
        flag,
        absl::StrCat("expected A.B.C.D/LEN with LEN 8..30, got '", v, "'"));
  }
  t->prefix_len = static_cast<uint8_t>(len);
  return absl::OkStatus();
}

// The checks that involve more than one flag.
absl::Status CheckCombination(const ForgeFlags& f, bool have_victim,
                              bool have_spoof, bool have_prefix) {
  if (!have_victim) return FlagError("--victim", "required");
  if (f.attack != Attack::kFlood && !have_spoof) {
    return FlagError(
        "--spoof", absl::StrCat("required by --attack ", AttackName(f.attack)));
  }
  if (f.attack == Attack::kFlood && have_spoof) {
    return FlagError("--spoof",
                     "does not apply to --attack flood (use --prefix)");
  }
  if (f.attack != Attack::kFlood && have_prefix) {
    return FlagError("--prefix", "applies only to --attack flood");
  }
  if (f.count == 0 && f.duration == 0) {
    return FlagError("--count", "give --count or --duration (or both)");
  }
  const ForgeTarget& t = f.target;
  if (uint64_t{t.frag_offset} + t.frag_len > t.msg_len) {
    return FlagError("--frag-offset",
                     absl::StrCat("fragment ", t.frag_offset, "+", t.frag_len,
                                  " ends beyond --msg-len ", t.msg_len));
  }
  return absl::OkStatus();
}

}  // namespace

const char* ForgeUsage() {
  return R"(usage: braid-forge --attack MODE --victim IP:PORT [--spoof IP:PORT]
                   (--count N | --duration S) [options]

Sends forged braid datagrams with a spoofed source IPv4 address through a
raw socket (needs root / CAP_NET_RAW). Prints what it sent.

  --attack MODE  sync             SYNC + data claiming the peer restarted
                 stale            STALE naming a guessed victim incarnation
                 needsync         NEED_SYNC naming a guessed incarnation
                 ack              an ack of everything, guessed incarnation
                 data             data naming a guessed (or no) incarnation
                 challenge-reply  CHALLENGE_REPLY with a guessed nonce
                 flood            first contact (SYNC + a fragment of a large
                                  message) from ever new source addresses
  --victim IP:PORT   the endpoint attacked (its receive port)
  --spoof IP:PORT    the peer to pose as: its IP and receive (reply) port;
                     required by every mode but flood
  --prefix A.B.C.D/LEN  flood sources: distinct addresses of this prefix
                     (LEN 8..30, default 10.96.0.0/12), random reply ports
  --victim-incarnation HEX  what the victim calls itself towards --spoof
                     (an on-path leak); default: a random guess per datagram
  --msg-len N        length of the message forged fragments claim (default
                     65536)
  --frag-len N       payload bytes of a forged fragment (default 1024, max
                     8900)
  --frag-offset N    where the fragment sits in the message (default 0)
  --count N          stop after N datagrams
  --duration S       stop after S seconds
  --rate R           datagrams per second (default: as fast as possible)
  --batch N          datagrams per sendmmsg, 1..1024 (default 64)
  --seed N           seed of every random choice (default: random)
  --json             the summary as one JSON line on stdout

Exit codes: 0 sent, 1 could not send (no privilege, socket error), 2 bad flags.
)";
}

absl::StatusOr<ForgeFlags> ParseForgeFlags(int argc, char** argv) {
  ForgeFlags f;
  f.target.prefix_ip = 0x0a600000;  // 10.96.0.0/12: a million addresses
  f.target.prefix_len = 12;
  std::optional<Attack> attack;
  bool have_victim = false, have_spoof = false, have_prefix = false;
  tools::FlagParser p;
  p.Choice<std::optional<Attack>>({"--attack"},
                                  {{"sync", Attack::kSync},
                                   {"stale", Attack::kStale},
                                   {"needsync", Attack::kNeedSync},
                                   {"ack", Attack::kAck},
                                   {"data", Attack::kData},
                                   {"challenge-reply", Attack::kChallengeReply},
                                   {"flood", Attack::kFlood}},
                                  &attack);
  p.Value({"--victim"}, [&](absl::string_view flag, absl::string_view v) {
    have_victim = true;
    return ParseEndpoint(flag, v, &f.target.victim_ip, &f.target.victim_port);
  });
  p.Value({"--spoof"}, [&](absl::string_view flag, absl::string_view v) {
    have_spoof = true;
    return ParseEndpoint(flag, v, &f.target.spoof_ip, &f.target.spoof_port);
  });
  p.Value({"--prefix"}, [&](absl::string_view flag, absl::string_view v) {
    have_prefix = true;
    return ParsePrefix(flag, v, &f.target);
  });
  p.Value({"--victim-incarnation"},
          [&](absl::string_view flag, absl::string_view v) {
            uint64_t x = 0;
            if (!absl::SimpleHexAtoi(v, &x) || x == 0) {
              return FlagError(flag, absl::StrCat("expected a non-zero hex "
                                                  "number, got '",
                                                  v, "'"));
            }
            f.target.victim_incarnation = x;
            return absl::OkStatus();
          });
  p.Int<uint32_t>({"--msg-len"}, 1, 64u << 20, &f.target.msg_len);
  p.Int<uint32_t>({"--frag-len"}, 1, 8900, &f.target.frag_len);
  p.Int<uint32_t>({"--frag-offset"}, 0, 64u << 20, &f.target.frag_offset);
  p.Int<uint64_t>({"--count"}, 1, uint64_t{1} << 40, &f.count);
  p.Real({"--duration"}, {0, 86400, true, false}, &f.duration);
  p.Real({"--rate"}, {0, 1e9, true, false}, &f.rate);
  p.Int<uint32_t>({"--batch"}, 1, 1024, &f.batch);
  p.Int<uint64_t>({"--seed"}, 1, ~uint64_t{0}, &f.seed);
  p.Switch({"--json"}, &f.json);
  absl::Status s = p.Parse(argc, argv);
  if (!s.ok()) return s;
  if (p.help()) return absl::InvalidArgumentError("help");
  if (!attack) return FlagError("--attack", "required");
  f.attack = *attack;
  s = CheckCombination(f, have_victim, have_spoof, have_prefix);
  if (!s.ok()) return s;
  return f;
}

}  // namespace braid::forge
