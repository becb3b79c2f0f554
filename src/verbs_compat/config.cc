#include "verbs_compat/config.h"

#include <arpa/inet.h>
#include <sched.h>

#include <cstdlib>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace braid::verbs_compat {
namespace {

// CPUs this process may run on.
int CpusAvailable() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  return CPU_COUNT(&set);
}

absl::Status Bad(const char* var, absl::string_view value,
                 absl::string_view allowed) {
  return absl::InvalidArgumentError(
      absl::StrCat(var, "=\"", value, "\" is invalid: expected ", allowed));
}

absl::Status ParseUint(const char* var, absl::string_view v, uint64_t lo,
                       uint64_t hi, uint64_t* out) {
  uint64_t x = 0;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(v), &x) || x < lo ||
      x > hi) {
    return Bad(var, v, absl::StrCat("an integer in ", lo, "..", hi));
  }
  *out = x;
  return absl::OkStatus();
}

// BRAID_VERBS_UD_* (the carrier NIC of BRAID_VERBS_BACKEND=verbs_ud).
absl::Status LoadVerbsUd(
    const std::function<const char*(const char*)>& getenv_fn, VerbsConfig* c) {
  bool any = false;
  if (const char* v = getenv_fn("BRAID_VERBS_UD_DEVICE"); v && *v) {
    c->ud.device = v;
    any = true;
  }
  uint64_t x = 0;
  if (const char* v = getenv_fn("BRAID_VERBS_UD_PORT"); v && *v) {
    if (absl::Status s = ParseUint("BRAID_VERBS_UD_PORT", v, 1, 255, &x);
        !s.ok()) {
      return s;
    }
    c->ud.port = static_cast<uint8_t>(x);
    any = true;
  }
  if (const char* v = getenv_fn("BRAID_VERBS_UD_GID_INDEX"); v && *v) {
    if (absl::Status s = ParseUint("BRAID_VERBS_UD_GID_INDEX", v, 0, 255, &x);
        !s.ok()) {
      return s;
    }
    c->ud.gid_index = static_cast<uint32_t>(x);
    any = true;
  }
  if (c->backend != BackendKind::kVerbsUd) {
    if (any) {
      return absl::InvalidArgumentError(
          "BRAID_VERBS_UD_* is set but BRAID_VERBS_BACKEND is not verbs_ud");
    }
    return absl::OkStatus();
  }
  // braid0 lists itself among the devices: carried by itself it would open
  // itself without end.
  if (c->ud.device.empty() || c->ud.device == c->device_name) {
    return absl::InvalidArgumentError(absl::StrCat(
        "BRAID_VERBS_BACKEND=verbs_ud needs BRAID_VERBS_UD_DEVICE, the RDMA "
        "device that carries ",
        c->device_name, " (not ", c->device_name, " itself)"));
  }
  return absl::OkStatus();
}

// BRAID_VERBS_BACKEND and the BRAID_VERBS_DPDK_* variables.
absl::Status LoadBackend(
    const std::function<const char*(const char*)>& getenv_fn, VerbsConfig* c) {
  if (const char* v = getenv_fn("BRAID_VERBS_BACKEND"); v && *v) {
    absl::StatusOr<BackendKind> b = ParseBackend(v);
    if (!b.ok()) return Bad("BRAID_VERBS_BACKEND", v, "udp, dpdk or verbs_ud");
    c->backend = *b;
  }
  const std::pair<const char*, std::string*> text[] = {
      {"BRAID_VERBS_DPDK_EAL", &c->dpdk.eal_args},
      {"BRAID_VERBS_DPDK_PORT", &c->dpdk.port},
      {"BRAID_VERBS_DPDK_NEXT_HOP_MAC", &c->dpdk.next_hop_mac},
      {"BRAID_VERBS_DPDK_GATEWAY", &c->dpdk.gateway},
      {"BRAID_VERBS_DPDK_LOCAL_MAC", &c->dpdk.local_mac},
  };
  bool any = false;
  for (const auto& [var, out] : text) {
    if (const char* v = getenv_fn(var); v && *v) {
      *out = v;
      any = true;
    }
  }
  if (const char* v = getenv_fn("BRAID_VERBS_DPDK_PREFIX_LEN"); v && *v) {
    uint64_t x = 0;
    if (absl::Status s = ParseUint("BRAID_VERBS_DPDK_PREFIX_LEN", v, 1, 32, &x);
        !s.ok()) {
      return s;
    }
    c->dpdk.prefix_len = static_cast<uint32_t>(x);
    any = true;
  }
  if (any && c->backend != BackendKind::kDpdk) {
    return absl::InvalidArgumentError(
        "BRAID_VERBS_DPDK_* is set but BRAID_VERBS_BACKEND is not dpdk");
  }
  return LoadVerbsUd(getenv_fn, c);
}

// BRAID_VERBS_SECURITY and BRAID_VERBS_KEY_FILE.
absl::Status LoadSecurity(
    const std::function<const char*(const char*)>& getenv_fn, VerbsConfig* c) {
  if (const char* v = getenv_fn("BRAID_VERBS_SECURITY"); v && *v) {
    absl::StatusOr<SecurityMode> m = ParseSecurityMode(v);
    if (!m.ok()) return Bad("BRAID_VERBS_SECURITY", v, "none, auth or encrypt");
    c->security.mode = *m;
  }
  const char* file = getenv_fn("BRAID_VERBS_KEY_FILE");
  const bool has_file = file != nullptr && *file != 0;
  if (c->security.mode == SecurityMode::kNone) {
    if (has_file) {
      return absl::InvalidArgumentError(
          "BRAID_VERBS_KEY_FILE is set but BRAID_VERBS_SECURITY is not auth "
          "or encrypt");
    }
    return absl::OkStatus();
  }
  if (!has_file) {
    return absl::InvalidArgumentError(absl::StrCat(
        "BRAID_VERBS_SECURITY=", SecurityModeName(c->security.mode),
        " needs BRAID_VERBS_KEY_FILE (the security domain key)"));
  }
  absl::StatusOr<std::string> key = LoadDomainKey(file);
  if (!key.ok()) {
    return absl::Status(
        key.status().code(),
        absl::StrCat("BRAID_VERBS_KEY_FILE: ", key.status().message()));
  }
  c->security.domain_key = *std::move(key);
  return absl::OkStatus();
}

}  // namespace

EndpointOptions VerbsConfig::ToEndpointOptions(uint16_t port) const {
  EndpointOptions o;
  o.bind = NetAddr::Ipv4(bind_ipv4, port).ToString();
  o.mtu = mtu;
  o.protocol.mode = mode;
  o.protocol.paths = paths;
  o.udp.entropy_sockets = entropy_sockets;
  o.protocol.cc = cc;
  o.backend = backend;
  o.dpdk = dpdk;
  o.ud = ud;
  o.security = security;
  return o;
}

TestImpairments VerbsConfig::ToImpairments() const {
  TestImpairments i;
  if (loss > 0) {
    i.drop = loss;
    i.seed = seed;
  }
  return i;
}

absl::StatusOr<std::unique_ptr<Endpoint>> VerbsConfig::OpenEndpoint(
    uint16_t port) const {
  return OpenEndpointForTesting(ToEndpointOptions(port), ToImpairments());
}

absl::StatusOr<VerbsConfig> LoadConfig(
    const std::function<const char*(const char*)>& getenv_fn,
    const std::string& device_name) {
  VerbsConfig c;
  c.device_name = device_name;
  if (const char* v = getenv_fn("BRAID_VERBS_DISABLE"); v && *v) {
    c.disabled = absl::string_view(v) != "0";
  }
  if (const char* v = getenv_fn("BRAID_VERBS_BIND"); v && *v) {
    in_addr a{};
    if (inet_pton(AF_INET, v, &a) != 1) {
      return Bad("BRAID_VERBS_BIND", v,
                 "an IPv4 address such as 127.0.0.1 (braid0 GIDs encode "
                 "IPv4 + port)");
    }
    c.bind_ipv4 = ntohl(a.s_addr);
    if (c.bind_ipv4 == 0) {
      return Bad("BRAID_VERBS_BIND", v, "a unicast IPv4 address, not 0.0.0.0");
    }
  }
  uint64_t x = 0;
  if (const char* v = getenv_fn("BRAID_VERBS_PORT_BASE"); v && *v) {
    if (absl::Status s = ParseUint("BRAID_VERBS_PORT_BASE", v, 1, 0xBFFF, &x);
        !s.ok()) {
      return s;
    }
    c.port_base = static_cast<uint16_t>(x);
  }
  if (const char* v = getenv_fn("BRAID_VERBS_PORT_COUNT"); v && *v) {
    if (absl::Status s = ParseUint("BRAID_VERBS_PORT_COUNT", v, 1, 0xBFFF, &x);
        !s.ok()) {
      return s;
    }
    c.port_count = static_cast<uint16_t>(x);
  }
  if (uint32_t{c.port_base} + c.port_count - 1 > 0xBFFF) {
    c.port_count = static_cast<uint16_t>(0xC000 - c.port_base);
  }
  if (const char* v = getenv_fn("BRAID_VERBS_PATHS"); v && *v) {
    if (absl::Status s = ParseUint("BRAID_VERBS_PATHS", v, 1, 256, &x);
        !s.ok()) {
      return s;
    }
    c.paths = static_cast<uint16_t>(x);
  }
  if (const char* v = getenv_fn("BRAID_VERBS_ENTROPY_SOCKETS"); v && *v) {
    if (absl::Status s =
            ParseUint("BRAID_VERBS_ENTROPY_SOCKETS", v, 1, 256, &x);
        !s.ok()) {
      return s;
    }
    c.entropy_sockets = static_cast<uint16_t>(x);
  }
  if (const char* v = getenv_fn("BRAID_VERBS_MODE"); v && *v) {
    absl::StatusOr<Mode> m = ParseMode(v);
    if (!m.ok()) return Bad("BRAID_VERBS_MODE", v, "spray or gbn");
    c.mode = *m;
  }
  if (const char* v = getenv_fn("BRAID_VERBS_CC"); v && *v) {
    absl::StatusOr<CcAlgorithm> m = ParseCc(v);
    if (!m.ok()) return Bad("BRAID_VERBS_CC", v, "swift or none");
    c.cc = *m;
  }
  if (const char* v = getenv_fn("BRAID_VERBS_MTU"); v && *v) {
    if (absl::Status s = ParseUint("BRAID_VERBS_MTU", v, 576, 65535, &x);
        !s.ok()) {
      return s;
    }
    c.mtu = static_cast<uint32_t>(x);
  }
  if (const char* v = getenv_fn("BRAID_VERBS_LOSS"); v && *v) {
    absl::string_view s = absl::StripAsciiWhitespace(v);
    const bool percent = absl::ConsumeSuffix(&s, "%");
    double d = 0;
    if (!absl::SimpleAtod(s, &d) || !(d >= 0)) {
      return Bad("BRAID_VERBS_LOSS", v,
                 "a drop probability 0..0.5 or a percentage 0%..50%");
    }
    if (percent) d /= 100.0;
    if (d > 0.5) {
      return Bad("BRAID_VERBS_LOSS", v,
                 "a drop probability 0..0.5 or a percentage 0%..50%");
    }
    c.loss = d;
  }
  if (const char* v = getenv_fn("BRAID_VERBS_SEED"); v && *v) {
    if (absl::Status s = ParseUint("BRAID_VERBS_SEED", v, 0, UINT64_MAX, &x);
        !s.ok()) {
      return s;
    }
    c.seed = x;
  }
  if (const char* v = getenv_fn("BRAID_VERBS_MIN_ACK_TIMEOUT_MS"); v && *v) {
    if (absl::Status s =
            ParseUint("BRAID_VERBS_MIN_ACK_TIMEOUT_MS", v, 0, 3600000, &x);
        !s.ok()) {
      return s;
    }
    c.min_ack_timeout = DurationNs::Millis(static_cast<int64_t>(x));
  }
  if (absl::Status s = LoadBackend(getenv_fn, &c); !s.ok()) return s;
  if (absl::Status s = LoadSecurity(getenv_fn, &c); !s.ok()) return s;
  c.progress_spin =
      CpusAvailable() >= 4 ? DurationNs::Micros(50) : DurationNs::Zero();
  if (const char* v = getenv_fn("BRAID_VERBS_SPIN_US"); v && *v) {
    if (absl::Status s = ParseUint("BRAID_VERBS_SPIN_US", v, 0, 1000000, &x);
        !s.ok()) {
      return s;
    }
    c.progress_spin = DurationNs::Micros(static_cast<int64_t>(x));
  }
  return c;
}

}  // namespace braid::verbs_compat
