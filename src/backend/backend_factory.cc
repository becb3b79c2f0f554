#include "backend/backend_factory.h"

#include <algorithm>
#include <cstdint>
#include <random>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "backend/entropy_count.h"
#include "backend/udp/udp_backend.h"
#ifdef BRAID_HAVE_DPDK
#include "backend/dpdk/dpdk_backend.h"
#include "backend/dpdk/dpdk_options.h"
#endif
#ifdef BRAID_HAVE_VERBS_UD
#include "backend/verbs_ud/verbs_ud_backend.h"
#endif

namespace braid {

absl::StatusOr<BackendKind> ParseBackend(absl::string_view s) {
  if (s == "udp") return BackendKind::kUdp;
  if (s == "dpdk") return BackendKind::kDpdk;
  if (s == "verbs_ud") return BackendKind::kVerbsUd;
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown backend '", s, "' (expected udp, dpdk or verbs_ud)"));
}

const char* BackendName(BackendKind b) {
  switch (b) {
    case BackendKind::kUdp:
      return "udp";
    case BackendKind::kDpdk:
      return "dpdk";
    case BackendKind::kVerbsUd:
      return "verbs_ud";
  }
  return "unknown";
}

namespace backend {
namespace {

// The kernel-UDP backend's settings from the endpoint's options.
UdpOptions UdpOptionsFrom(const EndpointOptions& options, const NetAddr& bind) {
  UdpOptions uo;
  uo.bind = bind;
  uo.src_port_base = options.udp.src_port_base;
  uo.num_entropies = options.udp.entropy_sockets
                         ? options.udp.entropy_sockets
                         : DefaultEntropyCount(options.protocol);
  const uint32_t ip_hdr = bind.family == NetAddr::Family::kIpv6 ? 40 : 20;
  uo.mtu_payload = options.mtu - ip_hdr - 8;
  uo.gso = options.udp.gso;
  uo.gro = options.udp.gro;
  uo.ecn = options.udp.ecn;
  uo.rx_timestamps = options.udp.rx_timestamps == RxTimestamps::kAlways;
  uo.sndbuf = options.udp.sndbuf_bytes;
  uo.rcvbuf = options.udp.rcvbuf_bytes;
  uo.connect = options.udp.connect_sockets;
  return uo;
}

[[maybe_unused]] absl::Status NotBuilt(BackendKind kind) {
  return absl::UnimplementedError(
      absl::StrCat("EndpointOptions.backend: the ", BackendName(kind),
                   " backend is not built into this braid (build option ",
                   BackendBuildOption(kind),
                   kind == BackendKind::kDpdk
                       ? "; it is built when pkg-config finds libdpdk)"
                       : "; it is built when pkg-config finds libibverbs)"));
}

}  // namespace

const char* BackendBuildOption(BackendKind kind) {
  switch (kind) {
    case BackendKind::kUdp:
      return "";
    case BackendKind::kDpdk:
      return "BRAID_BACKEND_DPDK";
    case BackendKind::kVerbsUd:
      return "BRAID_BACKEND_VERBS_UD";
  }
  return "";
}

bool BackendBuilt(BackendKind kind) {
  switch (kind) {
    case BackendKind::kUdp:
      return true;
    case BackendKind::kDpdk:
#ifdef BRAID_HAVE_DPDK
      return true;
#else
      return false;
#endif
    case BackendKind::kVerbsUd:
#ifdef BRAID_HAVE_VERBS_UD
      return true;
#else
      return false;
#endif
  }
  return false;
}

absl::StatusOr<std::unique_ptr<Backend>> MakeBackend(
    const EndpointOptions& options, const NetAddr& bind) {
  switch (options.backend) {
    case BackendKind::kUdp: {
      absl::StatusOr<std::unique_ptr<UdpBackend>> udp =
          UdpBackend::Open(UdpOptionsFrom(options, bind));
      if (!udp.ok()) return udp.status();
      return std::unique_ptr<Backend>(std::move(*udp));
    }
    case BackendKind::kDpdk:
#ifdef BRAID_HAVE_DPDK
    {
      absl::StatusOr<dpdk::DpdkOptions> o = dpdk::DpdkOptionsFrom(
          options, bind,
          options.seed != 0 ? options.seed : std::random_device{}());
      if (!o.ok()) return o.status();
      absl::StatusOr<std::unique_ptr<dpdk::DpdkBackend>> be =
          dpdk::DpdkBackend::Open(*o);
      if (!be.ok()) return be.status();
      return std::unique_ptr<Backend>(std::move(*be));
    }
#else
      return NotBuilt(options.backend);
#endif
    case BackendKind::kVerbsUd:
#ifdef BRAID_HAVE_VERBS_UD
    {
      absl::StatusOr<std::unique_ptr<VerbsUdBackend>> be = VerbsUdBackend::Open(
          options.ud, DefaultEntropyCount(options.protocol), options.udp.ecn);
      if (!be.ok()) return be.status();
      return std::unique_ptr<Backend>(std::move(*be));
    }
#else
      return NotBuilt(options.backend);
#endif
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "EndpointOptions.backend: ", static_cast<int>(options.backend),
      " names no backend"));
}

}  // namespace backend
}  // namespace braid
